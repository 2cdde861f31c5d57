#include "gateway/stream_relay.h"

#include <boost/asio/use_awaitable.hpp>
#include <cstdint>

#include "gateway/openai_errors.h"
#include "gateway/server_timing.h"

namespace turnpike::gateway {
namespace net = boost::asio;

namespace {
constexpr std::string_view kKeepAliveComment = ": keep-alive\n\n";

bool Contains(std::string_view outer, std::string_view inner) {
  const auto begin = reinterpret_cast<uintptr_t>(outer.data());
  const auto at = reinterpret_cast<uintptr_t>(inner.data());
  return at >= begin && at + inner.size() <= begin + outer.size();
}
}  // namespace

net::awaitable<void> StreamRelay::Run() {
  exchange_.response_headers().Add("Cache-Control", "no-cache");
  if (server_timing_) {
    exchange_.response_headers().Add("Server-Timing",
                                     ServerTimingHeader(ctx_.phases, pipeline::Clock::now()));
  }
  const bool started = co_await exchange_.StartStream(200, "text/event-stream");
  ctx_.status = 200;
  ctx_.phases.client_head = exchange_.head_sent_at();
  if (!started) {
    ctx_.status = 499;
    call_.Cancel();
    co_return;
  }
  co_await Pump();
  Settle();
}

net::awaitable<void> StreamRelay::Pump() {
  // One loop, no second coroutine: a read that waits longer than the keep-alive interval
  // returns empty-handed, a comment goes out, and the read starts again.
  for (;;) {
    Result<std::optional<std::string_view>> read = co_await call_.ReadSomeWithin(keepalive_);
    if (exchange_.client_gone()) {
      ctx_.status = 499;
      call_.Cancel();
      co_return;
    }
    if (!read.ok()) {
      co_await FailMidStream(read.error());
      co_return;
    }
    if (!read.value()) {
      if (!co_await exchange_.Write(kKeepAliveComment)) {
        ctx_.status = 499;
        call_.Cancel();
        co_return;
      }
      continue;
    }
    const std::string_view piece = *read.value();
    if (piece.empty()) break;
    // Forwarded events that lie one after the other in `piece` go out as a view of it (no
    // copy); an event completed from the parser's buffered tail, or one after a dropped event,
    // sends this read's events through out_ instead.
    std::string_view span;
    Status fed = parser_.Feed(piece, [this, piece, &span](const stream::SseEvent& event) {
      if (event.has_data) {
        const stream::ChunkKind kind = accumulator_.Consume(event.data);
        // Dropped: the events after it are no longer adjacent to `span`.
        if (kind == stream::ChunkKind::kUsageOnly && !client_wants_usage_) return;
        if (ctx_.phases.first_token == pipeline::Clock::time_point{} &&
            accumulator_.saw_first_token()) {
          ctx_.phases.first_token = pipeline::Clock::now();
        }
      }
      const bool adjacent = span.empty() || span.data() + span.size() == event.raw.data();
      if (out_.empty() && adjacent && Contains(piece, event.raw)) {
        span = std::string_view(span.empty() ? event.raw.data() : span.data(),
                                span.size() + event.raw.size());
        return;
      }
      out_.append(span);
      span = {};
      out_.append(event.raw);
    });
    if (!fed.ok()) {
      call_.Cancel();
      co_await FailMidStream(fed.error());
      co_return;
    }
    // Either every forwarded event is in `span`, or they were all copied to out_.
    const std::string_view output = out_.empty() ? span : std::string_view(out_);
    if (output.empty()) continue;
    const bool written = co_await exchange_.Write(output);
    out_.clear();
    if (!written) {
      ctx_.status = 499;
      call_.Cancel();
      co_return;
    }
  }
  co_await exchange_.EndStream();
}

net::awaitable<void> StreamRelay::FailMidStream(const Error& error) {
  ctx_.error = error.code;
  ctx_.status = 200;  // the client got a 200 head; the failure is in the stream and the log
  const std::string event = OpenAiStreamErrorEvent(error);
  if (co_await exchange_.Write(event)) co_await exchange_.EndStream();
}

void StreamRelay::Settle() {
  const stream::Usage& usage = accumulator_.usage();
  ctx_.usage = {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens};
  if (!accumulator_.choices().empty())
    ctx_.finish_reason = accumulator_.choices().front().finish_reason;
  int64_t output_bytes = 0;
  for (const stream::Choice& choice : accumulator_.choices()) {
    output_bytes += static_cast<int64_t>(choice.content.size());
    for (const stream::ToolCall& call : choice.tool_calls) {
      output_bytes += static_cast<int64_t>(call.name.size() + call.arguments.size());
    }
  }
  ctx_.output_bytes = output_bytes;
}

}  // namespace turnpike::gateway
