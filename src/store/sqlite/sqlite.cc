#include "store/sqlite/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace turnpike::store::sqlite {
namespace {

constexpr int kBusyTimeoutMs = 5'000;

bool IsConstraintViolation(int code) {
  return code == SQLITE_CONSTRAINT_UNIQUE || code == SQLITE_CONSTRAINT_PRIMARYKEY;
}

}  // namespace

Statement::Statement(Statement&& other) noexcept { *this = std::move(other); }

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    op_ = other.op_;
    started_ = other.started_;
    held_ = std::move(other.held_);
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  Forget(index);
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  Forget(index);
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindView(int index, std::string_view text) {
  Forget(index);
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, size_t size) {
  Forget(index);
  sqlite3_bind_blob(stmt_, index, data, static_cast<int>(size), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  Forget(index);
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Statement::Held& Statement::MakeHeld(int index) {
  if (!held_) {
    held_ = std::make_unique<std::vector<Held>>(
        static_cast<size_t>(std::max(sqlite3_bind_parameter_count(stmt_), 0)));
  }
  return held_->at(static_cast<size_t>(index - 1));
}

void Statement::BindHeld(Held& held, int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  held.kind = Held::Kind::kInt;
  held.value = value;
}

void Statement::BindHeld(Held& held, int index, std::string_view text) {
  held.text.assign(text);
  sqlite3_bind_text(stmt_, index, held.text.data(), static_cast<int>(held.text.size()),
                    SQLITE_STATIC);
  held.kind = Held::Kind::kText;
}

void Statement::BindHeldNull(Held& held, int index) {
  sqlite3_bind_null(stmt_, index);
  held.kind = Held::Kind::kNull;
}

Result<bool> Statement::Step() {
  if (!started_) {
    started_ = true;
    db_->counts().Add(op_);
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->LastError("step");
}

Status Statement::Run(Bindings after) {
  Result<bool> row = Step();
  while (row.ok() && row.value()) row = Step();
  Reset(after);
  if (!row.ok()) return row.error();
  return Ok{};
}

void Statement::Reset(Bindings after) {
  sqlite3_reset(stmt_);
  if (after == Bindings::kClear) {
    sqlite3_clear_bindings(stmt_);
    if (held_) {
      for (Held& held : *held_) held.kind = Held::Kind::kUnknown;
    }
  }
  started_ = false;
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

std::optional<int64_t> Statement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

int Statement::columns() const { return sqlite3_column_count(stmt_); }

std::string Statement::Text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string Statement::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Database::CacheBytes() const {
  int current = 0;
  int highwater = 0;
  if (sqlite3_db_status(db_, SQLITE_DBSTATUS_CACHE_USED, &current, &highwater, 0) != SQLITE_OK) {
    return 0;
  }
  return current;
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, bool synchronous_full,
                                                 StatementCounts* counts) {
  // SQLite keeps memory statistics under a global mutex taken on every allocation; nothing
  // here reads them. This must precede SQLite's initialization: if something else initialized
  // it first, the call fails harmlessly (SQLITE_MISUSE) and the statistics stay on.
  [[maybe_unused]] static const int kNoMemoryStatistics =
      sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return Error{ErrorCode::kInternal, "cannot open store " + path + ": " + message, ""};
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  std::unique_ptr<Database> db(new Database(raw, counts));
  // 4 KiB pages: a commit writes every page it dirtied whole to the WAL, and an agent turn's
  // transaction dirties a few pages in several tables and indexes; against 16 KiB pages its
  // store-thread instructions fall by a third and a plain call's call-log share by 5-15%,
  // while the call log's batched appends cost the same per row (bench/call_log_bench.cc;
  // docs/BENCHMARKS.md). It takes effect only when the file is created; an existing database
  // keeps its page size.
  std::string pragmas =
      "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; "
      "PRAGMA synchronous=";
  pragmas += synchronous_full ? "FULL;" : "NORMAL;";
  Status set = db->Exec(pragmas, StoreOp::kMigrate);
  if (!set.ok()) return set.error();
  return db;
}

Database::~Database() { sqlite3_close_v2(db_); }

Result<Statement*> Database::Cached(std::unique_ptr<Statement>& slot, std::string_view sql,
                                    StoreOp op) {
  if (!slot) {
    Result<Statement> prepared = Prepare(sql, op);
    if (!prepared.ok()) return prepared.error();
    slot = std::make_unique<Statement>(std::move(prepared.value()));
  }
  return slot.get();
}

Result<Statement> Database::Prepare(std::string_view sql, StoreOp op) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return LastError("prepare");
  return Statement(this, stmt, op);
}

Status Database::RunKept(std::unique_ptr<Statement>& slot, std::string_view sql) {
  Result<Statement*> statement = Cached(slot, sql, StoreOp::kTransaction);
  if (!statement.ok()) return statement.error();
  return statement.value()->Run(Statement::Bindings::kKeep);  // it has no parameters
}

Status Database::Exec(std::string_view sql, StoreOp op) {
  // sqlite3_exec runs each statement of `sql`; count them by preparing one at a time.
  const char* tail = sql.data();
  const char* end = sql.data() + sql.size();
  while (tail < end) {
    sqlite3_stmt* stmt = nullptr;
    const char* next = nullptr;
    if (sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &stmt, &next) != SQLITE_OK) {
      return LastError("prepare");
    }
    tail = next;
    if (stmt == nullptr) continue;  // whitespace or a comment
    counts_->Add(op);
    int rc = sqlite3_step(stmt);
    while (rc == SQLITE_ROW) rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) {
      Error error = LastError("exec");
      sqlite3_finalize(stmt);
      return error;
    }
    sqlite3_finalize(stmt);
  }
  return Ok{};
}

int64_t Database::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

Error Database::LastError(std::string_view what) const {
  const int code = sqlite3_extended_errcode(db_);
  return Error{IsConstraintViolation(code) ? ErrorCode::kConflict : ErrorCode::kInternal,
               "store " + std::string(what) + ": " + sqlite3_errmsg(db_), ""};
}

}  // namespace turnpike::store::sqlite
