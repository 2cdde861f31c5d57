// The OpenAI embeddings API (POST <base>/embeddings) as the upstream of /v1/embeddings: the
// identity path. The client's body is forwarded with only `model` replaced (every other member,
// encoding_format included, as the client sent it), so the answer is already in the client's
// shape and the gateway relays it untouched, reading only `usage`.
//
// The body is re-serialized from the request's DOM rather than spliced: the gateway validated
// that DOM, so the provider receives exactly the values the gateway read and billed (a body
// with a duplicated key cannot mean one thing to each). Embeddings bodies are small next to
// their answers, which are never re-serialized on this path.
//
// Immutable; thread-safe.
#pragma once

#include "providers/embeddings.h"

namespace turnpike::providers::openai {

class OpenAiEmbeddings final : public EmbeddingsApi {
 public:
  Result<std::string> BuildRequest(const EmbeddingsRequest& request,
                                   std::string_view upstream_model) const override;
  // Reads float embeddings and usage.prompt_tokens (the gateway needs this only off the
  // identity path). A base64 embedding is kUpstreamBadResponse: BuildRequest forwards the
  // client's encoding_format, so vectors are wanted only when the client asked for floats.
  Result<Embeddings> ParseResponse(std::string_view body) const override;
};

}  // namespace turnpike::providers::openai
