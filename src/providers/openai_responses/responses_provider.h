// The OpenAI Responses API, stateless form (https://platform.openai.com/docs/api-reference/
// responses), both roles:
//   client role:   the inbound POST /v1/responses, translated to any upstream deployment through
//                  the pivot;
//   upstream role: deployments that say `provider: openai` with `api: responses` (the config
//                  names this dialect for them), reached from any client dialect through the
//                  pivot, and the identity path for /v1/responses clients (IdentityBody).
// See provider.h for the contract and README.md in this folder for the mapping, the refusals
// and the quirks relied on.
//
// Immutable; thread-safe. Encoders and decoders it makes belong to one stream.
#pragma once

#include "providers/provider.h"

namespace turnpike::providers::openai_responses {

class ResponsesProvider final : public Provider {
 public:
  std::string_view name() const override { return "openai_responses"; }

  // Upstream role.
  // <base>/responses for whole and streamed answers, `Authorization: Bearer <key>` when a key is
  // set; the base path is the deployment's, up to /v1, as for openai (chat).
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  // Always store:false; what the Responses API cannot express is refused naming the pivot field.
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  // A failed response (status failed, an `error` object) is returned as its error.
  Result<Response> ParseResponse(std::string_view body) const override;
  // OpenAI's error envelope, as the chat dialect reads it.
  Error ParseError(int status, std::string_view body) const override;

  // Client role.
  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  Result<boost::json::object> ParseRequestDocument(
      const boost::json::object& document) const override;
  // Encoders echo the request's fields (options.client_body) in every response snapshot.
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  // The response object with the API's default echoed fields (no request at hand).
  std::string RenderResponse(const Response& response, int64_t created) const override;
  std::string RenderWholeResponse(const Response& response,
                                  const EncoderOptions& options) const override;
  // OpenAI's error envelope and status; pivot field names are given back as the client's
  // (max_completion_tokens -> max_output_tokens, ...).
  ErrorReply RenderError(const Error& error) const override;
  // The client's body with the deployment's model and store:false spliced in (identity_body.h).
  Result<std::string> IdentityBody(std::string_view body,
                                   std::string_view upstream_model) const override;
};

}  // namespace turnpike::providers::openai_responses
