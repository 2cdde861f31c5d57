// StreamEvents -> Cohere v2 Chat's named SSE events, for clients of the inbound /v2/chat route
// (internal to providers/cohere/).
//
//   kStart         -> message-start (id)
//   kTextDelta     -> content-start (type text) when no text block is open, content-delta
//                     (delta.message.content.text)
//   kReasoningDelta -> content-start (type thinking) when no thinking block is open,
//                     content-delta (delta.message.content.thinking), as Cohere's reasoning
//                     models stream it
//   kToolCallStart -> content-end / tool-call-end of the open block, tool-call-start
//   kToolArgsDelta -> tool-call-delta of the open call
//   kFinish        -> the open block closed; the reason remembered
//   kUsage         -> remembered
//   kEnd           -> message-end (finish_reason, usage: billed_units and tokens)
//   kError         -> message-end with finish_reason ERROR and the error's message
// Signatures and redacted reasoning render nothing: Cohere has no field for them.
//
// Each event is `event: <type>` plus data whose `type` repeats it (the SDK reads either). The
// index of content events counts text and thinking blocks, of tool-call events tool calls. State:
// the open block and a few counters.
#pragma once

#include <string>

#include "providers/provider.h"

namespace turnpike::providers::cohere {

class CohereStreamEncoder final : public StreamEncoder {
 public:
  void OnEvent(const StreamEvent& event) override;

 private:
  enum class Block : uint8_t { kNone, kText, kThinking, kTool };

  void Content(Block block, std::string_view field, std::string_view text);
  void Start(std::string_view id);
  void Open(std::string_view type);
  void CloseBlock();
  void End(std::string_view reason, std::string_view message);

  bool started_ = false;
  bool done_ = false;
  Block block_ = Block::kNone;
  int32_t contents_ = 0;  // text and thinking blocks opened so far
  int32_t tools_ = 0;     // tool calls opened so far
  FinishReason finish_ = FinishReason::kNone;
  TokenUsage usage_;
};

// COMPLETE, STOP_SEQUENCE, MAX_TOKENS or TOOL_CALL.
std::string_view FinishReasonName(FinishReason finish);

}  // namespace turnpike::providers::cohere
