// The OpenAI Responses API, stateless form (https://platform.openai.com/docs/api-reference/
// responses) as a client dialect: the inbound POST /v1/responses, translated to any upstream
// deployment through the pivot. It has no upstream role (serves_upstream() is false: the route
// table refuses `provider: openai_responses`, and the upstream methods below only answer
// errors). See provider.h for the contract and README.md in this folder for the mapping, the
// refusals and the quirks relied on.
//
// Immutable; thread-safe. Encoders it makes belong to one stream.
#pragma once

#include "providers/provider.h"

namespace turnpike::providers::openai_responses {

class ResponsesProvider final : public Provider {
 public:
  std::string_view name() const override { return "openai_responses"; }
  bool serves_upstream() const override { return false; }

  // Upstream role: not served (never called; each answers an internal error).
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  // Client role.
  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  // Encoders echo the request's fields (options.client_body) in every response snapshot.
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  // The response object with the API's default echoed fields (no request at hand).
  std::string RenderResponse(const Response& response, int64_t created) const override;
  std::string RenderWholeResponse(const Response& response,
                                  const EncoderOptions& options) const override;
  // OpenAI's error envelope and status; pivot field names are given back as the client's
  // (max_completion_tokens -> max_output_tokens, ...).
  ErrorReply RenderError(const Error& error) const override;
};

}  // namespace turnpike::providers::openai_responses
