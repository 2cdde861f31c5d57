// Renders the mock's replies in Cohere's v2 Chat wire shapes
// (https://docs.cohere.com/reference/chat, .../chat-stream, https://docs.cohere.com/docs/streaming,
// https://docs.cohere.com/reference/errors) by appending to strings: the chat response, the SSE
// event stream and the error body.
//
// Written independently of providers/cohere/ on purpose: the mock is the fake upstream the
// translator is tested against, so it must not share the translator's reading of the API.
// Usage: billed_units carry the mock's prompt and completion counts; `tokens` adds
// kPromptTemplateTokens to the input (Cohere counts its prompt template there but does not bill
// it), so a client can tell which one the gateway priced; cached_tokens appears when non-zero.
// CohereStreamRenderer renders into one reused buffer, so a token costs no allocation; the view
// it returns stays valid until its next call. Thread-compatible: one renderer per stream.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "mock/openai_render.h"

namespace turnpike::mock {

// The input tokens Cohere's `usage.tokens` counts beyond the billed ones in the mock's replies.
inline constexpr uint64_t kPromptTemplateTokens = 64;

// Cohere's status for an error: HttpStatus(code).
unsigned CohereStatus(ErrorCode code);

// {"id":"...","message":"..."}; a `param` prefixes the message.
std::string RenderCohereError(const Error& error);

// Cohere's finish_reason for the mock's OpenAI one: COMPLETE, MAX_TOKENS or TOOL_CALL.
std::string_view CohereFinishReason(std::string_view finish_reason);

// The non-stream reply: `tokens` text tokens, or (with a tool_plan) a call to `tool` when set.
std::string RenderCohereChat(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage);

class CohereStreamRenderer final : public StreamRenderer {
 public:
  // `reasoning_tokens`: Opening() streams a whole thinking content block of that many tokens.
  explicit CohereStreamRenderer(const ReplyIdentity& identity, int reasoning_tokens = 0)
      : identity_(identity), reasoning_tokens_(reasoning_tokens) {}

  // message-start, a thinking block (content-start, content-delta per token, content-end) when
  // reasoning, then content-start (text), or tool-plan-delta and tool-call-start (`tool`).
  std::string_view Opening(std::string_view tool) override;
  // A content-delta.
  std::string_view Token(int index) override;
  // A tool-call-delta.
  std::string_view ToolFragment(int index) override;
  // content-end or tool-call-end, then message-end (finish_reason, usage).
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  void StartEvent(std::string_view type);  // `event: <type>\ndata: {"type":"<type>"`

  const ReplyIdentity& identity_;
  const int reasoning_tokens_;
  int index_ = 0;  // the content block of the text or tool call
  bool tool_ = false;
  std::string buffer_;
};

}  // namespace turnpike::mock
