#include "http/session.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <optional>

#include "http/connection.h"
#include "http/http1_exchange.h"
#include "http/http2_session.h"
#include "http/tls_context.h"
#include "net/http_read.h"
#include "net/request_parser.h"

namespace turnpike::http {
namespace {

namespace net = boost::asio;
namespace tpnet = ::turnpike::net;
namespace beast = boost::beast;
namespace bhttp = beast::http;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr size_t kFirstReadBytes = 16 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// After an error answer, unread request bytes would make close() send a reset that can destroy
// the answer before the client reads it; so read and discard for a while first (nginx's
// lingering close).
constexpr std::chrono::milliseconds kLingerTime{500};
constexpr size_t kLingerBytes = 1024 * 1024;
// How long a TLS close waits for the client's close_notify after sending ours.
constexpr std::chrono::milliseconds kTlsCloseTime{1'000};

// Maps a failed read to the error the client should see; nullopt = close silently (the client
// left, or the connection sat idle).
std::optional<Error> ReadError(beast::error_code ec, bool timed_out, bool got_bytes) {
  if (ec == bhttp::error::header_limit) {
    return Error{ErrorCode::kHeadersTooLarge, "request header fields too large", ""};
  }
  if (ec == bhttp::error::body_limit) {
    return Error{ErrorCode::kPayloadTooLarge, "request body too large", ""};
  }
  if (timed_out) {
    if (!got_bytes) return std::nullopt;
    return Error{ErrorCode::kRequestTimeout, "timed out reading the request", ""};
  }
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted ||
      ec == bhttp::error::partial_message) {
    return std::nullopt;
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
    return Error{ErrorCode::kInvalidRequest, "malformed HTTP request: " + ec.message(), ""};
  }
  return std::nullopt;
}

template <typename Fields>
bool TooManyFields(const Fields& fields, size_t limit) {
  size_t n = 0;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (++n > limit) return true;
  }
  return false;
}

template <typename Stream>
net::awaitable<void> AnswerReadError(SessionContext& ctx,
                                     const std::shared_ptr<BasicConnection<Stream>>& conn,
                                     Request& request, const Error& error) {
  request.keep_alive(false);
  BasicHttp1Exchange<Stream> exchange(conn, request, Clock::now(), true);
  std::string body = ctx.handler.RenderError(request.target(), error);
  co_await exchange.Respond(static_cast<unsigned>(HttpStatus(error.code)), "application/json",
                            std::move(body));
}

// close_notify, then the client's (or its end of stream) under a deadline. Sent once, and only
// while the connection is sound: not after a reset, a stalled write or a cut handshake.
net::awaitable<void> CloseTls(TlsConnection& c, std::chrono::milliseconds wait) {
  if (c.peer_gone || !c.socket().is_open()) co_return;
  if ((SSL_get_shutdown(c.stream.native_handle()) & SSL_SENT_SHUTDOWN) != 0) co_return;
  c.Arm(wait);
  auto [ec] = co_await c.stream.async_shutdown(kTuple);
  (void)ec;  // eof, stream_truncated, a timeout: the connection closes either way
}

// The end of a connection that may have unread request bytes (see kLingerTime). Over TLS the
// same role is played by the close_notify exchange, bounded by kLingerTime.
template <typename Stream>
net::awaitable<void> LingeringClose(BasicConnection<Stream>& c) {
  if constexpr (BasicConnection<Stream>::kTls) {
    co_await CloseTls(c, kLingerTime);
  } else {
    beast::error_code ec;
    c.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
    c.Arm(kLingerTime);
    size_t discarded = 0;
    char scratch[4096];
    while (discarded < kLingerBytes) {
      auto [rec, n] = co_await c.stream.async_read_some(net::buffer(scratch), kTuple);
      if (rec) break;
      discarded += n;
    }
  }
}

enum class Preface { kHttp1, kHttp2, kClosed };

// Reads until the buffer holds the HTTP/2 preface or bytes that cannot begin it. Bytes stay in
// the buffer for whichever protocol serves them.
net::awaitable<Preface> ReadPreface(Connection& c) {
  for (;;) {
    const auto data = c.buffer.data();
    const std::string_view seen(static_cast<const char*>(data.data()), data.size());
    const size_t n = std::min(seen.size(), kHttp2Preface.size());
    if (seen.substr(0, n) != kHttp2Preface.substr(0, n)) co_return Preface::kHttp1;
    if (n == kHttp2Preface.size()) co_return Preface::kHttp2;
    auto [ec, got] = co_await c.stream.async_read_some(c.buffer.prepare(kFirstReadBytes), kTuple);
    if (ec) co_return Preface::kClosed;
    c.buffer.commit(got);
  }
}

}  // namespace

template <typename Stream>
net::awaitable<void> RunSession(SessionContext ctx,
                                std::shared_ptr<BasicConnection<Stream>> connection) {
  BasicConnection<Stream>& c = *connection;
  bool first = true;
  for (;;) {
    // Wait for the next request: the idle timeout applies until its first bytes arrive, then
    // the header timeout.
    if (c.buffer.size() == 0) {
      c.Arm(first ? ctx.options.read_headers_timeout : ctx.options.idle_timeout);
      auto [ec, n] = co_await c.stream.async_read_some(c.buffer.prepare(kFirstReadBytes), kTuple);
      if (ec) break;
      c.buffer.commit(n);
    }
    if constexpr (!BasicConnection<Stream>::kTls) {
      if (first && ctx.options.http2) {
        const Preface preface = co_await ReadPreface(c);
        if (preface == Preface::kClosed) break;
        if (preface == Preface::kHttp2) {
          co_await RunHttp2Session(ctx, std::move(connection));
          co_return;
        }
      }
    }
    first = false;
    const Clock::time_point started = Clock::now();

    c.arena.Reset();  // the previous request's parser is gone
    tpnet::RequestParser parser(c.arena);
    parser.body_limit(ctx.options.max_body_bytes);
    // A head that came whole (the usual case) is parsed here, without ReadHeader's coroutine.
    size_t head_bytes = 0;
    beast::error_code hec;
    if (!tpnet::ParseBufferedHeader(c.buffer, parser, ctx.options.max_header_bytes, head_bytes,
                                    hec)) {
      c.Arm(ctx.options.read_headers_timeout);
      const beast::error_code read_ec = co_await tpnet::ReadHeader(
          c.stream, c.buffer, parser, ctx.options.max_header_bytes, head_bytes);
      hec = read_ec;
    }
    if (hec) {
      if (auto error = ReadError(hec, c.deadline_hit(), true)) {
        co_await AnswerReadError(ctx, connection, parser.get(), *error);
        co_await LingeringClose(c);
      }
      break;
    }
    if (TooManyFields(parser.get(), ctx.options.max_header_fields)) {
      const Error error{ErrorCode::kHeadersTooLarge, "too many request header fields", ""};
      co_await AnswerReadError(ctx, connection, parser.get(), error);
      co_await LingeringClose(c);
      break;
    }
    if (!parser.is_done()) {
      // A body that came with its head is parsed here, without ReadBody's coroutine; a client
      // that asked for 100 Continue gets it before the body is waited for.
      const bool expect_continue =
          beast::iequals(FieldValue(parser.get(), bhttp::field::expect), "100-continue");
      beast::error_code bec;
      if (expect_continue || !tpnet::ParseBufferedBody(c.buffer, parser, bec)) {
        if (expect_continue) {
          c.Arm(ctx.options.read_body_timeout);
          auto [wec, wn] = co_await net::async_write(c.stream, net::buffer(kContinue), kTuple);
          if (wec) break;
        }
        c.Arm(ctx.options.read_body_timeout);
        const beast::error_code read_ec = co_await tpnet::ReadBody(c.stream, c.buffer, parser);
        bec = read_ec;
      }
      if (bec) {
        if (auto error = ReadError(bec, c.deadline_hit(), true)) {
          co_await AnswerReadError(ctx, connection, parser.get(), *error);
          co_await LingeringClose(c);
        }
        break;
      }
    }
    c.Disarm();

    Request request = parser.release();
    bool keep_alive = false;
    {
      InFlight in_flight(ctx.exchanges);
      BasicHttp1Exchange<Stream> exchange(connection, request, started,
                                          ctx.draining.load(std::memory_order_relaxed));
      co_await ctx.handler.Handle(exchange);
      if (!exchange.answered()) {
        const Error error{ErrorCode::kInternal, "the handler gave no answer", ""};
        std::string body = ctx.handler.RenderError(request.target(), error);
        co_await exchange.Respond(500, "application/json", std::move(body));
      }
      keep_alive = exchange.keep_alive();
    }
    if (!keep_alive) break;
  }
  if constexpr (BasicConnection<Stream>::kTls) {
    co_await CloseTls(c, kTlsCloseTime);
  } else {
    beast::error_code ec;
    c.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  }
  c.Close();
}

template net::awaitable<void> RunSession(SessionContext, std::shared_ptr<Connection>);
template net::awaitable<void> RunSession(SessionContext, std::shared_ptr<TlsConnection>);

net::awaitable<void> RunTlsSession(SessionContext ctx, std::shared_ptr<TlsConnection> connection,
                                   std::chrono::milliseconds handshake_timeout,
                                   std::atomic<uint64_t>& failed_handshakes) {
  TlsConnection& c = *connection;
  c.Arm(handshake_timeout);
  auto [ec] = co_await c.stream.async_handshake(net::ssl::stream_base::server, kTuple);
  if (ec) {
    failed_handshakes.store(failed_handshakes.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    c.Close();
    co_return;
  }
  if (ctx.options.http2 && TlsContext::Protocol(c.stream.native_handle()) == "h2") {
    c.Disarm();
    co_await RunHttp2Session(ctx, std::move(connection));
    co_return;
  }
  co_await RunSession(ctx, std::move(connection));
}

}  // namespace turnpike::http
