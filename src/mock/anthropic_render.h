// Renders the mock's replies in Anthropic's Messages wire shapes
// (https://docs.anthropic.com/en/api/messages, .../messages-streaming, .../errors) by
// appending to strings: the Message object, the SSE event stream and the error object.
//
// Written independently of providers/anthropic/ on purpose: the mock is the fake upstream the
// translator is tested against, so it must not share the translator's rendering.
// MessageStreamRenderer renders the parts of its events into one reused buffer, so a token
// costs no allocation; the view it returns stays valid until its next call.
// Thread-compatible: one renderer per stream.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "mock/openai_render.h"

namespace turnpike::mock {

// Anthropic's status for an error: HttpStatus(code), except overload, which is 529.
unsigned AnthropicStatus(ErrorCode code);

// {"type":"error","error":{"type":"...","message":"..."}}
std::string RenderAnthropicError(const Error& error);

// Anthropic's stop_reason for the mock's OpenAI finish reason.
std::string_view StopReasonFor(std::string_view finish_reason);

// The signature the mock puts on its thinking blocks (base64, as Anthropic's are).
inline constexpr std::string_view kMockThinkingSignature = "bW9jay10aGlua2luZy1zaWduYXR1cmU=";

// The non-stream reply: `tokens` text tokens, or a tool_use block calling `tool` when set;
// with usage.reasoning_tokens > 0, a signed thinking block first.
std::string RenderMessage(const ReplyIdentity& identity, int tokens, std::string_view tool,
                          std::string_view finish_reason, const Usage& usage);

class MessageStreamRenderer final : public StreamRenderer {
 public:
  // The input counts of `usage` go into message_start's usage.
  MessageStreamRenderer(const ReplyIdentity& identity, const Usage& usage);

  // message_start, with usage.reasoning_tokens > 0 a whole thinking block (start,
  // thinking_delta per token, signature_delta, stop), then content_block_start (text, or
  // tool_use for `tool`), then a ping.
  std::string_view Opening(std::string_view tool) override;
  // A text_delta.
  std::string_view Token(int index) override;
  // An input_json_delta.
  std::string_view ToolFragment(int index) override;
  // content_block_stop, message_delta (stop_reason, cumulative usage), message_stop.
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  void StartEvent(std::string_view type);  // `event: <type>\ndata: {"type":"<type>"`

  const ReplyIdentity& identity_;
  const Usage usage_;
  std::string buffer_;
  int index_ = 0;  // the content block of the text or tool call
};

}  // namespace turnpike::mock
