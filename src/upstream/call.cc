#include "upstream/call.h"

#include <openssl/ssl.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <charconv>
#include <limits>
#include <optional>
#include <vector>

#include "common/text_writer.h"
#include "net/http_read.h"
#include "upstream/h2_call.h"

namespace turnpike::upstream {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using namespace std::string_view_literals;

namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// A request head's bytes besides its variable parts: the fixed text, the optional headers'
// names with their separators and the longest Content-Length (so the head is written once).
constexpr size_t kHeadFixed = 136;
// An upstream's response head, status line and fields together: far above any provider's (a
// few KiB), and a bound on an upstream that never ends its head.
constexpr size_t kMaxResponseHeadBytes = 64 * 1024;
// Body reads in a row that ReadSomeWithin may complete without suspending (the bytes were
// already there) before it suspends once, so that one fast stream cannot hold the worker.
constexpr int kMaxInlineReads = 16;

bool WouldBlock(boost::system::error_code ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

bool IsStaleConnectionError(boost::system::error_code ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == bhttp::error::partial_message || ec == asio::ssl::error::stream_truncated;
}

// The read buffers of ended streamed calls, kept by each thread for its next ones. A buffer
// (16 KiB by default) is above what glibc's per-thread cache holds, so taking and freeing one
// per stream went through malloc's bins. Buffers of one size are kept (the thread's first size;
// a call with another is served by malloc as before), at most kKept per thread: 4 MiB at 16 KiB,
// held until the thread ends. Thread safety: each thread touches its own list only.
class KeptReadBuffers {
 public:
  static constexpr size_t kKept = 256;

  static std::unique_ptr<char[]> Take(size_t size) {
    Kept& kept = Mine();
    if (size == kept.size && !kept.buffers.empty()) {
      std::unique_ptr<char[]> buffer = std::move(kept.buffers.back());
      kept.buffers.pop_back();
      return buffer;
    }
    // Not zero-filled: only the bytes a read wrote are ever looked at.
    return std::make_unique_for_overwrite<char[]>(size);
  }
  static void Give(std::unique_ptr<char[]> buffer, size_t size) noexcept {
    Kept& kept = Mine();
    if (kept.buffers.empty()) kept.size = size;
    if (size != kept.size || kept.buffers.size() == kKept) return;  // freed here
    kept.buffers.push_back(std::move(buffer));  // no allocation: reserved to kKept
  }

 private:
  struct Kept {
    Kept() { buffers.reserve(kKept); }
    size_t size = 0;
    std::vector<std::unique_ptr<char[]>> buffers;
  };
  static Kept& Mine() {
    thread_local Kept kept;
    return kept;
  }
};

}  // namespace

Call::Call(Pool& pool, const Origin& origin, const CallOptions& options)
    : pool_(pool), origin_(origin), options_(options) {}

Call::~Call() {
  h2_.reset();  // resets its stream if unfinished
  if (connection_) connection_->Close();
  LeaveSlot();
  if (read_buffer_) KeptReadBuffers::Give(std::move(read_buffer_), options_.read_buffer_bytes);
}

bool Call::TryEnter() {
  if (!entered_ && pool_.TryEnter(origin_)) entered_ = true;
  return entered_;
}

asio::awaitable<Status> Call::Enter() {
  if (TryEnter()) co_return Ok{};
  SlotWaiter waiter(pool_, origin_);
  waiting_ = &waiter;
  const bool granted = co_await waiter.Wait(options_.connect_timeout);
  waiting_ = nullptr;
  entered_ = granted;
  if (cancelled_) co_return Failure(asio::error::operation_aborted, "waiting for a connection");
  if (!granted) {
    co_return Error{ErrorCode::kUpstreamTimeout,
                    "no upstream connection free within the connect timeout (" + origin_.key +
                        ", upstream.pool.max_active_per_origin)",
                    ""};
  }
  co_return Ok{};
}

void Call::LeaveSlot() {
  if (!entered_) return;
  entered_ = false;
  pool_.Leave(origin_);
}

boost::system::error_code Call::Classify(boost::system::error_code ec) const {
  if (connection_ && connection_->deadline.hit && ec == asio::error::operation_aborted) {
    return beast::error::timeout;
  }
  return ec;
}

Error Call::Failure(boost::system::error_code ec, std::string_view during) const {
  const std::string where = " (" + origin_.key + ", " + std::string(during) + ")";
  if (cancelled_) {
    return Error{ErrorCode::kUpstreamUnavailable, "upstream call cancelled" + where, ""};
  }
  if (ec == beast::error::timeout) {
    return Error{ErrorCode::kUpstreamTimeout, "upstream timed out" + where, ""};
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
      !IsStaleConnectionError(ec)) {
    return Error{ErrorCode::kUpstreamBadResponse,
                 "upstream sent a malformed response: " + ec.message() + where, ""};
  }
  return Error{ErrorCode::kUpstreamUnavailable,
               "upstream connection failed: " + ec.message() + where, ""};
}

asio::awaitable<Status> Call::Connect() {
  auto& context = pool_.context();
  asio::ssl::context* ssl = nullptr;
  if (origin_.tls) {
    ssl = const_cast<asio::ssl::context*>(origin_.tls_verify ? &pool_.tls().verify()
                                                             : &pool_.tls().no_verify());
  }
  auto conn = std::make_shared<UpstreamConnection>(context, ssl);
  const std::string resolve_key = origin_.host + ":" + std::to_string(origin_.port);
  const auto* cached = pool_.CachedEndpoints(resolve_key);
  asio::ip::tcp::resolver::results_type endpoints;
  if (cached) {
    endpoints = *cached;
  } else {
    auto [ec, results] =
        co_await pool_.resolver().async_resolve(origin_.host, std::to_string(origin_.port), kTuple);
    if (ec) {
      pool_.probe().connect_errors.Add();
      co_return Failure(ec, "resolve");
    }
    pool_.CacheEndpoints(resolve_key, results);
    endpoints = results;
  }
  connection_ = conn;  // so that Cancel() reaches the connect
  conn->Arm(options_.connect_timeout);
  auto [cec, ep] = co_await asio::async_connect(conn->lowest(), endpoints, kTuple);
  if (cec || cancelled_) {
    pool_.probe().connect_errors.Add();
    co_return Failure(Classify(cec ? cec : asio::error::operation_aborted), "connect");
  }
  if (conn->ConnectedToItself(ep)) {
    pool_.probe().connect_errors.Add();
    co_return Failure(asio::error::connection_refused, "connect");
  }
  boost::system::error_code opt_ec;
  conn->lowest().set_option(asio::ip::tcp::no_delay(true), opt_ec);
  // Lets WriteNow and ReadSomeNow write and read without suspending; async operations are
  // unaffected. (A TLS socket's handshake makes it non-blocking.)
  if (!conn->tls) conn->plain.non_blocking(true, opt_ec);
  if (conn->tls) {
    if (!SSL_set_tlsext_host_name(conn->tls->native_handle(), origin_.host.c_str()) ||
        (origin_.tls_verify && !conn->tls->SetVerifyHost(origin_.host))) {
      pool_.probe().connect_errors.Add();
      co_return Error{ErrorCode::kUpstreamUnavailable, "cannot set the TLS server name", ""};
    }
    auto [hec] = co_await conn->tls->async_handshake(asio::ssl::stream_base::client, kTuple);
    if (hec) {
      pool_.probe().connect_errors.Add();
      co_return Failure(Classify(hec), "TLS handshake");
    }
  }
  pool_.probe().connects.Add();
  connected_at_ = Clock::now();
  co_return Ok{};
}

void Call::BeginExchange() {
  parser_.reset();
  content_type_ = {};
  arena_.Reset();
  parser_.emplace(arena_);
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  connection_->Arm(options_.first_byte_timeout);
}

std::array<asio::const_buffer, 2> Call::WriteNow(std::string_view head, std::string_view body,
                                                 boost::system::error_code& ec) {
  std::array<asio::const_buffer, 2> rest{asio::buffer(head), asio::buffer(body)};
  ec = {};
  UpstreamConnection& c = *connection_;
  if (!c.lowest().non_blocking()) return rest;
  const size_t written = c.tls ? c.tls->write_some(rest, ec) : c.plain.write_some(rest, ec);
  if (WouldBlock(ec)) {
    ec = {};
    return rest;
  }
  if (ec) return rest;
  if (written < head.size()) {
    rest[0] += written;
  } else {
    rest[0] = asio::const_buffer();
    rest[1] += written - head.size();
  }
  return rest;
}

asio::awaitable<Status> Call::Start(const OutgoingRequest& request) {
  std::string head;
  const size_t bound =
      kHeadFixed + request.method.size() + request.target.size() + origin_.host_header.size() +
      request.content_type.size() + request.accept.size() + request.authorization.size() +
      request.request_id.size() + request.traceparent.size() + request.extra_headers.size();
  WriteText(head, bound, [&](TextWriter& w) {
    w.Put(request.method);
    w.Put(' ');
    w.Put(request.target);
    w.Put(" HTTP/1.1\r\nHost: "sv);
    w.Put(origin_.host_header);
    w.Put("\r\nContent-Length: "sv);
    w.PutDecimal(request.body.size());
    w.Put("\r\nContent-Type: "sv);
    w.Put(request.content_type);
    // `line` is "\r\n" + the header's name + ": ".
    const auto add = [&w](std::string_view line, std::string_view value) {
      if (value.empty()) return;
      w.Put(line);
      w.Put(value);
    };
    add("\r\nAccept: "sv, request.accept);
    add("\r\nAuthorization: "sv, request.authorization);
    add("\r\nx-request-id: "sv, request.request_id);
    add("\r\ntraceparent: "sv, request.traceparent);
    add("\r\n"sv, request.extra_headers);
    w.Put("\r\n\r\n"sv);
  });

  // A free slot is taken without the waiting coroutine's frame (one per request).
  if (!TryEnter()) {
    const Status entered = co_await Enter();
    if (!entered.ok()) co_return entered;
  }
  if (origin_.http2 && pool_.h2().SpeaksHttp2(origin_)) {
    bool fell_back = false;
    const Status started = co_await StartHttp2(request, fell_back);
    if (!fell_back) co_return started;
  }
  connection_ = pool_.Acquire(origin_);
  reused_ = connection_ != nullptr;
  // The exchange runs in this frame, not a coroutine of its own (one per request). The request
  // is written without suspending when the socket takes it whole (the usual case: a request
  // fits the send buffer of a connection with nothing in flight; over TLS, up to a record of
  // 16 KB per write); what it does not take is written asynchronously.
  for (;;) {
    if (!connection_) {
      const Status connected = co_await Connect();
      if (!connected.ok()) co_return connected;
    }
    BeginExchange();
    UpstreamConnection& c = *connection_;
    boost::system::error_code ec;
    const std::array<asio::const_buffer, 2> rest = WriteNow(head, request.body, ec);
    if (!ec && asio::buffer_size(rest) > 0) {
      if (c.tls) {
        const auto [wec, wn] = co_await asio::async_write(*c.tls, rest, kTuple);
        ec = wec;
      } else {
        const auto [wec, wn] = co_await asio::async_write(c.plain, rest, kTuple);
        ec = wec;
      }
    }
    if (!ec) {
      request_sent_at_ = Clock::now();
      if (c.tls) {
        const boost::system::error_code head_ec =
            co_await net::ReadHeader(*c.tls, c.buffer, *parser_, kMaxResponseHeadBytes);
        ec = head_ec;
      } else {
        const boost::system::error_code head_ec =
            co_await net::ReadHeader(c.plain, c.buffer, *parser_, kMaxResponseHeadBytes);
        ec = head_ec;
      }
    }
    ec = Classify(ec);
    if (!ec) {
      HeadReceived();
      co_return Ok{};
    }
    // A pooled connection the origin closed while idle: try once more on a fresh one.
    if (!reused_ || cancelled_ || !IsStaleConnectionError(ec)) co_return Failure(ec, "request");
    pool_.probe().stale_retries.Add();
    connection_->Close();
    connection_.reset();
    reused_ = false;
  }
}

asio::awaitable<Status> Call::StartHttp2(const OutgoingRequest& request, bool& fell_back) {
  h2_ = std::make_unique<H2Call>(pool_, origin_, options_);
  if (cancelled_) h2_->Cancel();
  const Status started = co_await h2_->Start(request);
  fell_back = !started.ok() && h2_->fell_back() && !cancelled_;
  if (fell_back) {
    h2_.reset();
    co_return started;
  }
  reused_ = h2_->reused();
  connected_at_ = h2_->connected_at();
  request_sent_at_ = h2_->request_sent_at();
  head_received_at_ = h2_->head_received_at();
  content_type_ = h2_->content_type();
  co_return started;
}

void Call::HeadReceived() {
  head_received_at_ = Clock::now();
  content_type_ = parser_->field(boost::beast::http::field::content_type);
}

unsigned Call::status() const {
  if (h2_) return h2_->status();
  return parser_ ? parser_->status() : 0;
}

std::string_view Call::header(std::string_view name) const {
  if (h2_) return h2_->header(name);
  if (!parser_) return {};
  return parser_->field(name);
}

std::optional<Result<size_t>> Call::ReadBuffered(char* out, size_t size) {
  if (done_ || !connection_) return Result<size_t>(size_t{0});
  net::SetBodyBuffer(*parser_, out, size);
  beast::error_code ec;
  size_t got = 0;
  if (!net::PutBody(connection_->buffer, *parser_, size, ec, got)) return std::nullopt;
  if (ec) return Result<size_t>(Failure(Classify(ec), "reading the body"));
  if (parser_->is_done()) Finish();
  last_bytes_at_ = Clock::now();
  return Result<size_t>(got);
}

asio::awaitable<Result<size_t>> Call::ReadInto(char* out, size_t size,
                                               std::chrono::milliseconds wait) {
  if (done_ || !connection_) co_return size_t{0};
  UpstreamConnection& c = *connection_;
  connection_->Arm(wait);
  auto [ec, got] = c.tls ? co_await net::ReadBodySome(*c.tls, c.buffer, *parser_, out, size)
                         : co_await net::ReadBodySome(c.plain, c.buffer, *parser_, out, size);
  if (ec) co_return Failure(Classify(ec), "reading the body");
  if (parser_->is_done()) Finish();
  last_bytes_at_ = Clock::now();
  co_return got;
}

std::optional<Result<std::optional<std::string_view>>> Call::ReadSomeNow() {
  using Piece = std::optional<std::string_view>;
  if (h2_) return std::nullopt;
  if (!read_buffer_) read_buffer_ = KeptReadBuffers::Take(options_.read_buffer_bytes);
  if (done_ || !connection_) return Result<Piece>(Piece(std::string_view{}));
  if (last_bytes_at_ == Clock::time_point{}) last_bytes_at_ = head_received_at_;
  UpstreamConnection& c = *connection_;
  char* const out = read_buffer_.get();
  const size_t size = options_.read_buffer_bytes;
  net::SetBodyBuffer(*parser_, out, size);
  // Buffered bytes first, then reads that do not suspend while bytes are waiting.
  for (;;) {
    beast::error_code ec;
    size_t got = 0;
    if (net::PutBody(c.buffer, *parser_, size, ec, got)) {
      if (ec) return Result<Piece>(Failure(Classify(ec), "reading the body"));
      if (parser_->is_done()) Finish();
      last_bytes_at_ = Clock::now();
      return Result<Piece>(Piece(std::string_view(out, got)));
    }
    if (socket_empty_ || inline_reads_ >= kMaxInlineReads || !c.lowest().non_blocking()) {
      return std::nullopt;
    }
    const size_t n = c.tls ? c.tls->read_some(c.buffer.prepare(net::kReadChunkBytes), ec)
                           : c.plain.read_some(c.buffer.prepare(net::kReadChunkBytes), ec);
    if (WouldBlock(ec)) {
      socket_empty_ = true;  // so that ReadSomeWithin, next, waits without reading again
      return std::nullopt;
    }
    ++inline_reads_;
    ec = net::CommitRead(c.buffer, *parser_, ec, n);
    if (ec) return Result<Piece>(Failure(Classify(ec), "reading the body"));
  }
}

asio::awaitable<Result<std::optional<std::string_view>>> Call::ReadSomeWithin(
    std::chrono::milliseconds wait) {
  using Piece = std::optional<std::string_view>;
  if (h2_) {
    Result<Piece> piece = co_await h2_->ReadSomeWithin(wait);
    if (h2_->done()) LeaveSlot();
    co_return piece;
  }
  // ReadSomeNow, then an asynchronous read under a deadline, as often as it takes: one
  // coroutine from the socket to the caller.
  for (;;) {
    if (std::optional<Result<Piece>> now = ReadSomeNow()) co_return std::move(*now);
    UpstreamConnection& c = *connection_;
    inline_reads_ = 0;
    socket_empty_ = false;
    // A soft wait ends early with nullopt; once the silence would reach the idle timeout, the
    // whole idle timeout applies and passing it is an error.
    const auto silent =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_bytes_at_);
    const bool soft = wait.count() > 0 && options_.idle_timeout - silent > wait;
    c.Arm(soft ? wait : options_.idle_timeout);
    beast::error_code ec;
    if (c.tls) {
      auto [read_ec, n] =
          co_await c.tls->async_read_some(c.buffer.prepare(net::kReadChunkBytes), kTuple);
      ec = net::CommitRead(c.buffer, *parser_, read_ec, n);
    } else {
      auto [read_ec, n] =
          co_await c.plain.async_read_some(c.buffer.prepare(net::kReadChunkBytes), kTuple);
      ec = net::CommitRead(c.buffer, *parser_, read_ec, n);
    }
    if (!ec) continue;
    ec = Classify(ec);
    // The soft wait passed with nothing read: the connection is intact (the cancelled read
    // took no bytes), so the caller may read again.
    if (soft && ec == beast::error::timeout && !cancelled_) co_return Piece{};
    co_return Failure(ec, "reading the body");
  }
}

asio::awaitable<Result<std::string_view>> Call::ReadSome() {
  Result<std::optional<std::string_view>> piece =
      co_await ReadSomeWithin(std::chrono::milliseconds::zero());
  if (!piece.ok()) co_return piece.error();
  co_return *piece.value();  // no soft wait, so never nullopt
}

std::optional<Result<std::string>> Call::ReadAllBuffered(size_t max_bytes) {
  if (h2_ || done_ || !connection_) return std::nullopt;
  const auto length = parser_->content_length();
  if (!length || *length > max_bytes || connection_->buffer.size() < *length) return std::nullopt;
  std::string body(static_cast<size_t>(*length), '\0');
  std::optional<Result<size_t>> got = ReadBuffered(body.data(), body.size());
  if (got && !got->ok()) return Result<std::string>(got->error());
  if (!got || !done_ || got->value() != body.size()) {
    // Not reached: a body of Content-Length bytes, all of them buffered, ends here.
    return Result<std::string>(Error{ErrorCode::kUpstreamBadResponse,
                                     "upstream response body shorter than its length", ""});
  }
  return Result<std::string>(std::move(body));
}

asio::awaitable<Result<std::string>> Call::ReadAll(size_t max_bytes) {
  if (h2_) {
    Result<std::string> all = co_await h2_->ReadAll(max_bytes);
    if (h2_->done()) LeaveSlot();
    co_return all;
  }
  std::string body;
  // With a Content-Length the body is read straight into its final string.
  const auto length = parser_->content_length();
  if (length && *length > max_bytes) {
    co_return Error{ErrorCode::kUpstreamBadResponse,
                    "upstream response larger than " + std::to_string(max_bytes) + " bytes", ""};
  }
  while (!done_) {
    const size_t used = body.size();
    const size_t room = length ? static_cast<size_t>(*length) - used : options_.read_buffer_bytes;
    body.resize(used + std::max<size_t>(room, 1));
    // The bytes the head's read brought along (often the whole body) are taken without
    // ReadInto's coroutine.
    std::optional<Result<size_t>> got = ReadBuffered(body.data() + used, body.size() - used);
    if (!got) {
      Result<size_t> read =
          co_await ReadInto(body.data() + used, body.size() - used, options_.idle_timeout);
      got.emplace(std::move(read));
    }
    if (!got->ok()) co_return got->error();
    body.resize(used + got->value());
    if (body.size() > max_bytes) {
      co_return Error{ErrorCode::kUpstreamBadResponse,
                      "upstream response larger than " + std::to_string(max_bytes) + " bytes", ""};
    }
    if (got->value() == 0) break;
  }
  co_return body;
}

void Call::Finish() {
  if (done_) return;
  done_ = true;
  if (!connection_) {
    LeaveSlot();
    return;
  }
  net::DisarmDeadline(connection_->deadline);
  if (parser_->is_done() && parser_->keep_alive() && !cancelled_) {
    pool_.Release(origin_, std::move(connection_));
  } else {
    connection_->Close();
    connection_.reset();
  }
  LeaveSlot();  // after the release, so that a waiter handed the slot finds the connection
}

void Call::Cancel() {
  cancelled_ = true;
  if (h2_) h2_->Cancel();
  if (waiting_ != nullptr) waiting_->Cancel();
  if (connection_) connection_->Close();
}

}  // namespace turnpike::upstream
