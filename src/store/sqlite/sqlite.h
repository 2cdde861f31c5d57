// A thin RAII layer over the SQLite C API for the store thread: a connection, prepared
// statements with typed binds and reads, and a count of every statement executed.
//
// Counting: each execution of a statement (the first Step() after a Reset, or Exec of one
// statement) adds one to the StatementCounts slot (store/statements.h) of the StoreOp it was
// prepared for.
//
// Ownership: a Statement must not outlive its Database; the StatementCounts a Database counts
// into must outlive it. Thread safety: a Database and its statements belong to one thread (the
// store thread).
// Errors: Open, Prepare, Step and Exec return kInternal with SQLite's message; a UNIQUE or
// PRIMARY KEY violation is kConflict so the admin API can answer 409.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/statements.h"

struct sqlite3;
struct sqlite3_stmt;

namespace turnpike::store::sqlite {

class Database;

class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds are 1-based like SQLite's. Text is copied (SQLITE_TRANSIENT).
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view text);
  // Not copied (SQLITE_STATIC): `text` must outlive the next Step/Run of this binding.
  Statement& BindView(int index, std::string_view text);
  Statement& BindBlob(int index, const void* data, size_t size);
  Statement& BindNull(int index);
  Statement& BindBool(int index, bool value) { return Bind(index, int64_t{value ? 1 : 0}); }
  Statement& Bind(int index, int value) { return Bind(index, int64_t{value}); }
  // A string literal must not decay to a pointer and convert to bool.
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, const std::optional<int64_t>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Binds only when the value differs from the one this parameter already holds from an
  // earlier *IfChanged bind. SQLite keeps bindings across runs (Run(kKeep)), so an unchanged
  // value costs a compare instead of a bind (about 100 to 200 instructions each in SQLite):
  // the call-log insert rebinds only the few columns that changed since its previous run. Text
  // is copied into storage the statement owns and bound from there, so it never dangles. A
  // plain Bind* of the same parameter, or a Reset that clears, forgets the remembered value.
  Statement& BindIfChanged(int index, int64_t value) {
    Held& held = HeldAt(index);
    if (held.kind != Held::Kind::kInt || held.value != value) BindHeld(held, index, value);
    return *this;
  }
  Statement& BindTextIfChanged(int index, std::string_view text) {
    Held& held = HeldAt(index);
    if (held.kind != Held::Kind::kText || held.text != text) BindHeld(held, index, text);
    return *this;
  }
  Statement& BindNullIfChanged(int index) {
    Held& held = HeldAt(index);
    if (held.kind != Held::Kind::kNull) BindHeldNull(held, index);
    return *this;
  }

  // true: a row is ready; false: done. Counts one execution on the first step after Reset.
  Result<bool> Step();
  // What Run leaves bound: kClear (the default) unbinds every parameter, so nothing stale or
  // dangling (BindView) survives; kKeep skips that for a caller that binds every parameter
  // before each Run anyway (the call-log insert: hundreds of parameters per statement).
  enum class Bindings { kClear, kKeep };
  // Steps to completion, ignoring rows; then resets.
  Status Run(Bindings after = Bindings::kClear);
  // Clears bindings (unless kKeep) and rewinds for the next execution.
  void Reset(Bindings after = Bindings::kClear);

  int columns() const;  // of the current row's result
  int64_t Int(int column) const;
  std::optional<int64_t> OptionalInt(int column) const;
  std::string Text(int column) const;
  std::string Blob(int column) const;
  bool IsNull(int column) const;

 private:
  friend class Database;
  Statement(Database* db, sqlite3_stmt* stmt, StoreOp op) : db_(db), stmt_(stmt), op_(op) {}

  // What an *IfChanged bind left in one parameter.
  struct Held {
    enum class Kind : uint8_t { kUnknown, kNull, kInt, kText };
    Kind kind = Kind::kUnknown;
    int64_t value = 0;
    std::string text;  // bound SQLITE_STATIC from here
  };
  // The parameter's Held slot (1-based index); the slots are made on first use.
  Held& HeldAt(int index) {
    if (held_ && index >= 1 && static_cast<size_t>(index) <= held_->size()) {
      return (*held_)[static_cast<size_t>(index) - 1];
    }
    return MakeHeld(index);
  }
  Held& MakeHeld(int index);
  void BindHeld(Held& held, int index, int64_t value);
  void BindHeld(Held& held, int index, std::string_view text);
  void BindHeldNull(Held& held, int index);
  // A plain bind of `index` forgets what an *IfChanged bind left there.
  void Forget(int index) {
    if (held_ && index >= 1 && static_cast<size_t>(index) <= held_->size()) {
      (*held_)[index - 1].kind = Held::Kind::kUnknown;
    }
  }

  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  StoreOp op_ = StoreOp::kAdminRead;
  bool started_ = false;
  std::unique_ptr<std::vector<Held>> held_;  // only for statements that use *IfChanged
};

class Database {
 public:
  // Opens (creating) the file; creates its directory if missing. WAL journal, 4 KiB pages
  // (for a new file), foreign keys on, a 5 s busy timeout; synchronous NORMAL (a commit survives a
  // process crash, not a power loss) or FULL.
  static Result<std::unique_ptr<Database>> Open(const std::string& path, bool synchronous_full,
                                                StatementCounts* counts);
  ~Database();

  Result<Statement> Prepare(std::string_view sql, StoreOp op);
  // The prepared statement in `slot`, preparing it on first use (a statement run again and
  // again: the call-log insert, the spend upsert).
  Result<Statement*> Cached(std::unique_ptr<Statement>& slot, std::string_view sql, StoreOp op);
  // Executes one or more statements without results; counts each as `op`.
  Status Exec(std::string_view sql, StoreOp op);

  // Prepared once and kept, like Cached's: Exec prepares its text on every call (about 3k
  // instructions for BEGIN, as many for COMMIT), and every transaction runs both.
  Status Begin() { return RunKept(begin_, "BEGIN IMMEDIATE"); }
  Status Commit() { return RunKept(commit_, "COMMIT"); }
  void Rollback() { (void)RunKept(rollback_, "ROLLBACK"); }

  // The rowid of the last row inserted on this connection.
  int64_t LastInsertId() const;
  // Bytes this connection's page cache holds (SQLITE_DBSTATUS_CACHE_USED); the connection's
  // thread only, like every other call.
  int64_t CacheBytes() const;
  Error LastError(std::string_view what) const;
  StatementCounts& counts() { return *counts_; }

 private:
  Database(sqlite3* db, StatementCounts* counts) : db_(db), counts_(counts) {}
  // Runs the transaction statement in `slot` (prepared on first use), counted as kTransaction.
  Status RunKept(std::unique_ptr<Statement>& slot, std::string_view sql);

  sqlite3* db_;
  StatementCounts* counts_;
  std::unique_ptr<Statement> begin_, commit_, rollback_;
};

// Runs `body` (returning Status) inside BEGIN IMMEDIATE / COMMIT; ROLLBACK if it or the commit
// fails.
template <typename Body>
Status InTransaction(Database& db, Body&& body) {
  Status begun = db.Begin();
  if (!begun.ok()) return begun;
  Status done = body();
  if (!done.ok()) {
    db.Rollback();
    return done;
  }
  Status committed = db.Commit();
  if (!committed.ok()) db.Rollback();
  return committed;
}

}  // namespace turnpike::store::sqlite
