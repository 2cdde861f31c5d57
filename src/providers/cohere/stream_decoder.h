// Cohere v2 Chat SSE events -> StreamEvents (internal to providers/cohere/).
//
//   message-start                  -> kStart (id; Cohere names no model)
//   content-start / content-delta  -> kTextDelta for delta.message.content.text (non-empty);
//                                     `thinking` content is not carried (see README.md)
//   tool-plan-delta                -> nothing: the plan is not part of the answer
//   tool-call-start                -> kToolCallStart (+ kToolArgsDelta when it has arguments)
//   tool-call-delta                -> kToolArgsDelta
//   message-end                    -> kFinish, kUsage, kEnd; finish_reason ERROR or TIMEOUT
//                                     -> kError instead
//   content-end, tool-call-end, citation-*, debug, unknown types -> nothing
//
// Tool calls are numbered in order of appearance: each tool-call-start opens the next index and
// later deltas belong to it (Cohere streams calls one after the other). State is a few counters:
// O(1) per stream; no text is kept.
#pragma once

#include "providers/provider.h"
#include "stream/padded_json.h"

namespace turnpike::providers::cohere {

class CohereStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

 private:
  stream::PaddedJsonParser parser_;
  TokenUsage usage_;
  Error error_;           // the in-stream error, kept alive for its event
  bool started_ = false;  // message-start seen
  int32_t tools_ = 0;     // tool calls started so far
};

}  // namespace turnpike::providers::cohere
