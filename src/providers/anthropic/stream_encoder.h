// StreamEvents -> Anthropic Messages SSE, for clients of the inbound /v1/messages API
// (internal to providers/anthropic/).
//
//   kStart         -> message_start (usage: the prompt counts known so far, else 0)
//   kTextDelta     -> content_block_start (text) when no text block is open, content_block_delta
//   kToolCallStart -> content_block_stop of the open block, content_block_start (tool_use)
//   kToolArgsDelta -> content_block_delta (input_json_delta) of the open tool_use block
//   kReasoningDelta, kReasoningSignature
//                  -> content_block_start (thinking, empty signature) when no thinking block is
//                     open, content_block_delta (thinking_delta / signature_delta)
//   kRedactedReasoning -> a redacted_thinking block (start with its data, stop)
//   kFinish, kUsage-> remembered; the open block is closed on kFinish
//   kEnd           -> content_block_stop if open, message_delta (stop_reason, usage), message_stop
//   kError         -> an `error` event
//
// message_delta waits for kEnd because OpenAI reports usage after the finish reason. Block
// indexes count every block in order. Arguments for a tool call other than the
// open one cannot be expressed (an Anthropic block cannot be reopened) and end the stream with
// an error event. State: the open block and a few counters.
#pragma once

#include "providers/provider.h"

namespace turnpike::providers::anthropic {

class AnthropicStreamEncoder final : public StreamEncoder {
 public:
  void OnEvent(const StreamEvent& event) override;

 private:
  enum class Block : uint8_t { kNone, kText, kTool, kThinking, kRedacted };

  void StartMessage(const StreamEvent& event);
  void OpenBlock(Block block, const StreamEvent& event);
  void CloseBlock();
  void Delta(std::string_view type, std::string_view field, std::string_view escaped);
  void End();
  void RenderError(const Error& error);

  bool started_ = false;
  bool done_ = false;
  Block block_ = Block::kNone;
  int32_t blocks_ = 0;  // blocks opened so far: the next block's index is blocks_
  int32_t tool_ = -1;   // tool_index of the open tool_use block
  FinishReason finish_ = FinishReason::kNone;
  std::string stop_sequence_;  // escaped
  TokenUsage usage_;
};

}  // namespace turnpike::providers::anthropic
