// Anthropic Messages SSE events -> StreamEvents (internal to providers/anthropic/).
//
//   message_start        -> kStart (id, model, prompt usage)
//   content_block_start  -> text: kTextDelta if it carries text; tool_use: kToolCallStart;
//                           thinking: kReasoningDelta / kReasoningSignature if it carries them;
//                           redacted_thinking: kRedactedReasoning (its data)
//   content_block_delta  -> text_delta: kTextDelta; input_json_delta: kToolArgsDelta;
//                           thinking_delta: kReasoningDelta; signature_delta: kReasoningSignature
//   content_block_stop   -> nothing
//   message_delta        -> kFinish (when stop_reason is set), kUsage (counts are cumulative)
//   message_stop         -> kEnd
//   ping, unknown types  -> nothing (Anthropic's versioning policy allows new event types)
//   error                -> kError
//
// Tool calls are numbered in order of appearance: Anthropic's block `index` also counts text
// blocks, OpenAI's tool call `index` does not. Blocks stream one at a time, so the state is
// the open block only: O(1) per stream. A block type the pivot cannot carry (server tools) is
// an error, not silently dropped.
#pragma once

#include "providers/provider.h"
#include "stream/padded_json.h"

namespace turnpike::providers::anthropic {

class AnthropicStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

 private:
  enum class Block : uint8_t { kNone, kText, kTool, kThinking, kRedacted };

  stream::PaddedJsonParser parser_;
  TokenUsage usage_;
  Error error_;                 // the last in-stream error, kept alive for its event
  bool started_ = false;        // message_start seen
  Block block_ = Block::kNone;  // the open content block
  int64_t block_index_ = -1;    // its Anthropic index
  int32_t tools_ = 0;           // tool calls started so far
};

}  // namespace turnpike::providers::anthropic
