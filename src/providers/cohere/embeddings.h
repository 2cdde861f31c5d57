// Cohere's Embed API v2 (POST <base>/v2/embed, https://docs.cohere.com/reference/embed) as the
// upstream of /v1/embeddings (internal to providers/cohere/; see README.md for the mapping).
//
// Immutable; thread-safe. Errors: kInvalidRequest naming the client's field for what Cohere
// cannot express (token inputs, more than kMaxCohereTexts inputs, `user`, unknown members);
// kUpstreamBadResponse for an answer that cannot be read; a {"message": ...} body as Cohere's
// error (wire.h).
#pragma once

#include <cstddef>

#include "providers/embeddings.h"

namespace turnpike::providers::cohere {

// Cohere embeds at most this many texts per request.
inline constexpr size_t kMaxCohereTexts = 96;

class CohereEmbeddings final : public EmbeddingsApi {
 public:
  // {"model", "texts": [...], "input_type": "search_document", "embedding_types": ["float"],
  //  "truncate": "NONE", "output_dimension"?}
  Result<std::string> BuildRequest(const EmbeddingsRequest& request,
                                   std::string_view upstream_model) const override;
  // {"id", "embeddings": {"float": [[...]]}, "texts", "meta": {"billed_units":
  //  {"input_tokens"}}, "response_type": "embeddings_by_type"}
  Result<Embeddings> ParseResponse(std::string_view body) const override;
};

}  // namespace turnpike::providers::cohere
