// The Anthropic Messages dialect (https://docs.anthropic.com/en/api/messages): upstream for
// `provider: anthropic` deployments, and the client dialect of the inbound /v1/messages API.
// See provider.h for the contract and README.md in this folder for the API's quirks relied on.
//
// Immutable; thread-safe. Decoders and encoders it makes belong to one stream.
#pragma once

#include "providers/provider.h"

namespace turnpike::providers::anthropic {

class AnthropicProvider final : public Provider {
 public:
  std::string_view name() const override { return "anthropic"; }

  // <base>/v1/messages with `x-api-key` and `anthropic-version: 2023-06-01`.
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  std::string RenderResponse(const Response& response, int64_t created) const override;
  ErrorReply RenderError(const Error& error) const override;
};

}  // namespace turnpike::providers::anthropic
