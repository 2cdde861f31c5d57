// Ollama's embeddings API (POST <base>/api/embed,
// https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings) as the upstream
// of /v1/embeddings (internal to providers/ollama/; see README.md for the mapping).
//
// Immutable; thread-safe. Errors: kInvalidRequest naming the client's field for what Ollama
// cannot express (token inputs, `user`, unknown members); kUpstreamBadResponse for an answer
// that cannot be read; an {"error": ...} body as Ollama's error (wire.h).
#pragma once

#include "providers/embeddings.h"

namespace turnpike::providers::ollama {

class OllamaEmbeddings final : public EmbeddingsApi {
 public:
  // {"model", "input": <string | [strings]>, "truncate": false, "dimensions"?}
  Result<std::string> BuildRequest(const EmbeddingsRequest& request,
                                   std::string_view upstream_model) const override;
  // {"model", "embeddings": [[...]], "prompt_eval_count", "total_duration", ...}
  Result<Embeddings> ParseResponse(std::string_view body) const override;
};

}  // namespace turnpike::providers::ollama
