// Bytes a client sends on one HTTP/2 connection after the connection preface, fed to the server
// session as http/http2_session.cc feeds it (Http2Connection::Receive, in reads whose sizes the
// input gives: chunk_plan.h), with the real stream path (MakeHttp2Connection → ServeHttp2Stream
// → Http2Exchange) and a handler that answers whole, streamed or not at all (it waits for the
// client to go). Between reads the handlers run and the server's output is taken, as the writer
// coroutine would. At the end the connection is lost. Checks that every handler finished (no
// exchange left in flight) and that a stream never carries more than the body limit.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chunk_plan.h"
#include "http/exchange.h"
#include "http/handler.h"
#include "http/http2_connection.h"
#include "http/http2_session.h"
#include "http/server.h"

namespace {

namespace asio = boost::asio;
namespace http = turnpike::http;

constexpr size_t kMaxBodyBytes = 4096;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

class FuzzHandler : public http::Handler {
 public:
  asio::awaitable<void> Handle(http::Exchange& exchange) override {
    Check(exchange.request().body().size() <= kMaxBodyBytes);
    const std::string_view path = exchange.path();
    if (path == "/stream") {
      const bool started = co_await exchange.StartStream(200, "text/event-stream");
      if (started) {
        const bool written = co_await exchange.Write(std::string(100 * 1024, 'x'));
        if (written) co_await exchange.EndStream();
      }
    } else if (path == "/wait") {
      asio::steady_timer timer(co_await asio::this_coro::executor);
      timer.expires_at(asio::steady_timer::time_point::max());
      exchange.WatchClient([&timer] { timer.cancel(); });
      if (!exchange.client_gone()) {
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        (void)ec;
      }
    } else if (path == "/abort") {
      exchange.Abort();
    } else {
      co_await exchange.Respond(200, "text/plain", exchange.request().body());
    }
  }
  std::string RenderError(std::string_view, const turnpike::Error& error) const override {
    return error.message;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));
  asio::io_context io;
  http::ServerOptions options;
  options.max_body_bytes = kMaxBodyBytes;
  options.max_header_bytes = 1024;
  options.http2_max_concurrent_streams = 16;
  FuzzHandler handler;
  std::atomic<bool> draining{false};
  http::ExchangeCounts exchanges;
  http::Http2Counters counters;
  const http::SessionContext ctx{options, handler, draining, exchanges, counters};
  auto connection = http::MakeHttp2Connection(ctx, io.get_executor(), "fuzz");
  bool sound = connection->Receive(http::kHttp2Preface);
  std::string out;
  plan.ForEachChunk([&](std::string_view chunk) {
    if (!sound || !connection->WantsRead()) return;
    sound = connection->Receive(chunk);
    io.poll();
    io.restart();
    out.clear();
    connection->TakeOutput(out);
  });
  io.poll();
  io.restart();
  out.clear();
  connection->TakeOutput(out);
  connection->ConnectionLost();
  io.run();
  Check(exchanges.in_flight.load() == 0);
  return 0;
}
