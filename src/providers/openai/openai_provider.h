// The OpenAI chat completions dialect (https://platform.openai.com/docs/api-reference/chat)
// as a Provider: upstream for `provider: openai` (and OpenAI-compatible servers) when the
// client speaks another dialect, and the client dialect of /v1/chat/completions when the
// provider speaks another one. The pivot request is this dialect, so its request side is a
// parse and a serialize. See provider.h for the contract.
//
// Immutable; thread-safe. Decoders and encoders it makes belong to one stream.
#pragma once

#include "providers/openai/embeddings.h"
#include "providers/provider.h"

namespace turnpike::providers::openai {

class OpenAiProvider final : public Provider {
 public:
  std::string_view name() const override { return "openai"; }

  // <base>/chat/completions (embeddings: <base>/embeddings) with `Authorization: Bearer <key>`.
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  // Replaces `model`; for streams also asks for usage (stream_options.include_usage), so a
  // translated stream can always be priced.
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  // BuildRequest's bytes, each window message written from its text (from its value when
  // this dialect drops one of its fields): no copy of the pivot, no serialization.
  Result<std::string> BuildRequestWithWindow(const boost::json::object& chat,
                                             const UpstreamRequestOptions& options, size_t at,
                                             std::span<const TextMessage> window) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  std::string RenderResponse(const Response& response, int64_t created) const override;
  ErrorReply RenderError(const Error& error) const override;

  const EmbeddingsApi* embeddings() const override { return &embeddings_; }

 private:
  OpenAiEmbeddings embeddings_;
};

}  // namespace turnpike::providers::openai
