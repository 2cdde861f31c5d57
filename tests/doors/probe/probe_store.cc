#include "probe_store.h"

#include <array>
#include <memory>

#include "store/postgres/pg.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::probe {
namespace {

constexpr std::array<std::string_view, 1> kSqlite = {
    "CREATE TABLE probe_answers (id INTEGER PRIMARY KEY AUTOINCREMENT, model TEXT NOT NULL, "
    "text TEXT NOT NULL, events INTEGER NOT NULL)"};
constexpr std::array<std::string_view, 1> kPostgres = {
    "CREATE TABLE probe_answers (id BIGSERIAL PRIMARY KEY, model TEXT NOT NULL, "
    "text TEXT NOT NULL, events BIGINT NOT NULL)"};
constexpr std::array<std::string_view, 2> kPurposes = {"probe_write", "probe_read"};

constexpr std::string_view kInsert =
    "INSERT INTO probe_answers (model, text, events) VALUES ($1, $2, $3) RETURNING id";
constexpr std::string_view kInsertSqlite =
    "INSERT INTO probe_answers (model, text, events) VALUES (?1, ?2, ?3) RETURNING id";
constexpr std::string_view kSelect =
    "SELECT id, model, text, events FROM probe_answers ORDER BY id";

class SqliteProbeStore final : public ProbeStore {
 public:
  SqliteProbeStore(store::sqlite::Database& db, store::RoleOps ops)
      : db_(db), write_(ops[0]), read_(ops[1]) {}

  Result<int64_t> Add(std::string_view model, std::string_view text, int64_t events) override {
    Result<store::sqlite::Statement> q = db_.Prepare(kInsertSqlite, write_);
    if (!q.ok()) return q.error();
    q->Bind(1, model).Bind(2, text).Bind(3, events);
    Result<bool> row = q->Step();
    if (!row.ok()) return row.error();
    if (!row.value()) return Error{ErrorCode::kInternal, "probe_answers: no id returned", ""};
    return q->Int(0);
  }

  Result<std::vector<ProbeAnswer>> List() override {
    Result<store::sqlite::Statement> q = db_.Prepare(kSelect, read_);
    if (!q.ok()) return q.error();
    std::vector<ProbeAnswer> answers;
    Result<bool> row = q->Step();
    for (; row.ok() && row.value(); row = q->Step()) {
      answers.push_back({q->Int(0), q->Text(1), q->Text(2), q->Int(3)});
    }
    if (!row.ok()) return row.error();
    return answers;
  }

 private:
  store::sqlite::Database& db_;
  const store::StoreOp write_;
  const store::StoreOp read_;
};

class PostgresProbeStore final : public ProbeStore {
 public:
  PostgresProbeStore(store::postgres::Connection& db, store::RoleOps ops)
      : db_(db), write_(ops[0]), read_(ops[1]) {}

  Result<int64_t> Add(std::string_view model, std::string_view text, int64_t events) override {
    store::postgres::Params params;
    params.Add(model).Add(text).Add(events);
    Result<store::postgres::Rows> rows = db_.Run(kInsert, params, write_);
    if (!rows.ok()) return rows.error();
    if (rows->size() != 1) return Error{ErrorCode::kInternal, "probe_answers: no id returned", ""};
    return rows->Int(0, 0);
  }

  Result<std::vector<ProbeAnswer>> List() override {
    Result<store::postgres::Rows> rows = db_.Run(kSelect, store::postgres::Params{}, read_);
    if (!rows.ok()) return rows.error();
    std::vector<ProbeAnswer> answers;
    for (int i = 0; i < rows->size(); ++i) {
      answers.push_back({rows->Int(i, 0), rows->Text(i, 1), rows->Text(i, 2), rows->Int(i, 3)});
    }
    return answers;
  }

 private:
  store::postgres::Connection& db_;
  const store::StoreOp write_;
  const store::StoreOp read_;
};

}  // namespace

store::RoleSpec ProbeRole() {
  store::RoleSpec spec;
  spec.schema = {"probe", {kSqlite, {}}, {kPostgres, {}}, kPurposes};
  spec.sqlite = [](store::sqlite::Database& db,
                   store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<SqliteProbeStore>(db, ops);
  };
  spec.postgres = [](store::postgres::Connection& db,
                     store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<PostgresProbeStore>(db, ops);
  };
  return spec;
}

}  // namespace turnpike::probe
