#include "store/postgres/sql_session.h"

#include <unordered_map>

namespace turnpike::store::postgres {
namespace {

class PostgresSession final : public SqlSession {
 public:
  explicit PostgresSession(Connection& db) : db_(db) {}

  Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                      StoreOp op) override {
    Params values;
    for (const SqlValue& p : params) {
      if (const int64_t* n = std::get_if<int64_t>(&p)) {
        values.Add(*n);
      } else if (const std::string_view* t = std::get_if<std::string_view>(&p)) {
        values.Add(*t);
      } else {
        values.AddNull();
      }
    }
    Result<Rows> rows = db_.Run(NumberedOnce(sql), values, op);
    if (!rows.ok()) return rows.error();
    SqlRows out;
    out.columns = static_cast<size_t>(rows->columns());
    for (int r = 0; r < rows->size(); ++r) {
      for (int c = 0; c < rows->columns(); ++c) out.cells.push_back(rows->Text(r, c));
    }
    return out;
  }
  Status Begin() override { return db_.Script("BEGIN", StoreOp::kTransaction); }
  Status Commit() override { return db_.Script("COMMIT", StoreOp::kTransaction); }
  void Rollback() override { (void)db_.Script("ROLLBACK", StoreOp::kTransaction); }

 private:
  // The statements are a role's constants (sql_session.h): numbered once, by address.
  const std::string& NumberedOnce(std::string_view sql) {
    auto [it, added] = numbered_.try_emplace(sql.data());
    if (added) it->second = Numbered(sql);
    return it->second;
  }

  Connection& db_;
  std::unordered_map<const char*, std::string> numbered_;
};

}  // namespace

std::unique_ptr<SqlSession> MakeSqlSession(Connection& db) {
  return std::make_unique<PostgresSession>(db);
}

}  // namespace turnpike::store::postgres
