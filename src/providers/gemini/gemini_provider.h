// The Gemini API dialect (https://ai.google.dev/api/generate-content): upstream for
// `provider: gemini` deployments, reached by OpenAI clients (/v1/chat/completions) and
// Anthropic clients (/v1/messages) through the pivot. See provider.h for the contract and
// README.md in this folder for the API's quirks relied on.
//
// Client role too, for @google/genai clients of /v1beta/models/{model}:generateContent and
// :streamGenerateContent (the LLM door): ParseRequest reads a GenerateContentRequest into the
// pivot with `model` "" and no `stream` (both are in the URL: the door splices them in);
// IdentityBody is the client's body untouched (a gemini deployment gets the model in its URL);
// NewEncoder renders Gemini SSE chunks (stream_encoder.h); RenderError Gemini's error envelope.
//
// Immutable; thread-safe. Decoders it makes belong to one stream.
#pragma once

#include "providers/gemini/client_embeddings.h"
#include "providers/gemini/embeddings.h"
#include "providers/provider.h"

namespace turnpike::providers::gemini {

class GeminiProvider final : public Provider {
 public:
  std::string_view name() const override { return "gemini"; }

  // <base>/v1beta/models/<model>:generateContent, and :streamGenerateContent?alt=sse for a
  // stream, :batchEmbedContents for embeddings; the key as `x-goog-api-key` when there is one.
  // A leading "models/" in the model name is accepted and not doubled.
  UpstreamEndpoint Endpoint(const EndpointParams& params) const override;
  Result<std::string> BuildRequest(const boost::json::object& chat,
                                   const UpstreamRequestOptions& options) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override;
  Result<Response> ParseResponse(std::string_view body) const override;
  Error ParseError(int status, std::string_view body) const override;

  Result<boost::json::object> ParseRequest(std::string_view body) const override;
  std::unique_ptr<StreamEncoder> NewEncoder(const EncoderOptions& options) const override;
  std::string RenderResponse(const Response& response, int64_t created) const override;
  std::string RenderWholeResponse(const Response& response,
                                  const EncoderOptions& options) const override;
  ErrorReply RenderError(const Error& error) const override;
  Result<std::string> IdentityBody(std::string_view body,
                                   std::string_view upstream_model) const override;

  const EmbeddingsApi* embeddings() const override { return &embeddings_; }
  const EmbeddingsClient* embeddings_client() const override { return &embeddings_client_; }

 private:
  GeminiEmbeddings embeddings_;
  GeminiEmbeddingsClient embeddings_client_;
};

}  // namespace turnpike::providers::gemini
