// SqlSession: one engine session as a portable store role sees it. A feature whose statements
// both engines accept (`?` parameters in order; RETURNING; no engine-specific syntax) writes its
// role once over this interface and registers it with RoleSpec::portable (role.h); each engine
// makes the session over its own connection (sqlite/sql_session.h, postgres/sql_session.h), so
// the feature's folder names no engine.
//
// Values are bound typed (an integer as an integer, so SQLite compares it as one); results come
// back as text (NULL as "": a role that must tell them apart does not use this interface).
// Each Run is one statement, counted under `op` (one of the role's purposes).
//
// Threads: a session is its engine session's, used only on that session's store thread.
// Errors: the engine's (kInternal; kConflict for a unique violation; kUnavailable when the
// server is down).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "store/statements.h"

namespace turnpike::store {

using SqlValue = std::variant<std::monostate, int64_t, std::string_view>;

// A NULL for an empty text.
inline SqlValue NullIfEmpty(std::string_view text) {
  return text.empty() ? SqlValue{} : SqlValue{text};
}

struct SqlRows {
  size_t columns = 0;
  std::vector<std::string> cells;  // row-major
  size_t size() const { return columns == 0 ? 0 : cells.size() / columns; }
  const std::string& Text(size_t row, size_t column) const { return cells[row * columns + column]; }
  int64_t Int(size_t row, size_t column) const {
    return std::strtoll(Text(row, column).c_str(), nullptr, 10);
  }
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;
  // `sql` is `?`-parametered text that outlives the session (a constant): an engine may keep
  // its own form of it, by address.
  virtual Result<SqlRows> Run(std::string_view sql, std::initializer_list<SqlValue> params,
                              StoreOp op) = 0;
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
};

// Runs `body` (returning Result<T>) between Begin and Commit; rolls back when it or the commit
// fails.
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

}  // namespace turnpike::store
