#include "store/postgres/pg.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace turnpike::store::postgres {
namespace {

constexpr std::string_view kUniqueViolation = "23505";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

std::string ServerMessage(PGconn* conn) {
  std::string message = conn != nullptr ? PQerrorMessage(conn) : "no connection";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  // libpq's hints come on a second, tab-indented line: one line for logs.
  for (size_t at; (at = message.find("\n\t")) != std::string::npos;) message.replace(at, 2, " ");
  return message;
}

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// A failed statement's error: kConflict for a unique violation, else kInternal.
Error ResultError(const PGresult* result) {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  std::string message = PQresultErrorMessage(result);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  const bool unique = state != nullptr && kUniqueViolation == state;
  return Error{unique ? ErrorCode::kConflict : ErrorCode::kInternal, "PostgreSQL: " + message, ""};
}

}  // namespace

std::string Numbered(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 1;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted) {
      out += '$';
      out += std::to_string(next++);
    } else {
      out += c;
    }
  }
  return out;
}

std::string Redacted(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t at = url.find('@');
  if (scheme == std::string_view::npos || at == std::string_view::npos || at < scheme) {
    return std::string(url);
  }
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon)) + ":***" + std::string(url.substr(at));
}

Params& Params::Add(int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}

Params& Params::Add(std::string_view text) {
  values_.emplace_back(std::string(text));
  return *this;
}

Params& Params::AddBytea(const void* data, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "\\x";
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    text += kHex[bytes[i] >> 4];
    text += kHex[bytes[i] & 0xf];
  }
  values_.emplace_back(std::move(text));
  return *this;
}

Params& Params::AddNull() {
  values_.emplace_back(std::nullopt);
  return *this;
}

std::vector<const char*> Params::Pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

Rows& Rows::operator=(Rows&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

Rows::~Rows() {
  if (result_ != nullptr) PQclear(result_);
}

int Rows::size() const { return result_ != nullptr ? PQntuples(result_) : 0; }

int Rows::columns() const { return result_ != nullptr ? PQnfields(result_) : 0; }

bool Rows::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }

std::string Rows::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<size_t>(PQgetlength(result_, row, column)));
}

int64_t Rows::Int(int row, int column) const {
  if (IsNull(row, column)) return 0;
  return std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
}

std::optional<int64_t> Rows::OptionalInt(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Int(row, column);
}

std::string Rows::Bytea(int row, int column) const {
  const std::string text = Text(row, column);
  std::string out;
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x') return out;
  for (size_t i = 2; i + 1 < text.size(); i += 2) {
    out += static_cast<char>(HexValue(text[i]) << 4 | HexValue(text[i + 1]));
  }
  return out;
}

Connection::Connection(ConnectionOptions options, StatementCounts* counts)
    : options_(std::move(options)), counts_(counts) {}

Connection::~Connection() { Drop(); }

void Connection::Drop() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

Error Connection::Lost(std::string what) {
  std::string message = "PostgreSQL " + what + ": " + ServerMessage(conn_);
  Drop();
  retry_at_ = std::chrono::steady_clock::now() + options_.retry;
  return Error{ErrorCode::kUnavailable, std::move(message), ""};
}

Status Connection::Ensure() {
  if (conn_ != nullptr) return Ok{};
  if (std::chrono::steady_clock::now() < retry_at_) {
    return Error{ErrorCode::kUnavailable, "PostgreSQL is unreachable (retrying)", ""};
  }
  return Connect();
}

Status Connection::Connect() {
  const char* keywords[] = {"dbname", nullptr};
  const char* values[] = {options_.url.c_str(), nullptr};
  conn_ = PQconnectStartParams(keywords, values, /*expand_dbname=*/1);
  if (conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
    return Lost("connection failed");
  }
  const Deadline deadline = std::chrono::steady_clock::now() + options_.timeout;
  // PQconnectPoll's protocol: wait for what it asks, then call it again.
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED) {
      return Lost("connection failed");
    }
    pollfd fd{PQsocket(conn_),
              static_cast<short>(state == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
    const int ready = ::poll(&fd, 1, RemainingMs(deadline));
    if (ready <= 0) return Lost("connection timed out");
    state = PQconnectPoll(conn_);
  }
  if (PQsetnonblocking(conn_, 1) != 0) return Lost("set non-blocking");
  // Notices (CREATE ... IF NOT EXISTS skipping) are not errors: not printed.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  return Ok{};
}

Status Connection::WaitReadable(Deadline deadline) {
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  const int ready = ::poll(&fd, 1, RemainingMs(deadline));
  if (ready <= 0) return Lost("timed out");
  if (PQconsumeInput(conn_) == 0) return Lost("connection lost");
  return Ok{};
}

Status Connection::Flush(Deadline deadline) {
  while (true) {
    const int left = PQflush(conn_);
    if (left == 0) return Ok{};
    if (left < 0) return Lost("connection lost");
    pollfd fd{PQsocket(conn_), POLLIN | POLLOUT, 0};
    if (::poll(&fd, 1, RemainingMs(deadline)) <= 0) return Lost("timed out");
    if ((fd.revents & POLLIN) != 0 && PQconsumeInput(conn_) == 0) return Lost("connection lost");
  }
}

Result<Rows> Connection::Collect(Deadline deadline) {
  std::optional<Rows> kept;
  std::optional<Error> failed;
  while (true) {
    while (PQisBusy(conn_) != 0) {
      Status read = WaitReadable(deadline);
      if (!read.ok()) return read.error();
    }
    PGresult* result = PQgetResult(conn_);
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(result);
      break;
    }
    if (status == PGRES_FATAL_ERROR || status == PGRES_PIPELINE_ABORTED) {
      if (!failed) failed = ResultError(result);
      PQclear(result);
      continue;
    }
    kept.emplace(result);  // a statement has one result; the last one counts
  }
  if (PQstatus(conn_) == CONNECTION_BAD) return Lost("connection lost");
  if (failed) return *failed;
  if (!kept) return Rows{};
  return std::move(*kept);
}

Result<Rows> Connection::Run(std::string_view sql, const Params& params, StoreOp op,
                             std::chrono::milliseconds timeout) {
  Status ready = Ensure();
  if (!ready.ok()) return ready.error();
  const Deadline deadline =
      std::chrono::steady_clock::now() + (timeout.count() > 0 ? timeout : options_.timeout);
  const std::string text(sql);
  const std::vector<const char*> values = params.Pointers();
  counts_->Add(op);
  if (PQsendQueryParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                        values.data(), nullptr, nullptr, 0) == 0) {
    return Lost("send failed");
  }
  Status flushed = Flush(deadline);
  if (!flushed.ok()) return flushed.error();
  return Collect(deadline);
}

Result<std::vector<Rows>> Connection::RunAll(std::span<const Query> queries, StoreOp op) {
  std::vector<Rows> out;
  if (!options_.pipeline) {
    for (const Query& q : queries) {
      Result<Rows> rows = Run(q.sql, *q.params, op);
      if (!rows.ok()) return rows.error();
      out.push_back(std::move(rows.value()));
    }
    return out;
  }
  Status ready = Ensure();
  if (!ready.ok()) return ready.error();
  const Deadline deadline = std::chrono::steady_clock::now() + options_.timeout;
  if (PQenterPipelineMode(conn_) == 0) return Lost("pipeline mode refused");
  counts_->Add(op);
  for (const Query& q : queries) {
    const std::string text(q.sql);
    const std::vector<const char*> values = q.params->Pointers();
    if (PQsendQueryParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                          values.data(), nullptr, nullptr, 0) == 0) {
      return Lost("send failed");
    }
  }
  if (PQpipelineSync(conn_) == 0) return Lost("send failed");
  Status flushed = Flush(deadline);
  if (!flushed.ok()) return flushed.error();
  std::optional<Error> failed;
  for (size_t i = 0; i < queries.size(); ++i) {
    Result<Rows> rows = Collect(deadline);
    if (!rows.ok()) {
      if (rows.error().code == ErrorCode::kUnavailable) return rows.error();
      if (!failed) failed = rows.error();
      continue;
    }
    out.push_back(std::move(rows.value()));
  }
  // The Sync's own result, then back to one statement at a time.
  Result<Rows> sync = Collect(deadline);
  if (!sync.ok() && sync.error().code == ErrorCode::kUnavailable) return sync.error();
  if (PQexitPipelineMode(conn_) == 0) return Lost("pipeline left busy");
  if (failed) return *failed;
  return out;
}

Status Connection::Script(std::string_view sql, StoreOp op) {
  Status ready = Ensure();
  if (!ready.ok()) return ready;
  const Deadline deadline = std::chrono::steady_clock::now() + options_.timeout;
  const std::string text(sql);
  counts_->Add(op);
  if (PQsendQuery(conn_, text.c_str()) == 0) return Lost("send failed");
  Status flushed = Flush(deadline);
  if (!flushed.ok()) return flushed;
  Result<Rows> done = Collect(deadline);
  if (!done.ok()) return done.error();
  return Ok{};
}

Status Connection::CopyIn(std::string_view sql, const CopyData& data, StoreOp op) {
  Status ready = Ensure();
  if (!ready.ok()) return ready;
  const Deadline deadline = std::chrono::steady_clock::now() + options_.timeout;
  const std::string text(sql);
  counts_->Add(op);
  if (PQsendQuery(conn_, text.c_str()) == 0) return Lost("send failed");
  Status flushed = Flush(deadline);
  if (!flushed.ok()) return flushed;
  std::optional<Error> failed;
  Rows before;  // the last statement's result before the COPY
  while (true) {
    while (PQisBusy(conn_) != 0) {
      Status read = WaitReadable(deadline);
      if (!read.ok()) return read;
    }
    PGresult* result = PQgetResult(conn_);
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_FATAL_ERROR) {
      if (!failed) failed = ResultError(result);
    } else if (status == PGRES_COPY_IN) {
      PQclear(result);
      result = nullptr;
      counts_->Add(op);  // the data and what follows the COPY: the second round trip
      Result<std::string_view> rows = data(before);
      // The caller cannot give the rows: the server aborts the COPY, and with it the
      // transaction; its error is the caller's.
      if (!rows.ok() && !failed) failed = rows.error();
      const std::string_view bytes = rows.ok() ? rows.value() : std::string_view();
      // Non-blocking: 0 means libpq's buffer is full; flush it and offer the rest again.
      constexpr size_t kChunk = 64 * 1024;
      for (size_t at = 0; at < bytes.size();) {
        const size_t n = std::min(kChunk, bytes.size() - at);
        const int put = PQputCopyData(conn_, bytes.data() + at, static_cast<int>(n));
        if (put < 0) return Lost("copy failed");
        if (put > 0) at += n;
        Status sent = Flush(deadline);
        if (!sent.ok()) return sent;
      }
      int end = 0;
      while ((end = PQputCopyEnd(conn_, rows.ok() ? nullptr : "rows refused by the writer")) == 0) {
        Status sent = Flush(deadline);
        if (!sent.ok()) return sent;
      }
      if (end < 0) return Lost("copy failed");
      Status sent = Flush(deadline);
      if (!sent.ok()) return sent;
      continue;
    } else if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
      before = Rows(result);
      continue;
    }
    if (result != nullptr) PQclear(result);
  }
  if (PQstatus(conn_) == CONNECTION_BAD) return Lost("connection lost");
  if (failed) return *failed;
  return Ok{};
}

Status Connection::AppendLiteral(std::string& out, std::string_view text) {
  Status ready = Ensure();
  if (!ready.ok()) return ready;
  // PQescapeStringConn writes at most 2n + 1 bytes: quotes doubled, and backslashes too when
  // the server does not have standard_conforming_strings, matching how it reads '...'.
  const size_t at = out.size();
  out.resize(at + 1 + 2 * text.size() + 1);
  out[at] = '\'';
  int error = 0;
  const size_t n = PQescapeStringConn(conn_, out.data() + at + 1, text.data(), text.size(), &error);
  if (error != 0) {
    out.resize(at);
    return Error{ErrorCode::kInternal, "PostgreSQL: " + ServerMessage(conn_), ""};
  }
  out.resize(at + 1 + n);
  out += '\'';
  return Ok{};
}

Result<std::string> Connection::Literal(std::string_view text) {
  Status ready = Ensure();
  if (!ready.ok()) return ready.error();
  char* quoted = PQescapeLiteral(conn_, text.data(), text.size());
  if (quoted == nullptr) {
    return Error{ErrorCode::kInternal, "PostgreSQL: " + ServerMessage(conn_), ""};
  }
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

Result<bool> Connection::Notified(int own_pid) {
  Status ready = Ensure();
  if (!ready.ok()) return ready.error();
  if (PQconsumeInput(conn_) == 0) return Lost("notification connection lost");
  bool any = false;
  while (PGnotify* note = PQnotifies(conn_)) {
    any |= note->be_pid != own_pid;
    PQfreemem(note);
  }
  return any;
}

int Connection::socket() const { return conn_ == nullptr ? -1 : PQsocket(conn_); }

int Connection::backend_pid() const { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }

}  // namespace turnpike::store::postgres
