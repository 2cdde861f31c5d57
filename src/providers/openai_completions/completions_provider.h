// The OpenAI legacy completions API (https://platform.openai.com/docs/api-reference/completions)
// as a client dialect: the inbound POST /v1/completions, one prompt in, one text completion out,
// translated to any upstream deployment through the pivot (the prompt becomes one user
// message). Client role only (serves_upstream() is false). README.md in this folder has the
// mapping and what is refused.
//
// Immutable; thread-safe. Encoders it makes belong to one stream.
#pragma once

#include "providers/provider.h"

namespace turnpike::providers::openai_completions {

class CompletionsProvider final : public Provider {
 public:
  std::string_view name() const override { return "openai_completions"; }
  bool serves_upstream() const override { return false; }

  // Upstream role: not served (never called; each answers an internal error).
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  // Client role. Errors: kInvalidRequest naming the field (prompt, n, echo, logprobs, best_of,
  // suffix, ...).
  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  // {"id":"cmpl-<upstream id>","object":"text_completion",..,"choices":[{"text":..}],"usage":..}
  std::string RenderResponse(const Response& response, int64_t created) const override;
  ErrorReply RenderError(const Error& error) const override;
};

// text_completion chunks: `data: {"id":..,"object":"text_completion","created":..,"model":..,
// "choices":[{"text":..,"index":0,"logprobs":null,"finish_reason":..}]}`, one per text delta,
// one with the finish reason, then (include_usage) a usage chunk with empty choices, then
// `data: [DONE]`. Tool calls cannot occur (the request offers no tools) and are dropped.
// Errors: `data: {"error":{...}}`. State: a prefix string and the usage; no text kept.
class CompletionsStreamEncoder final : public StreamEncoder {
 public:
  explicit CompletionsStreamEncoder(const EncoderOptions& options) : options_(options) {}
  void OnEvent(const StreamEvent& event) override;

 private:
  void Start(const StreamEvent& event);
  void Chunk(std::string_view escaped_text, FinishReason finish);

  const EncoderOptions options_;
  std::string prefix_;  // `data: {"id":..,"object":"text_completion","created":..,"model":..,`
  TokenUsage usage_;
  bool started_ = false;
  bool done_ = false;
};

}  // namespace turnpike::providers::openai_completions
