#include "doors/llm/stream_relay.h"

#include <cstdint>

#include "core/openai_errors.h"

namespace turnpike::doors::llm {
namespace {

bool Contains(std::string_view outer, std::string_view inner) {
  const auto begin = reinterpret_cast<uintptr_t>(outer.data());
  const auto at = reinterpret_cast<uintptr_t>(inner.data());
  return at >= begin && at + inner.size() <= begin + outer.size();
}
}  // namespace

RelayLoop::Output StreamRelay::Feed(std::string_view piece) {
  out_.clear();
  // Forwarded events that lie one after the other in `piece` go out as a view of it (no
  // copy); an event completed from the parser's buffered tail, or one after a dropped event,
  // sends this read's events through out_ instead.
  std::string_view span;
  Status fed = parser_.Feed(piece, [this, piece, &span](const stream::SseEvent& event) {
    if (event.has_data) {
      const stream::ChunkKind kind = accumulator_.Consume(event.data);
      // Dropped: the events after it are no longer adjacent to `span`.
      if (kind == stream::ChunkKind::kUsageOnly && !client_wants_usage_) return;
      if (ctx_.phases.first_token == core::Clock::time_point{} && accumulator_.saw_first_token()) {
        ctx_.phases.first_token = core::Clock::now();
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
    // The events split before the failure go out, then the error event ends the stream.
    out_.append(span);
    ctx_.error = fed.error().code;
    out_ += core::OpenAiStreamErrorEvent(fed.error());
    return {out_, false};
  }
  // Either every forwarded event is in `span`, or they were all copied to out_.
  return {out_.empty() ? span : std::string_view(out_), true};
}

std::string_view StreamRelay::Fail(const Error& error) {
  out_ = core::OpenAiStreamErrorEvent(error);
  return out_;
}

void StreamRelay::Settle() {
  const stream::Usage& usage = accumulator_.usage();
  ctx_.usage = {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, -1,
                usage.reasoning_tokens};
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

}  // namespace turnpike::doors::llm
