// Gemini's embeddings as a client API (internal to providers/gemini/): POST
// /v1beta/models/{model}:embedContent (one content, `single`) and :batchEmbedContents, read as
// an OpenAI embeddings request and answered in Gemini's shape. See README.md ("Client role").
//
//   request   one EmbedContentRequest {content: {parts: [{text}]}, outputDimensionality?,
//             taskType?, title?}, or {requests: [...]} of them; a content's text parts are
//             joined with "\n" into one input
//   answer    {"embedding": {"values": [...]}} or {"embeddings": [{"values": [...]}, ...]}
// taskType and title are hints with no equivalent in the other dialects: a gemini deployment
// gets them (batch identity), others do not. Non-text parts and differing outputDimensionality
// values are a 400 naming the field.
//
// Immutable; thread-safe.
#pragma once

#include "providers/embeddings.h"

namespace turnpike::providers::gemini {

class GeminiEmbeddingsClient final : public EmbeddingsClient {
 public:
  Result<std::string> ToOpenAiBody(std::string_view body,
                                   const EmbeddingsCall& call) const override;
  std::string Render(const Embeddings& embeddings, const EmbeddingsCall& call) const override;
  // Only :batchEmbedContents: a deployment's embed_path is its batch call.
  bool ServesIdentity(const EmbeddingsCall& call) const override { return !call.single; }
  // Each request's `model` set to models/<upstream_model>.
  Result<std::string> IdentityBody(std::string_view body,
                                   std::string_view upstream_model) const override;
};

}  // namespace turnpike::providers::gemini
