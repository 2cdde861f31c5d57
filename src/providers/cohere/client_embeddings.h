// Cohere's v2 embed as a client API (internal to providers/cohere/): POST /v2/embed read as an
// OpenAI embeddings request and answered in Cohere's shape. See README.md ("Client role").
//
//   request   {model, texts, input_type, embedding_types?, output_dimension?, truncate?}
//   answer    {"id", "embeddings": {"float": [[...]]}, "texts": [], "meta": {"api_version":
//             {"version": "2"}, "billed_units": {"input_tokens"}}, "response_type":
//             "embeddings_by_type"}
// input_type is required by Cohere and has no equivalent in the other dialects: a cohere
// deployment gets it (identity: the client's body with the model replaced), others do not.
// What another dialect cannot give (images or inputs instead of texts, embedding types other
// than float, truncate other than NONE, max_tokens) is carried under its own name so that the
// upstream's check (CheckTextOnlyRequest) refuses it by that name.
//
// Immutable; thread-safe.
#pragma once

#include "providers/embeddings.h"

namespace turnpike::providers::cohere {

class CohereEmbeddingsClient final : public EmbeddingsClient {
 public:
  Result<std::string> ToOpenAiBody(std::string_view body,
                                   const EmbeddingsCall& call) const override;
  std::string Render(const Embeddings& embeddings, const EmbeddingsCall& call) const override;
  bool ServesIdentity(const EmbeddingsCall&) const override { return true; }
  Result<std::string> IdentityBody(std::string_view body,
                                   std::string_view upstream_model) const override;
};

}  // namespace turnpike::providers::cohere
