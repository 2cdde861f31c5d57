// The Ollama dialect (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-
// completion): upstream for `provider: ollama` deployments, native POST /api/chat with NDJSON
// streaming. See provider.h for the contract and README.md in this folder for the API's quirks
// relied on.
//
// Upstream role only. Ollama is not a client dialect of the gateway (there is no /api/chat
// front door): ParseRequest refuses every body and NewEncoder returns nullptr; RenderResponse
// and RenderError give Ollama's shapes, for completeness and tests.
//
// Immutable; thread-safe. Decoders it makes belong to one stream.
#pragma once

#include "providers/ollama/embeddings.h"
#include "providers/provider.h"

namespace turnpike::providers::ollama {

class OllamaProvider final : public Provider {
 public:
  std::string_view name() const override { return "ollama"; }

  // <base>/api/chat for whole and streamed answers, <base>/api/embed for embeddings;
  // `Authorization: Bearer <key>` only when a key is set (an Ollama behind an authenticating
  // proxy, or ollama.com).
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  StreamFraming stream_framing() const override { return StreamFraming::kNdjson; }
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  std::string RenderResponse(const Response& response, int64_t created) const override;
  ErrorReply RenderError(const Error& error) const override;

  const EmbeddingsApi* embeddings() const override { return &embeddings_; }

 private:
  OllamaEmbeddings embeddings_;
};

}  // namespace turnpike::providers::ollama
