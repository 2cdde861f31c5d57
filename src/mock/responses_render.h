// Renders the mock's replies in the OpenAI Responses API's wire shapes (POST /v1/responses): the
// whole `response` object and its SSE event stream.
//
// Unlike the other renderers here, this one is not written apart from providers/: it drives the
// gateway's own client-role Responses encoder (providers/openai_responses/, the code that renders
// /v1/responses for clients) with the events of the mock's reply. That encoder is held to the
// real API by the official `openai` SDK in tests/integration/responses.test.mjs and by the
// golden transcripts; what the mock tests through it is the other side, the upstream role's
// request builder and decoder, which share no code with the encoder. A bug in the encoder
// would show in those client tests, not be hidden here.
//
// ResponsesStreamRenderer renders into one reused buffer; the view it returns stays valid until
// its next call. Thread-compatible: one renderer per stream.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mock/openai_render.h"
#include "providers/provider.h"

namespace turnpike::mock {

inline constexpr std::string_view kResponsesPath = "/v1/responses";

// The whole response: `tokens` text tokens, or a call to `tool` when it is set; the request's
// fields echoed from `request_body`.
std::string RenderResponsesReply(const ReplyIdentity& identity, std::string_view request_body,
                                 int tokens, std::string_view tool, std::string_view finish_reason,
                                 const Usage& usage);

class ResponsesStreamRenderer final : public StreamRenderer {
 public:
  ResponsesStreamRenderer(const ReplyIdentity& identity, std::string_view request_body);

  // response.created, response.in_progress; for a tool call its output_item.added.
  std::string_view Opening(std::string_view tool) override;
  // The message item's opening events with the first token, then output_text.delta.
  std::string_view Token(int index) override;
  // function_call_arguments.delta.
  std::string_view ToolFragment(int index) override;
  // The done events, then response.completed (or response.incomplete for length) with usage.
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  std::string_view Feed(const providers::StreamEvent& event);

  const ReplyIdentity& identity_;
  std::unique_ptr<providers::StreamEncoder> encoder_;
  std::string text_;  // one token's text
  std::string buffer_;
};

}  // namespace turnpike::mock
