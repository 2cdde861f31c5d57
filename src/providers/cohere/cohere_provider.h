// The Cohere v2 Chat dialect (https://docs.cohere.com/reference/chat): upstream for
// `provider: cohere` deployments, reached by OpenAI and Anthropic clients through the pivot.
// See provider.h for the contract and README.md in this folder for the API's quirks relied on.
//
// Client role too, for cohere-ai clients of POST /v2/chat (the LLM door): ParseRequest reads a
// v2 Chat request into the pivot (client_requests.h), IdentityBody splices the model into the
// client's body for a cohere deployment, NewEncoder renders Cohere's named SSE events
// (stream_encoder.h), RenderResponse and RenderError Cohere's shapes.
//
// Immutable; thread-safe. Decoders it makes belong to one stream.
#pragma once

#include "providers/cohere/client_embeddings.h"
#include "providers/cohere/embeddings.h"
#include "providers/provider.h"

namespace turnpike::providers::cohere {

class CohereProvider final : public Provider {
 public:
  std::string_view name() const override { return "cohere"; }

  // <base>/v2/chat for both whole and streamed answers (the body's `stream` decides),
  // <base>/v2/embed for embeddings, with `Authorization: Bearer <key>` when a key is set.
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
  Result<std::string> IdentityBody(std::string_view body,
                                   std::string_view upstream_model) const override;

  const EmbeddingsApi* embeddings() const override { return &embeddings_; }
  const EmbeddingsClient* embeddings_client() const override { return &embeddings_client_; }

 private:
  CohereEmbeddings embeddings_;
  CohereEmbeddingsClient embeddings_client_;
};

}  // namespace turnpike::providers::cohere
