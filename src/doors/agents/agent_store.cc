// The role's statements are written once, with `?` parameters in order, and run on either
// engine through SqlSession: the dialects agree on everything used here (RETURNING, ON CONFLICT
// is not needed, LIMIT with a parameter). Values are bound typed, so SQLite compares integers
// as integers.
#include "doors/agents/agent_store.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <unordered_map>
#include <variant>

#include "store/postgres/pg.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::agents {

using SqlValue = std::variant<std::monostate, int64_t, std::string_view>;

// A result's rows as text (NULL as empty, which no column here tells apart from "").
struct SqlRows {
  size_t columns = 0;
  std::vector<std::string> cells;
  size_t size() const { return columns == 0 ? 0 : cells.size() / columns; }
  const std::string& Text(size_t row, size_t column) const { return cells[row * columns + column]; }
  int64_t Int(size_t row, size_t column) const {
    return std::strtoll(Text(row, column).c_str(), nullptr, 10);
  }
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;
  virtual Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                              bool write) = 0;
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
};

namespace {

constexpr std::array<std::string_view, 2> kSqlite = {
    "CREATE TABLE agents (id TEXT NOT NULL, version INTEGER NOT NULL, tenant_id TEXT NOT NULL, "
    "spec TEXT NOT NULL, created_at INTEGER NOT NULL, deleted_at INTEGER, "
    "PRIMARY KEY (id, version));"
    "CREATE INDEX agents_by_tenant ON agents (tenant_id, id);"
    "CREATE TABLE conversations (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "metadata TEXT NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE conversation_items (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "id TEXT NOT NULL UNIQUE, item TEXT NOT NULL, response_id TEXT, created_at INTEGER NOT NULL, "
    "PRIMARY KEY (conversation_id, seq));"
    "CREATE TABLE agent_responses (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "conversation_id TEXT, agent_id TEXT NOT NULL, agent_version INTEGER NOT NULL, "
    "status TEXT NOT NULL, body TEXT NOT NULL, input_items TEXT NOT NULL, "
    "context TEXT NOT NULL, previous_response_id TEXT, created_at INTEGER NOT NULL)",
    // Version 2: a background turn's stream (its SSE events), for resuming it once it ended.
    "ALTER TABLE agent_responses ADD COLUMN events TEXT"};
constexpr std::array<std::string_view, 2> kPostgres = {
    "CREATE TABLE agents (id TEXT NOT NULL, version BIGINT NOT NULL, tenant_id TEXT NOT NULL, "
    "spec TEXT NOT NULL, created_at BIGINT NOT NULL, deleted_at BIGINT, "
    "PRIMARY KEY (id, version));"
    "CREATE INDEX agents_by_tenant ON agents (tenant_id, id);"
    "CREATE TABLE conversations (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "metadata TEXT NOT NULL, created_at BIGINT NOT NULL);"
    "CREATE TABLE conversation_items (conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, "
    "id TEXT NOT NULL UNIQUE, item TEXT NOT NULL, response_id TEXT, created_at BIGINT NOT NULL, "
    "PRIMARY KEY (conversation_id, seq));"
    "CREATE TABLE agent_responses (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "conversation_id TEXT, agent_id TEXT NOT NULL, agent_version BIGINT NOT NULL, "
    "status TEXT NOT NULL, body TEXT NOT NULL, input_items TEXT NOT NULL, "
    "context TEXT NOT NULL, previous_response_id TEXT, created_at BIGINT NOT NULL)",
    "ALTER TABLE agent_responses ADD COLUMN events TEXT"};
constexpr std::array<std::string_view, 2> kPurposes = {"agent_read", "agent_write"};

// Parameters and result columns are listed beside each statement, in order.
// id, version, tenant_id, spec, created_at.
constexpr std::string_view kInsertAgent =
    "INSERT INTO agents (id, version, tenant_id, spec, created_at) VALUES (?, ?, ?, ?, ?)";
// id, id -> spec.
constexpr std::string_view kLatestAgent =
    "SELECT spec FROM agents WHERE id = ? AND deleted_at IS NULL AND version = "
    "(SELECT MAX(version) FROM agents WHERE id = ?)";
// id, version -> spec.
constexpr std::string_view kAgentVersion =
    "SELECT spec FROM agents WHERE id = ? AND version = ? AND deleted_at IS NULL";
// tenant, tenant -> spec (the latest of each).
constexpr std::string_view kListAgents =
    "SELECT a.spec FROM agents a WHERE a.deleted_at IS NULL AND (? = '' OR a.tenant_id = ?) AND "
    "a.version = (SELECT MAX(b.version) FROM agents b WHERE b.id = a.id) ORDER BY a.id";
// now, id -> id.
constexpr std::string_view kDeleteAgent =
    "UPDATE agents SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id";

// id, tenant_id, metadata, created_at.
constexpr std::string_view kInsertConversation =
    "INSERT INTO conversations (id, tenant_id, metadata, created_at) VALUES (?, ?, ?, ?)";
// id -> id, tenant_id, metadata, created_at.
constexpr std::string_view kSelectConversation =
    "SELECT id, tenant_id, metadata, created_at FROM conversations WHERE id = ?";
// metadata, id -> id.
constexpr std::string_view kUpdateConversation =
    "UPDATE conversations SET metadata = ? WHERE id = ? RETURNING id";
// id.
constexpr std::string_view kDeleteItems =
    "DELETE FROM conversation_items WHERE conversation_id = ?";
// id -> id.
constexpr std::string_view kDeleteConversation =
    "DELETE FROM conversations WHERE id = ? RETURNING id";

// conversation, id, item, response_id, created_at, conversation -> seq.
constexpr std::string_view kInsertItem =
    "INSERT INTO conversation_items (conversation_id, seq, id, item, response_id, created_at) "
    "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM conversation_items "
    "WHERE conversation_id = ? RETURNING seq";
// conversation, after-id, after-id, limit.
constexpr std::string_view kItemsAscending =
    "SELECT seq, id, item, response_id, created_at FROM conversation_items "
    "WHERE conversation_id = ? AND (? = '' OR seq > (SELECT seq FROM conversation_items "
    "WHERE id = ?)) ORDER BY seq LIMIT ?";
constexpr std::string_view kItemsDescending =
    "SELECT seq, id, item, response_id, created_at FROM conversation_items "
    "WHERE conversation_id = ? AND (? = '' OR seq < (SELECT seq FROM conversation_items "
    "WHERE id = ?)) ORDER BY seq DESC LIMIT ?";
// conversation, id.
constexpr std::string_view kSelectItem =
    "SELECT seq, id, item, response_id, created_at FROM conversation_items "
    "WHERE conversation_id = ? AND id = ?";
constexpr std::string_view kDeleteItem =
    "DELETE FROM conversation_items WHERE conversation_id = ? AND id = ? RETURNING id";

// id, tenant_id, conversation_id, agent_id, agent_version, status, body, input_items, context,
// previous_response_id, created_at.
constexpr std::string_view kInsertResponse =
    "INSERT INTO agent_responses (id, tenant_id, conversation_id, agent_id, agent_version, "
    "status, body, input_items, context, previous_response_id, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
// id -> the same columns.
constexpr std::string_view kSelectResponse =
    "SELECT id, tenant_id, conversation_id, agent_id, agent_version, status, body, input_items, "
    "context, previous_response_id, created_at FROM agent_responses WHERE id = ?";
// status, body, context, events, id -> id (a background turn's end; an orphan's failure).
constexpr std::string_view kUpdateResponse =
    "UPDATE agent_responses SET status = ?, body = ?, context = ?, events = ? WHERE id = ? "
    "RETURNING id";
// id -> tenant_id, status, events (NULL: no stream kept).
constexpr std::string_view kSelectResponseEvents =
    "SELECT tenant_id, status, events FROM agent_responses WHERE id = ?";
// (none) -> id, body, context: the turns that had not ended.
constexpr std::string_view kSelectUnended =
    "SELECT id, body, context FROM agent_responses WHERE status IN ('queued', 'in_progress')";
constexpr std::string_view kDeleteResponse =
    "DELETE FROM agent_responses WHERE id = ? RETURNING id";

SqlValue Nullable(std::string_view text) { return text.empty() ? SqlValue{} : SqlValue{text}; }

class SqliteSession final : public SqlSession {
 public:
  SqliteSession(store::sqlite::Database& db, store::RoleOps ops)
      : db_(db), read_(ops[0]), write_(ops[1]) {}

  Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                      bool write) override {
    Result<store::sqlite::Statement> q = db_.Prepare(sql, write ? write_ : read_);
    if (!q.ok()) return q.error();
    int i = 1;
    for (const SqlValue& p : params) {
      if (const int64_t* n = std::get_if<int64_t>(&p)) {
        q->Bind(i, *n);
      } else if (const std::string_view* t = std::get_if<std::string_view>(&p)) {
        q->Bind(i, *t);
      } else {
        q->BindNull(i);
      }
      ++i;
    }
    SqlRows rows;
    Result<bool> row = q->Step();
    for (; row.ok() && row.value(); row = q->Step()) {
      rows.columns = static_cast<size_t>(q->columns());
      for (int c = 0; c < q->columns(); ++c) rows.cells.push_back(q->Text(c));
    }
    if (!row.ok()) return row.error();
    return rows;
  }
  Status Begin() override { return db_.Begin(); }
  Status Commit() override { return db_.Commit(); }
  void Rollback() override { db_.Rollback(); }

 private:
  store::sqlite::Database& db_;
  const store::StoreOp read_;
  const store::StoreOp write_;
};

class PostgresSession final : public SqlSession {
 public:
  PostgresSession(store::postgres::Connection& db, store::RoleOps ops)
      : db_(db), read_(ops[0]), write_(ops[1]) {}

  Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                      bool write) override {
    store::postgres::Params values;
    for (const SqlValue& p : params) {
      if (const int64_t* n = std::get_if<int64_t>(&p)) {
        values.Add(*n);
      } else if (const std::string_view* t = std::get_if<std::string_view>(&p)) {
        values.Add(*t);
      } else {
        values.AddNull();
      }
    }
    Result<store::postgres::Rows> rows = db_.Run(NumberedOnce(sql), values, write ? write_ : read_);
    if (!rows.ok()) return rows.error();
    SqlRows out;
    out.columns = static_cast<size_t>(rows->columns());
    for (int r = 0; r < rows->size(); ++r) {
      for (int c = 0; c < rows->columns(); ++c) out.cells.push_back(rows->Text(r, c));
    }
    return out;
  }
  Status Begin() override { return db_.Script("BEGIN", store::StoreOp::kTransaction); }
  Status Commit() override { return db_.Script("COMMIT", store::StoreOp::kTransaction); }
  void Rollback() override { (void)db_.Script("ROLLBACK", store::StoreOp::kTransaction); }

 private:
  // The statements are the constants above: numbered once per session, by address.
  const std::string& NumberedOnce(std::string_view sql) {
    auto [it, added] = numbered_.try_emplace(sql.data());
    if (added) it->second = store::postgres::Numbered(sql);
    return it->second;
  }

  store::postgres::Connection& db_;
  const store::StoreOp read_;
  const store::StoreOp write_;
  std::unordered_map<const char*, std::string> numbered_;
};

Result<std::vector<Agent>> AgentsOf(const SqlRows& rows) {
  std::vector<Agent> agents;
  for (size_t r = 0; r < rows.size(); ++r) {
    Result<Agent> agent = AgentFromStored(rows.Text(r, 0));
    if (!agent.ok()) return agent.error();
    agents.push_back(std::move(agent.value()));
  }
  return agents;
}

std::vector<ItemRow> ItemsOf(const SqlRows& rows) {
  std::vector<ItemRow> items;
  items.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    items.push_back(
        {rows.Int(r, 0), rows.Text(r, 1), rows.Text(r, 2), rows.Text(r, 3), rows.Int(r, 4)});
  }
  return items;
}

Result<bool> Changed(Result<SqlRows> rows) {
  if (!rows.ok()) return rows.error();
  return rows->size() > 0;
}

// Runs `body` between Begin and Commit; rolls back when it or the commit fails.
template <typename T, typename Body>
Result<T> InTransaction(SqlSession& sql, Body&& body) {
  if (Status begun = sql.Begin(); !begun.ok()) return begun.error();
  Result<T> done = body();
  if (!done.ok()) {
    sql.Rollback();
    return done;
  }
  if (Status committed = sql.Commit(); !committed.ok()) {
    sql.Rollback();
    return committed.error();
  }
  return done;
}

}  // namespace

AgentStore::AgentStore(std::unique_ptr<SqlSession> session) : sql_(std::move(session)) {}
AgentStore::~AgentStore() = default;

Status AgentStore::PutAgent(const Agent& agent) {
  const std::string spec = RenderAgent(agent);
  Result<SqlRows> rows =
      sql_->Run(kInsertAgent,
                {std::string_view(agent.id), agent.version, std::string_view(agent.tenant),
                 std::string_view(spec), agent.updated_at},
                true);
  if (!rows.ok()) return rows.error();
  return Ok{};
}

Result<std::optional<Agent>> AgentStore::GetAgent(std::string_view id, int64_t version) {
  Result<SqlRows> rows = version == 0 ? sql_->Run(kLatestAgent, {id, id}, false)
                                      : sql_->Run(kAgentVersion, {id, version}, false);
  if (!rows.ok()) return rows.error();
  Result<std::vector<Agent>> agents = AgentsOf(*rows);
  if (!agents.ok()) return agents.error();
  if (agents->empty()) return std::optional<Agent>();
  return std::optional<Agent>(std::move(agents->front()));
}

Result<std::vector<Agent>> AgentStore::ListAgents(std::string_view tenant) {
  Result<SqlRows> rows = sql_->Run(kListAgents, {tenant, tenant}, false);
  if (!rows.ok()) return rows.error();
  return AgentsOf(*rows);
}

Result<bool> AgentStore::DeleteAgent(std::string_view id, int64_t now) {
  return Changed(sql_->Run(kDeleteAgent, {now, id}, true));
}

Status AgentStore::CreateConversation(const ConversationRow& row,
                                      const std::vector<NewItem>& items) {
  Result<bool> done = InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    Result<SqlRows> inserted = sql_->Run(kInsertConversation,
                                         {std::string_view(row.id), std::string_view(row.tenant),
                                          std::string_view(row.metadata), row.created_at},
                                         true);
    if (!inserted.ok()) return inserted.error();
    Result<std::vector<ItemRow>> added = InsertItems(row.id, items, "", row.created_at);
    if (!added.ok()) return added.error();
    return true;
  });
  if (!done.ok()) return done.error();
  return Ok{};
}

Result<std::optional<ConversationRow>> AgentStore::GetConversation(std::string_view id) {
  Result<SqlRows> rows = sql_->Run(kSelectConversation, {id}, false);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<ConversationRow>();
  return std::optional<ConversationRow>(
      ConversationRow{rows->Text(0, 0), rows->Text(0, 1), rows->Text(0, 2), rows->Int(0, 3)});
}

Result<bool> AgentStore::UpdateConversation(std::string_view id, std::string_view metadata) {
  return Changed(sql_->Run(kUpdateConversation, {metadata, id}, true));
}

Result<bool> AgentStore::DeleteConversation(std::string_view id) {
  return InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    Result<SqlRows> items = sql_->Run(kDeleteItems, {id}, true);
    if (!items.ok()) return items.error();
    return Changed(sql_->Run(kDeleteConversation, {id}, true));
  });
}

Result<ItemPage> AgentStore::ListItems(std::string_view conversation, std::string_view after,
                                       int64_t limit, bool descending) {
  Result<SqlRows> rows = sql_->Run(descending ? kItemsDescending : kItemsAscending,
                                   {conversation, after, after, limit + 1}, false);
  if (!rows.ok()) return rows.error();
  ItemPage page;
  page.items = ItemsOf(*rows);
  if (static_cast<int64_t>(page.items.size()) > limit) {
    page.items.pop_back();
    page.has_more = true;
  }
  return page;
}

Result<std::vector<ItemRow>> AgentStore::InsertItems(std::string_view conversation,
                                                     const std::vector<NewItem>& items,
                                                     std::string_view response_id, int64_t now) {
  std::vector<ItemRow> added;
  added.reserve(items.size());
  for (const NewItem& item : items) {
    Result<SqlRows> rows =
        sql_->Run(kInsertItem,
                  {conversation, std::string_view(item.id), std::string_view(item.json),
                   Nullable(response_id), now, conversation},
                  true);
    if (!rows.ok()) return rows.error();
    added.push_back({rows->size() > 0 ? rows->Int(0, 0) : 0, item.id, item.json,
                     std::string(response_id), now});
  }
  return added;
}

Result<std::vector<ItemRow>> AgentStore::AppendItems(std::string_view conversation,
                                                     const std::vector<NewItem>& items,
                                                     int64_t now) {
  return InTransaction<std::vector<ItemRow>>(
      *sql_, [&] { return InsertItems(conversation, items, "", now); });
}

Result<std::optional<ItemRow>> AgentStore::GetItem(std::string_view conversation,
                                                   std::string_view id) {
  Result<SqlRows> rows = sql_->Run(kSelectItem, {conversation, id}, false);
  if (!rows.ok()) return rows.error();
  std::vector<ItemRow> items = ItemsOf(*rows);
  if (items.empty()) return std::optional<ItemRow>();
  return std::optional<ItemRow>(std::move(items.front()));
}

Result<bool> AgentStore::DeleteItem(std::string_view conversation, std::string_view id) {
  return Changed(sql_->Run(kDeleteItem, {conversation, id}, true));
}

Result<std::vector<ItemRow>> AgentStore::LastItems(std::string_view conversation, int64_t count) {
  Result<SqlRows> rows = sql_->Run(kItemsDescending, {conversation, "", "", count}, false);
  if (!rows.ok()) return rows.error();
  std::vector<ItemRow> items = ItemsOf(*rows);
  std::reverse(items.begin(), items.end());
  return items;
}

Result<std::vector<ItemRow>> AgentStore::SaveTurn(const TurnWrite& turn) {
  return InTransaction<std::vector<ItemRow>>(*sql_, [&]() -> Result<std::vector<ItemRow>> {
    std::vector<ItemRow> added;
    const std::string_view response_id = turn.response ? turn.response->id : std::string_view();
    if (!turn.conversation_id.empty()) {
      Result<std::vector<ItemRow>> rows =
          InsertItems(turn.conversation_id, turn.items, response_id, turn.now);
      if (!rows.ok()) return rows.error();
      added = std::move(rows.value());
    }
    if (turn.response && turn.update_response) {
      const ResponseRow& r = *turn.response;
      Result<SqlRows> rows =
          sql_->Run(kUpdateResponse,
                    {std::string_view(r.status), std::string_view(r.body),
                     std::string_view(r.context), Nullable(r.events), std::string_view(r.id)},
                    true);
      if (!rows.ok()) return rows.error();
      if (rows->size() == 0) return Error{ErrorCode::kNotFound, "the response is gone", ""};
    } else if (turn.response) {
      const ResponseRow& r = *turn.response;
      Result<SqlRows> rows = sql_->Run(
          kInsertResponse,
          {std::string_view(r.id), std::string_view(r.tenant), Nullable(r.conversation_id),
           std::string_view(r.agent_id), r.agent_version, std::string_view(r.status),
           std::string_view(r.body), std::string_view(r.input_items), std::string_view(r.context),
           Nullable(r.previous_response_id), r.created_at},
          true);
      if (!rows.ok()) return rows.error();
    }
    return added;
  });
}

Result<std::optional<ResponseRow>> AgentStore::GetResponse(std::string_view id) {
  Result<SqlRows> rows = sql_->Run(kSelectResponse, {id}, false);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<ResponseRow>();
  const SqlRows& q = *rows;
  return std::optional<ResponseRow>(
      ResponseRow{q.Text(0, 0), q.Text(0, 1), q.Text(0, 2), q.Text(0, 3), q.Int(0, 4), q.Text(0, 5),
                  q.Text(0, 6), q.Text(0, 7), q.Text(0, 8), q.Text(0, 9), q.Int(0, 10)});
}

Result<std::optional<StoredStream>> AgentStore::GetResponseEvents(std::string_view id) {
  Result<SqlRows> rows = sql_->Run(kSelectResponseEvents, {id}, false);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<StoredStream>();
  const SqlRows& q = *rows;
  return std::optional<StoredStream>(StoredStream{q.Text(0, 0), q.Text(0, 1), q.Text(0, 2)});
}

Result<int64_t> AgentStore::FailUnended(const std::function<std::string(std::string_view)>& fail) {
  return InTransaction<int64_t>(*sql_, [&]() -> Result<int64_t> {
    Result<SqlRows> rows = sql_->Run(kSelectUnended, {}, false);
    if (!rows.ok()) return rows.error();
    const SqlRows& q = *rows;
    for (size_t i = 0; i < q.size(); ++i) {
      const std::string body = fail(q.Text(i, 1));
      Result<SqlRows> updated =
          sql_->Run(kUpdateResponse,
                    {std::string_view("failed"), std::string_view(body),
                     std::string_view(q.Text(i, 2)), SqlValue{}, std::string_view(q.Text(i, 0))},
                    true);
      if (!updated.ok()) return updated.error();
    }
    return static_cast<int64_t>(q.size());
  });
}

Result<bool> AgentStore::DeleteResponse(std::string_view id) {
  return Changed(sql_->Run(kDeleteResponse, {id}, true));
}

store::RoleSpec AgentsRole() {
  store::RoleSpec spec;
  spec.schema = {"agents", {kSqlite, {}}, {kPostgres, {}}, kPurposes};
  spec.sqlite = [](store::sqlite::Database& db,
                   store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<AgentStore>(std::make_unique<SqliteSession>(db, ops));
  };
  spec.postgres = [](store::postgres::Connection& db,
                     store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<AgentStore>(std::make_unique<PostgresSession>(db, ops));
  };
  return spec;
}

}  // namespace turnpike::agents
