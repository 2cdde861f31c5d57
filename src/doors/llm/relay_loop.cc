#include "doors/llm/relay_loop.h"

#include <boost/asio/use_awaitable.hpp>

#include "core/server_timing.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kKeepAliveComment = ": keep-alive\n\n";
}  // namespace

net::awaitable<void> RelayLoop::Run() {
  exchange_.response_headers().Add("Cache-Control", "no-cache");
  if (server_timing_) {
    exchange_.response_headers().Add("Server-Timing",
                                     ServerTimingHeader(ctx_.phases, core::Clock::now()));
  }
  const bool started = co_await exchange_.StartStream(200, "text/event-stream");
  ctx_.status = 200;
  ctx_.phases.client_head = exchange_.head_sent_at();
  if (!started) {
    ClientLeft();
    co_return;
  }
  co_await Pump();
  Settle();
}

void RelayLoop::ClientLeft() {
  ctx_.status = 499;
  call_.Cancel();
}

net::awaitable<void> RelayLoop::Pump() {
  for (;;) {
    Result<std::optional<std::string_view>> read = co_await call_.ReadSomeWithin(keepalive_);
    if (exchange_.client_gone()) {
      ClientLeft();
      co_return;
    }
    if (!read.ok()) {
      ctx_.error = read.error().code;
      const std::string_view event = Fail(read.error());
      if (co_await exchange_.Write(event)) co_await exchange_.EndStream();
      co_return;
    }
    if (!read.value()) {  // silent for `keepalive`
      if (!co_await exchange_.Write(kKeepAliveComment)) {
        ClientLeft();
        co_return;
      }
      continue;
    }
    const std::string_view piece = *read.value();
    if (piece.empty()) break;
    const Output output = Feed(piece);
    if (!output.bytes.empty() && !co_await exchange_.Write(output.bytes)) {
      ClientLeft();
      co_return;
    }
    if (!output.go_on) {
      call_.Cancel();
      co_await exchange_.EndStream();
      co_return;
    }
  }
  const std::string_view last = End();
  if (!last.empty() && !co_await exchange_.Write(last)) {
    ctx_.status = 499;  // the upstream call is already over
    co_return;
  }
  co_await exchange_.EndStream();
}

}  // namespace turnpike::doors::llm
