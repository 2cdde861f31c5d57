// The role's statements are written once, with `?` parameters in order, and run on either
// engine through store::SqlSession (a portable role, store/role.h): the dialects agree on
// everything used here (RETURNING, LIMIT with a parameter).
#include "doors/agents/agent_store.h"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace turnpike::agents {

namespace {

constexpr std::array<std::string_view, 3> kSqlite = {
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
    "ALTER TABLE agent_responses ADD COLUMN events TEXT",
    // Version 3: the retention purge's scans, oldest first.
    "CREATE INDEX agent_responses_by_age ON agent_responses (created_at);"
    "CREATE INDEX conversations_by_age ON conversations (created_at)"};
constexpr std::array<std::string_view, 3> kPostgres = {
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
    "ALTER TABLE agent_responses ADD COLUMN events TEXT",
    "CREATE INDEX agent_responses_by_age ON agent_responses (created_at);"
    "CREATE INDEX conversations_by_age ON conversations (created_at)"};
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
// id -> spec, newest first.
constexpr std::string_view kAgentVersions =
    "SELECT spec FROM agents WHERE id = ? AND deleted_at IS NULL ORDER BY version DESC";
// now, id -> id.
constexpr std::string_view kDeleteAgent =
    "UPDATE agents SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id";

// id, tenant_id, metadata, created_at.
constexpr std::string_view kInsertConversation =
    "INSERT INTO conversations (id, tenant_id, metadata, created_at) VALUES (?, ?, ?, ?)";
// id -> id, tenant_id, metadata, created_at.
constexpr std::string_view kSelectConversation =
    "SELECT id, tenant_id, metadata, created_at FROM conversations WHERE id = ?";
// tenant, tenant, limit -> id, tenant_id, metadata, created_at.
constexpr std::string_view kListConversations =
    "SELECT id, tenant_id, metadata, created_at FROM conversations WHERE (? = '' OR tenant_id = "
    "?) ORDER BY created_at DESC, id LIMIT ?";
// metadata, id -> id.
constexpr std::string_view kUpdateConversation =
    "UPDATE conversations SET metadata = ? WHERE id = ? RETURNING id";
// id.
constexpr std::string_view kDeleteItems =
    "DELETE FROM conversation_items WHERE conversation_id = ?";
// id -> id.
constexpr std::string_view kDeleteConversation =
    "DELETE FROM conversations WHERE id = ? RETURNING id";

// conversation -> its last seq (0: none).
constexpr std::string_view kLastSeq =
    "SELECT COALESCE(MAX(seq), 0) FROM conversation_items WHERE conversation_id = ?";
// conversation, seq, id, item, response_id, created_at. Neither RETURNING nor a SELECT as the
// source: SQLite runs either (RETURNING is a trigger) as a statement that may write many rows,
// so inside a transaction it keeps a statement journal, a copy of every page the insert first
// touches (a page each: with 16 KiB pages, about a quarter of a turn's cost on the store thread).
constexpr std::string_view kInsertItem =
    "INSERT INTO conversation_items (conversation_id, seq, id, item, response_id, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?)";
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
// conversation, conversation, response_id, limit -> item: the conversation's last items through
// the response's own, newest first.
constexpr std::string_view kItemsThrough =
    "SELECT item FROM conversation_items WHERE conversation_id = ? AND seq <= "
    "(SELECT MAX(seq) FROM conversation_items WHERE conversation_id = ? AND response_id = ?) "
    "ORDER BY seq DESC LIMIT ?";
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
// (none) -> id: the turns that had not ended (the fleet's sweep).
constexpr std::string_view kSelectUnendedIds =
    "SELECT id FROM agent_responses WHERE status IN ('queued', 'in_progress')";
// id -> body: one that had not ended.
constexpr std::string_view kSelectUnendedBody =
    "SELECT body FROM agent_responses WHERE id = ? AND status IN ('queued', 'in_progress')";
// body, id: failed, unless it ended meanwhile.
constexpr std::string_view kFailUnendedResponse =
    "UPDATE agent_responses SET status = 'failed', body = ? WHERE id = ? AND status IN "
    "('queued', 'in_progress') RETURNING id";
constexpr std::string_view kDeleteResponse =
    "DELETE FROM agent_responses WHERE id = ? RETURNING id";

// cutoff, limit -> id: ended responses created before the cutoff, oldest first.
constexpr std::string_view kExpiredResponses =
    "SELECT id FROM agent_responses WHERE created_at < ? AND status NOT IN ('queued', "
    "'in_progress') ORDER BY created_at LIMIT ?";
// cutoff, cutoff, limit -> id: conversations whose last activity (their creation, or their
// newest item's) is before the cutoff.
constexpr std::string_view kExpiredConversations =
    "SELECT c.id FROM conversations c WHERE c.created_at < ? AND COALESCE((SELECT i.created_at "
    "FROM conversation_items i WHERE i.conversation_id = c.id ORDER BY i.seq DESC LIMIT 1), 0) "
    "< ? ORDER BY c.created_at LIMIT ?";
// month -> agent_id, spent: the call log's cost per agent in a month ("YYYY-MM").
constexpr std::string_view kAgentSpend =
    "SELECT agent_id, SUM(cost_micros) FROM call_log WHERE month = ? AND agent_id <> '' "
    "GROUP BY agent_id";

Result<std::vector<Agent>> AgentsOf(const store::SqlRows& rows) {
  std::vector<Agent> agents;
  for (size_t r = 0; r < rows.size(); ++r) {
    Result<Agent> agent = AgentFromStored(rows.Text(r, 0));
    if (!agent.ok()) return agent.error();
    agents.push_back(std::move(agent.value()));
  }
  return agents;
}

std::vector<ItemRow> ItemsOf(const store::SqlRows& rows) {
  std::vector<ItemRow> items;
  items.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    items.push_back(
        {rows.Int(r, 0), rows.Text(r, 1), rows.Text(r, 2), rows.Text(r, 3), rows.Int(r, 4)});
  }
  return items;
}

Result<bool> Changed(Result<store::SqlRows> rows) {
  if (!rows.ok()) return rows.error();
  return rows->size() > 0;
}

}  // namespace

AgentStore::AgentStore(std::unique_ptr<store::SqlSession> session, store::RoleOps ops)
    : sql_(std::move(session)), read_(ops[0]), write_(ops[1]) {}
AgentStore::~AgentStore() = default;

Status AgentStore::PutAgent(const Agent& agent) {
  const std::string spec = RenderAgent(agent);
  Result<store::SqlRows> rows =
      sql_->Run(kInsertAgent,
                {std::string_view(agent.id), agent.version, std::string_view(agent.tenant),
                 std::string_view(spec), agent.updated_at},
                write_);
  if (!rows.ok()) return rows.error();
  return Ok{};
}

Result<std::optional<Agent>> AgentStore::GetAgent(std::string_view id, int64_t version) {
  Result<store::SqlRows> rows = version == 0 ? sql_->Run(kLatestAgent, {id, id}, read_)
                                             : sql_->Run(kAgentVersion, {id, version}, read_);
  if (!rows.ok()) return rows.error();
  Result<std::vector<Agent>> agents = AgentsOf(*rows);
  if (!agents.ok()) return agents.error();
  if (agents->empty()) return std::optional<Agent>();
  return std::optional<Agent>(std::move(agents->front()));
}

Result<std::vector<Agent>> AgentStore::ListAgents(std::string_view tenant) {
  Result<store::SqlRows> rows = sql_->Run(kListAgents, {tenant, tenant}, read_);
  if (!rows.ok()) return rows.error();
  return AgentsOf(*rows);
}

Result<std::vector<Agent>> AgentStore::ListVersions(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kAgentVersions, {id}, read_);
  if (!rows.ok()) return rows.error();
  return AgentsOf(*rows);
}

Result<bool> AgentStore::DeleteAgent(std::string_view id, int64_t now) {
  return Changed(sql_->Run(kDeleteAgent, {now, id}, write_));
}

Status AgentStore::CreateConversation(const ConversationRow& row,
                                      const std::vector<NewItem>& items) {
  Result<bool> done = store::InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    Result<store::SqlRows> inserted =
        sql_->Run(kInsertConversation,
                  {std::string_view(row.id), std::string_view(row.tenant),
                   std::string_view(row.metadata), row.created_at},
                  write_);
    if (!inserted.ok()) return inserted.error();
    Result<std::vector<ItemRow>> added = InsertItems(row.id, items, "", row.created_at);
    if (!added.ok()) return added.error();
    return true;
  });
  if (!done.ok()) return done.error();
  return Ok{};
}

Result<std::optional<ConversationRow>> AgentStore::GetConversation(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectConversation, {id}, read_);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<ConversationRow>();
  return std::optional<ConversationRow>(
      ConversationRow{rows->Text(0, 0), rows->Text(0, 1), rows->Text(0, 2), rows->Int(0, 3)});
}

Result<std::vector<ConversationRow>> AgentStore::ListConversations(std::string_view tenant,
                                                                   int64_t limit) {
  Result<store::SqlRows> rows = sql_->Run(kListConversations, {tenant, tenant, limit}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<ConversationRow> out;
  for (size_t r = 0; r < rows->size(); ++r) {
    out.push_back(
        ConversationRow{rows->Text(r, 0), rows->Text(r, 1), rows->Text(r, 2), rows->Int(r, 3)});
  }
  return out;
}

Result<bool> AgentStore::UpdateConversation(std::string_view id, std::string_view metadata) {
  return Changed(sql_->Run(kUpdateConversation, {metadata, id}, write_));
}

Result<bool> AgentStore::DeleteConversation(std::string_view id) {
  return store::InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    Result<store::SqlRows> items = sql_->Run(kDeleteItems, {id}, write_);
    if (!items.ok()) return items.error();
    return Changed(sql_->Run(kDeleteConversation, {id}, write_));
  });
}

Result<ItemPage> AgentStore::ListItems(std::string_view conversation, std::string_view after,
                                       int64_t limit, bool descending) {
  Result<store::SqlRows> rows = sql_->Run(descending ? kItemsDescending : kItemsAscending,
                                          {conversation, after, after, limit + 1}, read_);
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
  if (items.empty()) return added;
  added.reserve(items.size());
  // The last seq is read once; the transaction (one writer per conversation: its turn slot,
  // and the control lane) keeps it current.
  Result<store::SqlRows> last = sql_->Run(kLastSeq, {conversation}, write_);
  if (!last.ok()) return last.error();
  int64_t seq = last->size() > 0 ? last->Int(0, 0) : 0;
  for (const NewItem& item : items) {
    ++seq;
    Result<store::SqlRows> rows =
        sql_->Run(kInsertItem,
                  {conversation, seq, std::string_view(item.id), std::string_view(item.json),
                   store::NullIfEmpty(response_id), now},
                  write_);
    if (!rows.ok()) return rows.error();
    added.push_back({seq, item.id, item.json, std::string(response_id), now});
  }
  return added;
}

Result<std::vector<ItemRow>> AgentStore::AppendItems(std::string_view conversation,
                                                     const std::vector<NewItem>& items,
                                                     int64_t now) {
  return store::InTransaction<std::vector<ItemRow>>(
      *sql_, [&] { return InsertItems(conversation, items, "", now); });
}

Result<std::optional<ItemRow>> AgentStore::GetItem(std::string_view conversation,
                                                   std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectItem, {conversation, id}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<ItemRow> items = ItemsOf(*rows);
  if (items.empty()) return std::optional<ItemRow>();
  return std::optional<ItemRow>(std::move(items.front()));
}

Result<bool> AgentStore::DeleteItem(std::string_view conversation, std::string_view id) {
  return Changed(sql_->Run(kDeleteItem, {conversation, id}, write_));
}

Result<std::vector<ItemRow>> AgentStore::LastItems(std::string_view conversation, int64_t count) {
  Result<store::SqlRows> rows = sql_->Run(kItemsDescending, {conversation, "", "", count}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<ItemRow> items = ItemsOf(*rows);
  std::reverse(items.begin(), items.end());
  return items;
}

Result<std::vector<ItemRow>> AgentStore::WriteTurn(const TurnWrite& turn) {
  // The response first: a background turn's that is gone fails the turn before anything of it
  // is written, so that a group (SaveTurns) goes on without it.
  if (turn.response && turn.update_response) {
    const ResponseRow& r = *turn.response;
    Result<store::SqlRows> rows = sql_->Run(
        kUpdateResponse,
        {std::string_view(r.status), std::string_view(r.body), std::string_view(r.context),
         store::NullIfEmpty(r.events), std::string_view(r.id)},
        write_);
    if (!rows.ok()) return rows.error();
    if (rows->size() == 0) return Error{ErrorCode::kNotFound, "the response is gone", ""};
  } else if (turn.response) {
    const ResponseRow& r = *turn.response;
    Result<store::SqlRows> rows = sql_->Run(
        kInsertResponse,
        {std::string_view(r.id), std::string_view(r.tenant), store::NullIfEmpty(r.conversation_id),
         std::string_view(r.agent_id), r.agent_version, std::string_view(r.status),
         std::string_view(r.body), std::string_view(r.input_items), std::string_view(r.context),
         store::NullIfEmpty(r.previous_response_id), r.created_at},
        write_);
    if (!rows.ok()) return rows.error();
  }
  if (turn.conversation_id.empty()) return std::vector<ItemRow>();
  const std::string_view response_id = turn.response ? turn.response->id : std::string_view();
  return InsertItems(turn.conversation_id, turn.items, response_id, turn.now);
}

Result<std::vector<ItemRow>> AgentStore::SaveTurn(const TurnWrite& turn) {
  return store::InTransaction<std::vector<ItemRow>>(*sql_, [&] { return WriteTurn(turn); });
}

std::vector<Result<std::vector<ItemRow>>> AgentStore::SaveTurns(
    const std::vector<const TurnWrite*>& turns) {
  std::vector<Result<std::vector<ItemRow>>> saved;
  saved.reserve(turns.size());
  if (turns.size() == 1) {
    saved.push_back(SaveTurn(*turns.front()));
    return saved;
  }
  Result<bool> group = store::InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    for (const TurnWrite* turn : turns) {
      Result<std::vector<ItemRow>> one = WriteTurn(*turn);
      // A response gone is the turn's own end (nothing of it written); any other error may
      // have left the transaction unusable (PostgreSQL aborts it): the group is rolled back.
      if (!one.ok() && one.error().code != ErrorCode::kNotFound) return one.error();
      saved.push_back(std::move(one));
    }
    return true;
  });
  if (group.ok()) return saved;
  // Each turn alone, so that one turn's error is its own.
  saved.clear();
  for (const TurnWrite* turn : turns) saved.push_back(SaveTurn(*turn));
  return saved;
}

Result<std::optional<ResponseRow>> AgentStore::GetResponse(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectResponse, {id}, read_);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<ResponseRow>();
  const store::SqlRows& q = *rows;
  return std::optional<ResponseRow>(
      ResponseRow{q.Text(0, 0), q.Text(0, 1), q.Text(0, 2), q.Text(0, 3), q.Int(0, 4), q.Text(0, 5),
                  q.Text(0, 6), q.Text(0, 7), q.Text(0, 8), q.Text(0, 9), q.Int(0, 10)});
}

Result<std::optional<ResponseRow>> AgentStore::GetResponseContext(std::string_view id,
                                                                  int64_t count) {
  Result<std::optional<ResponseRow>> row = GetResponse(id);
  if (!row.ok() || !row.value() || !(*row)->context.empty() || (*row)->conversation_id.empty()) {
    return row;
  }
  ResponseRow& r = **row;
  Result<store::SqlRows> items =
      sql_->Run(kItemsThrough,
                {std::string_view(r.conversation_id), std::string_view(r.conversation_id),
                 std::string_view(r.id), count},
                read_);
  if (!items.ok()) return items.error();
  r.context = "[";
  for (size_t i = items->size(); i-- > 0;) {
    r.context.append(r.context.size() > 1 ? "," : "").append(items->Text(i, 0));
  }
  r.context += "]";
  return row;
}

Result<std::optional<StoredStream>> AgentStore::GetResponseEvents(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectResponseEvents, {id}, read_);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0) return std::optional<StoredStream>();
  const store::SqlRows& q = *rows;
  return std::optional<StoredStream>(StoredStream{q.Text(0, 0), q.Text(0, 1), q.Text(0, 2)});
}

Result<int64_t> AgentStore::FailUnended(const std::function<std::string(std::string_view)>& fail) {
  return store::InTransaction<int64_t>(*sql_, [&]() -> Result<int64_t> {
    Result<store::SqlRows> rows = sql_->Run(kSelectUnended, {}, read_);
    if (!rows.ok()) return rows.error();
    const store::SqlRows& q = *rows;
    for (size_t i = 0; i < q.size(); ++i) {
      const std::string body = fail(q.Text(i, 1));
      Result<store::SqlRows> updated = sql_->Run(
          kUpdateResponse,
          {std::string_view("failed"), std::string_view(body), std::string_view(q.Text(i, 2)),
           store::SqlValue{}, std::string_view(q.Text(i, 0))},
          write_);
      if (!updated.ok()) return updated.error();
    }
    return static_cast<int64_t>(q.size());
  });
}

Result<std::vector<std::string>> AgentStore::UnendedIds() {
  Result<store::SqlRows> rows = sql_->Run(kSelectUnendedIds, {}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<std::string> ids;
  for (size_t i = 0; i < rows->size(); ++i) ids.emplace_back(rows->Text(i, 0));
  return ids;
}

Result<int64_t> AgentStore::FailOrphans(const std::vector<std::string>& ids,
                                        const std::function<std::string(std::string_view)>& fail) {
  return store::InTransaction<int64_t>(*sql_, [&]() -> Result<int64_t> {
    int64_t failed = 0;
    for (const std::string& id : ids) {
      Result<store::SqlRows> row = sql_->Run(kSelectUnendedBody, {std::string_view(id)}, read_);
      if (!row.ok()) return row.error();
      if (row->size() == 0) continue;
      const std::string body = fail(row->Text(0, 0));
      Result<store::SqlRows> updated =
          sql_->Run(kFailUnendedResponse, {std::string_view(body), std::string_view(id)}, write_);
      if (!updated.ok()) return updated.error();
      failed += static_cast<int64_t>(updated->size());
    }
    return failed;
  });
}

Result<bool> AgentStore::DeleteResponse(std::string_view id) {
  return Changed(sql_->Run(kDeleteResponse, {id}, write_));
}

Result<PurgeResult> AgentStore::PurgeExpired(int64_t cutoff, int64_t limit) {
  return store::InTransaction<PurgeResult>(*sql_, [&]() -> Result<PurgeResult> {
    PurgeResult purged;
    Result<store::SqlRows> responses = sql_->Run(kExpiredResponses, {cutoff, limit}, read_);
    if (!responses.ok()) return responses.error();
    for (size_t i = 0; i < responses->size(); ++i) {
      Result<bool> deleted = DeleteResponse(responses->Text(i, 0));
      if (!deleted.ok()) return deleted.error();
      if (*deleted) purged.responses.push_back(responses->Text(i, 0));
    }
    Result<store::SqlRows> conversations =
        sql_->Run(kExpiredConversations, {cutoff, cutoff, limit}, read_);
    if (!conversations.ok()) return conversations.error();
    for (size_t i = 0; i < conversations->size(); ++i) {
      const std::string& id = conversations->Text(i, 0);
      Result<store::SqlRows> items = sql_->Run(kDeleteItems, {std::string_view(id)}, write_);
      if (!items.ok()) return items.error();
      Result<bool> deleted =
          Changed(sql_->Run(kDeleteConversation, {std::string_view(id)}, write_));
      if (!deleted.ok()) return deleted.error();
      if (*deleted) purged.conversations.push_back(id);
    }
    return purged;
  });
}

Result<std::vector<std::pair<std::string, int64_t>>> AgentStore::AgentSpend(
    std::string_view month) {
  Result<store::SqlRows> rows = sql_->Run(kAgentSpend, {month}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<std::pair<std::string, int64_t>> spend;
  for (size_t i = 0; i < rows->size(); ++i) spend.emplace_back(rows->Text(i, 0), rows->Int(i, 1));
  return spend;
}

store::RoleSpec AgentsRole() {
  store::RoleSpec spec;
  spec.schema = {"agents", {kSqlite, {}}, {kPostgres, {}}, kPurposes};
  spec.portable = [](std::unique_ptr<store::SqlSession> session,
                     store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<AgentStore>(std::move(session), ops);
  };
  return spec;
}

}  // namespace turnpike::agents
