#include "store/sqlite/sql_session.h"

namespace turnpike::store::sqlite {
namespace {

class SqliteSession final : public SqlSession {
 public:
  explicit SqliteSession(Database& db) : db_(db) {}

  Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                      StoreOp op) override {
    Result<Statement> q = db_.Prepare(sql, op);
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
  Database& db_;
};

}  // namespace

std::unique_ptr<SqlSession> MakeSqlSession(Database& db) {
  return std::make_unique<SqliteSession>(db);
}

}  // namespace turnpike::store::sqlite
