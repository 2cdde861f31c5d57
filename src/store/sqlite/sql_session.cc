#include "store/sqlite/sql_session.h"

#include <map>
#include <utility>

namespace turnpike::store::sqlite {
namespace {

class SqliteSession final : public SqlSession {
 public:
  explicit SqliteSession(Database& db) : db_(db) {}

  Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                      StoreOp op) override {
    // Prepared once per text (by its address: SqlSession::Run's `sql` is a constant) and op.
    std::unique_ptr<Statement>& slot = statements_[{sql.data(), op}];
    Result<Statement*> cached = db_.Cached(slot, sql, op);
    if (!cached.ok()) return cached.error();
    Statement* q = cached.value();
    int i = 1;
    for (const SqlValue& p : params) {
      if (const int64_t* n = std::get_if<int64_t>(&p)) {
        q->Bind(i, *n);
      } else if (const std::string_view* t = std::get_if<std::string_view>(&p)) {
        q->BindView(i, *t);  // the caller's values outlive the Run
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
    q->Reset();  // unbinds: nothing dangles into the next Run
    if (!row.ok()) return row.error();
    return rows;
  }
  Status Begin() override { return db_.Begin(); }
  Status Commit() override { return db_.Commit(); }
  void Rollback() override { db_.Rollback(); }

 private:
  Database& db_;
  std::map<std::pair<const char*, StoreOp>, std::unique_ptr<Statement>> statements_;
};

}  // namespace

std::unique_ptr<SqlSession> MakeSqlSession(Database& db) {
  return std::make_unique<SqliteSession>(db);
}

}  // namespace turnpike::store::sqlite
