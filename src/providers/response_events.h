// A whole answer (Response) as pivot events, and back: what serves a recorded answer in the
// other form than the one it came in (model_call/replay.h: a streamed answer rendered whole, a
// whole one streamed).
//
//   ResponseAccumulator  an EventSink that collects a stream's events into a Response: id and
//                        model (kStart), text, reasoning, the reasoning's signature (the last
//                        one: a Response has one, as a whole Anthropic answer keeps its last
//                        thinking block's), redacted payloads, tool calls by tool_index in the
//                        order they first appear (id, name, arguments; arguments for an index
//                        never started make a call with no id or name), the finish reason and
//                        stop sequence, usage (cumulative: a count a later kStart or kUsage
//                        reports replaces the earlier one, a count it does not report is kept).
//                        kError and kEnd add nothing: whether the answer completed is the
//                        caller's to know.
//   EmitResponseEvents   a Response as the events a stream carries, in a stream's order: kStart
//                        (id, model, the prompt's counts), kReasoningDelta (the whole reasoning)
//                        and kReasoningSignature, one kRedactedReasoning per payload,
//                        kTextDelta (the whole text), per tool call kToolCallStart and one
//                        kToolArgsDelta with its arguments, kFinish, kUsage (when any count is
//                        known), kEnd. Empty strings give no event.
//
// Strings: events carry them escaped, a Response unescaped (events.h). The accumulator keeps
// the escaped bytes and unescapes once, in Take; the emitter escapes each string into its own
// buffer, valid for the sink call that receives it.
//
// Ownership: an accumulator owns what it collected until Take moves it out. Threads: one
// accumulator per answer, on one thread; EmitResponseEvents is reentrant. Errors: Take fails
// (kUpstreamBadResponse) when a collected string is not valid escaped JSON text (a bad escape,
// an unpaired surrogate, invalid UTF-8).
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "providers/events.h"

namespace turnpike::providers {

class ResponseAccumulator final : public EventSink {
 public:
  void OnEvent(const StreamEvent& event) override;

  // The answer collected so far, unescaped; the accumulator is left empty.
  Result<Response> Take();

 private:
  ToolCall& CallAt(int32_t tool_index);

  Response escaped_;              // every string still in its escaped form
  std::vector<int32_t> indexes_;  // the tool_index of each of escaped_.tool_calls
};

// Sends `response` to `sink` as the events of a stream (see the top of this file).
void EmitResponseEvents(const Response& response, EventSink& sink);

}  // namespace turnpike::providers
