#include "http/http2_session.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <string>

#include "http/http2_exchange.h"

namespace turnpike::http {
namespace {

namespace net = boost::asio;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr size_t kReadBytes = 16 * 1024;

template <typename Stream>
std::string ClientAddress(BasicConnection<Stream>& c) {
  boost::system::error_code ec;
  auto ep = c.socket().remote_endpoint(ec);
  if (ec) return {};
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

// After a write: the idle timeout when no stream is open, else no deadline.
template <typename Stream>
void ArmIdle(BasicConnection<Stream>& c, const Http2Connection& core,
             std::chrono::milliseconds idle_timeout) {
  if (core.open_streams() == 0) {
    c.Arm(idle_timeout);
  } else {
    c.Disarm();
  }
}

template <typename Stream>
net::awaitable<void> WriteLoop(SessionContext ctx, std::shared_ptr<BasicConnection<Stream>> conn,
                               std::shared_ptr<Http2Connection> core) {
  BasicConnection<Stream>& c = *conn;
  std::string out;
  for (;;) {
    out.clear();
    const bool sound = core->TakeOutput(out);
    if (!out.empty()) {
      c.Arm(c.write_timeout);
      core->writing = true;
      auto [ec, n] = co_await net::async_write(c.stream, net::buffer(out), kTuple);
      core->writing = false;
      if (ec) break;
      ArmIdle(c, *core, ctx.options.idle_timeout);
      continue;
    }
    if (!sound || core->reader_done || !core->Alive()) break;
    net::steady_timer& signal = core->work_signal();
    signal.expires_at(net::steady_timer::time_point::max());
    auto [ec] = co_await signal.async_wait(kTuple);
    (void)ec;  // Wake() cancels the wait
  }
  core->ConnectionLost();
  boost::system::error_code ignored;
  c.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  c.Close();
}

// A stream's error answer, in the handler's error shape. A coroutine of its own, so that its
// locals stay off ServeHttp2Stream's frame, which every request has: the per-thread frame cache
// serves frames only up to 1 KiB (common/small_blocks.h; a bigger one is a malloc and a free per
// request).
net::awaitable<void> AnswerError(const SessionContext& ctx, Http2Exchange& exchange, ErrorCode code,
                                 std::string_view message) {
  const Error error{code, std::string(message), ""};
  std::string body = ctx.handler.RenderError(exchange.request().target(), error);
  const bool sent = co_await exchange.Respond(static_cast<unsigned>(HttpStatus(code)),
                                              "application/json", std::move(body));
  (void)sent;
}

}  // namespace

net::awaitable<void> ServeHttp2Stream(SessionContext ctx,
                                      std::shared_ptr<Http2Connection> connection,
                                      std::shared_ptr<Http2Stream> stream) {
  InFlight in_flight(ctx.exchanges);
  const bool draining = ctx.draining.load(std::memory_order_relaxed);
  {
    Http2Exchange exchange(connection, stream, draining);
    if (stream->headers_too_large) {
      co_await AnswerError(ctx, exchange, ErrorCode::kHeadersTooLarge,
                           "request header fields too large");
    } else if (stream->body_too_large) {
      co_await AnswerError(ctx, exchange, ErrorCode::kPayloadTooLarge, "request body too large");
    } else {
      co_await ctx.handler.Handle(exchange);
      if (!exchange.answered()) {
        co_await AnswerError(ctx, exchange, ErrorCode::kInternal, "the handler gave no answer");
      }
    }
  }
  if (draining || ctx.draining.load(std::memory_order_relaxed)) connection->Shutdown();
}

std::shared_ptr<Http2Connection> MakeHttp2Connection(SessionContext ctx,
                                                     net::any_io_executor executor,
                                                     std::string client_address) {
  Http2Limits limits;
  limits.max_concurrent_streams = ctx.options.http2_max_concurrent_streams;
  limits.max_header_bytes = ctx.options.max_header_bytes;
  limits.max_header_fields = ctx.options.max_header_fields;
  limits.max_body_bytes = ctx.options.max_body_bytes;
  limits.stream_write_timeout = ctx.options.idle_timeout;  // HTTP/1.1's write timeout
  // The callback holds no reference to the connection (that would be a cycle); nghttp2 calls
  // it from inside the connection, which is alive then.
  auto connection = std::make_shared<Http2Connection>(executor, limits, ctx.http2,
                                                      std::move(client_address), nullptr);
  Http2Connection* raw = connection.get();
  connection->set_on_request([ctx, raw, executor](std::shared_ptr<Http2Stream> stream) {
    net::co_spawn(executor, ServeHttp2Stream(ctx, raw->shared_from_this(), std::move(stream)),
                  net::detached);
  });
  return connection;
}

template <typename Stream>
net::awaitable<void> RunHttp2Session(SessionContext ctx,
                                     std::shared_ptr<BasicConnection<Stream>> connection) {
  BasicConnection<Stream>& c = *connection;
  std::shared_ptr<Http2Connection> core =
      MakeHttp2Connection(ctx, c.stream.get_executor(), ClientAddress(c));
  net::co_spawn(c.stream.get_executor(), WriteLoop(ctx, connection, core), net::detached);
  bool sound = true;
  if (c.buffer.size() > 0) {
    const auto data = c.buffer.data();
    sound = core->Receive(std::string_view(static_cast<const char*>(data.data()), data.size()));
    c.buffer.consume(c.buffer.size());
    core->Wake();
  }
  while (sound && core->WantsRead()) {
    if (core->open_streams() == 0) {
      c.Arm(ctx.options.idle_timeout);
    } else if (!core->writing) {
      c.Disarm();  // a stream waits on its handler: no deadline for the client
    }
    auto [ec, n] = co_await c.stream.async_read_some(c.buffer.prepare(kReadBytes), kTuple);
    if (ec && c.deadline_hit() && core->open_streams() == 0) {
      // Idle: end with GOAWAY NO_ERROR (the writer sends it, then closes), not a bare close.
      core->Shutdown();
      core->reader_done = true;
      core->Wake();
      co_return;
    }
    if (ec) break;
    c.buffer.commit(n);
    const auto data = c.buffer.data();
    sound = core->Receive(std::string_view(static_cast<const char*>(data.data()), data.size()));
    c.buffer.consume(c.buffer.size());
    if (ctx.draining.load(std::memory_order_relaxed)) core->Shutdown();
    core->Wake();
  }
  core->reader_done = true;
  if (sound && core->WantsRead()) core->ConnectionLost();  // the client left
  core->Wake();
}

template net::awaitable<void> RunHttp2Session(SessionContext, std::shared_ptr<Connection>);
template net::awaitable<void> RunHttp2Session(SessionContext, std::shared_ptr<TlsConnection>);

}  // namespace turnpike::http
