// Gemini's batchEmbedContents (POST <base>/v1beta/models/<model>:batchEmbedContents,
// https://ai.google.dev/api/embeddings) as the upstream of /v1/embeddings (internal to
// providers/gemini/; see README.md for the mapping).
//
// Immutable; thread-safe. Errors: kInvalidRequest naming the client's field for what Gemini
// cannot express (token inputs, `user`, unknown members); kUpstreamBadResponse for an answer
// that cannot be read; an {"error": ...} body as Google's error (wire.h).
#pragma once

#include "providers/embeddings.h"

namespace turnpike::providers::gemini {

class GeminiEmbeddings final : public EmbeddingsApi {
 public:
  // {"requests": [{"model": "models/<m>", "content": {"parts": [{"text"}]},
  //   "outputDimensionality"?}, ...]}: one request per input.
  Result<std::string> BuildRequest(const EmbeddingsRequest& request,
                                   std::string_view upstream_model) const override;
  // {"embeddings": [{"values": [...]}, ...]}; Gemini reports no token count (prompt_tokens -1).
  Result<Embeddings> ParseResponse(std::string_view body) const override;
};

}  // namespace turnpike::providers::gemini
