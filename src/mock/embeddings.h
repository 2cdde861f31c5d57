// Internal to mock/: the mock's embeddings, in OpenAI's POST /v1/embeddings, Ollama's
// POST /api/embed and Cohere's POST /v2/embed wire shapes. Written independently of providers/ on
// purpose (the mock is the fake upstream the gateway's translation is tested against).
//
// Vectors are deterministic: each input's vector is seeded by a hash of the input (its text,
// or its token ids), so the same input gives the same vector on every wire and every run, and
// different inputs give different ones (nearly orthogonal, whatever they share). With
// `--embeddings words` (EmbedRequest::words) a text's vector is instead a bag of words: each
// word (lower-cased letters and digits) adds +-1 to one component chosen by its hash (feature
// hashing), so the cosine of two texts is about shared words / sqrt(words(a) * words(b)): a
// near-duplicate ("what is the capital of france" and "... of france today") is close (0.93),
// texts with no word in common are near 0. That is a test fixture for the LLM cache's semantic
// mode, not a model of meaning (a negation is one word away). Vectors are unit length (as real
// embedding models' are) with `dimensions` components (default kMockEmbeddingDimensions). Usage is
// counted as the mock counts chat prompts: the body's bytes / 4.
//
// Pure functions; thread-safe. Errors: kInvalidRequest naming the field, rendered by the
// handler in the route's error envelope.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "mock/chat_request.h"

namespace turnpike::mock {

inline constexpr std::string_view kOpenAiEmbeddingsPath = "/v1/embeddings";
inline constexpr std::string_view kOllamaEmbedPath = "/api/embed";
inline constexpr std::string_view kCohereEmbedPath = "/v2/embed";
// text-embedding-3-small's length, so answers are realistically sized.
inline constexpr int64_t kMockEmbeddingDimensions = 1536;
inline constexpr int64_t kMaxMockEmbeddingDimensions = 8192;

struct EmbedRequest {
  Wire wire = Wire::kOpenAi;
  std::string model;
  std::vector<std::string> seeds;  // one per input: its text, or "tokens:" + its ids
  int64_t dimensions = kMockEmbeddingDimensions;
  bool base64 = false;  // OpenAI encoding_format "base64"
  bool words = false;   // bag-of-words vectors (MockOptions::word_embeddings)
  uint64_t prompt_tokens = 0;
};

// An OpenAI embeddings body: model; input a string, strings, token ids or arrays of them;
// encoding_format "float" (default) or "base64"; dimensions.
Result<EmbedRequest> ParseOpenAiEmbed(std::string_view body);
// An Ollama /api/embed body: model; input a string or strings; dimensions (truncate ignored).
Result<EmbedRequest> ParseOllamaEmbed(std::string_view body);

// A Cohere /v2/embed body: model; texts (1 to 96 strings); input_type required (one of
// Cohere's five); embedding_types, if given, must include "float" (the only type the mock
// renders); output_dimension; truncate ignored.
Result<EmbedRequest> ParseCohereEmbed(std::string_view body);

// A Gemini :batchEmbedContents body: requests, 1 to 100 of {model "models/<m>", content
// {parts [{text}]}, outputDimensionality?}; all for the same model and dimensions.
Result<EmbedRequest> ParseGeminiEmbed(std::string_view body);

// The deterministic unit vector for one input.
std::vector<float> MockEmbedding(std::string_view seed, int64_t dimensions);
// The bag-of-words unit vector for one text (see the top of this file); all zeros for a text
// with no word.
std::vector<float> WordsEmbedding(std::string_view text, int64_t dimensions);
// Input `i`'s vector in the request's mode.
std::vector<float> EmbeddingOf(const EmbedRequest& request, size_t i);

// {"object":"list","data":[{"object":"embedding","index","embedding"}],"model","usage"}
std::string RenderOpenAiEmbeddings(const EmbedRequest& request);
// {"model","embeddings":[[..]],"total_duration","load_duration","prompt_eval_count"}
std::string RenderOllamaEmbed(const EmbedRequest& request);
// {"id","embeddings":{"float":[[..]]},"texts","meta":{"api_version","billed_units":
// {"input_tokens"}},"response_type":"embeddings_by_type"}
std::string RenderCohereEmbed(const EmbedRequest& request);
// {"embeddings":[{"values":[..]}]} (Gemini reports no token count)
std::string RenderGeminiEmbed(const EmbedRequest& request);

}  // namespace turnpike::mock
