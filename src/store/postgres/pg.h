// A thin layer over libpq for the PostgreSQL engine: a connection driven in non-blocking mode
// from the store thread (it polls its own socket with a deadline, so a dead or hung server
// costs at most `timeout`, never a hang), text parameters, results read by row and column, and
// a count of every round trip.
//
// Statements are sent unnamed through the extended protocol (PQsendQueryParams): no
// server-side prepared statement outlives a call, so the connection may go through PgBouncer
// in transaction pooling mode (1.18 has no protocol-level prepared statements there).
// QueryAll pipelines several statements behind one Sync (one round trip) when the connection
// allows it (ConnectionOptions::pipeline), else sends them one by one; see engine.h for why it
// is off through PgBouncer.
//
// Counting: each round trip adds one to the StatementCounts slot of its StoreOp
// (store/statements.h: a network engine counts round trips; one pipelined batch is one).
//
// Errors: kConflict for a unique violation (SQLSTATE 23505); kUnavailable when the server
// cannot be reached, the connection breaks or the deadline passes (the connection is then
// dropped and reconnected by the next call, at most once per `retry`); kInternal for any other
// error the server reports, with its message.
//
// Ownership and threads: a Connection belongs to one thread (the store thread, or the opener
// before it starts); the StatementCounts it counts into must outlive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/statements.h"

struct pg_conn;
struct pg_result;

namespace turnpike::store::postgres {

// `sql` with its `?` parameters numbered $1, $2, ... (a `?` inside a quoted literal is kept).
std::string Numbered(std::string_view sql);
// A connection URL without its password, for messages.
std::string Redacted(std::string_view url);

// One statement's parameters, in text form; NULL is a null pointer.
class Params {
 public:
  using Values = std::vector<std::optional<std::string>>;
  Params() = default;
  explicit Params(Values values) : values_(std::move(values)) {}
  Params& Add(int64_t value);
  Params& Add(int value) { return Add(int64_t{value}); }
  Params& Add(std::string_view text);
  Params& Add(const char* text) { return Add(std::string_view(text)); }
  Params& Add(const std::optional<int64_t>& value) { return value ? Add(*value) : AddNull(); }
  Params& AddBool(bool value) { return Add(int64_t{value ? 1 : 0}); }
  Params& AddBytea(const void* data, size_t size);  // as \x<hex>
  Params& AddNull();

  size_t size() const { return values_.size(); }
  const Values& values() const { return values_; }
  // libpq's arrays; valid until the next Add.
  std::vector<const char*> Pointers() const;

 private:
  Values values_;
};

// A result's rows (text form). Owns the libpq result.
class Rows {
 public:
  Rows() = default;
  explicit Rows(pg_result* result) : result_(result) {}
  Rows(Rows&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Rows& operator=(Rows&& other) noexcept;
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;
  ~Rows();

  int size() const;
  int columns() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;  // 0 for NULL
  std::optional<int64_t> OptionalInt(int row, int column) const;
  std::string Bytea(int row, int column) const;  // decoded from \x<hex>

 private:
  pg_result* result_ = nullptr;
};

struct Query {
  std::string_view sql;  // numbered ($1, ...)
  const Params* params = nullptr;
};

struct ConnectionOptions {
  std::string url;
  std::chrono::milliseconds timeout{5'000};  // connect, and each call's round trip
  std::chrono::milliseconds retry{500};      // after a failed connect, refuse until then
  bool pipeline = true;                      // QueryAll may pipeline
};

class Connection {
 public:
  Connection(ConnectionOptions options, StatementCounts* counts);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects unless connected; kUnavailable (within `retry` of a failure: at once).
  Status Ensure();
  bool connected() const { return conn_ != nullptr; }
  void Drop();

  // `timeout`: this round trip's bound, when not the connection's (0).
  Result<Rows> Run(std::string_view sql, const Params& params, StoreOp op,
                   std::chrono::milliseconds timeout = {});
  // Several statements, results in order; one round trip when pipelining.
  Result<std::vector<Rows>> RunAll(std::span<const Query> queries, StoreOp op);
  // One or more statements without parameters (simple protocol): migrations, LISTEN.
  Status Script(std::string_view sql, StoreOp op);
  // Script whose statements include one COPY ... FROM STDIN, fed the bytes `data` gives (in
  // the format the COPY names) when the server asks for them; `data` is passed the result of
  // the last statement before the COPY (its RETURNING rows, say), and an error from it aborts
  // the COPY (and the transaction) and is returned. Without BEGIN/COMMIT in `sql` its statements
  // are one transaction (the simple protocol's implicit one): a failing statement, before or after
  // the COPY, leaves none of them done. Two round trips (the statements up to the COPY, then the
  // data and the rest); the first statement failing ends it after the first.
  // The bytes must stay valid until CopyIn returns (a buffer the caller owns).
  using CopyData = std::function<Result<std::string_view>(const Rows& before)>;
  Status CopyIn(std::string_view sql, const CopyData& data, StoreOp op);
  // `text` as an SQL string literal for this connection's settings (quotes included);
  // connects if needed.
  Result<std::string> Literal(std::string_view text);
  // The same, appended to `out` (no allocation beyond `out`'s own growth).
  Status AppendLiteral(std::string& out, std::string_view text);

  // Reads what the server sent without waiting; true if a notification from another backend
  // than `own_pid` arrived (LISTEN connections).
  Result<bool> Notified(int own_pid);
  int backend_pid() const;
  // The connection's socket; -1 when not connected.
  int socket() const;
  const ConnectionOptions& options() const { return options_; }

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  Status Connect();
  // Flushes what libpq holds, then reads until the result(s) are complete.
  Status Flush(Deadline deadline);
  Status WaitReadable(Deadline deadline);
  // Collects one statement's result; nullptr result with the error otherwise.
  Result<Rows> Collect(Deadline deadline);
  Error Lost(std::string what);  // drops the connection; kUnavailable

  const ConnectionOptions options_;
  StatementCounts* counts_;
  pg_conn* conn_ = nullptr;
  std::chrono::steady_clock::time_point retry_at_{};
};

}  // namespace turnpike::store::postgres
