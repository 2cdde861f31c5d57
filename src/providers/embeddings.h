// Embeddings: the OpenAI request the gateway accepts on POST /v1/embeddings
// (https://platform.openai.com/docs/api-reference/embeddings/create), the neutral answer every
// dialect's translation produces, its rendering in OpenAI's shape, and EmbeddingsApi, the
// optional part of a Provider (Provider::embeddings()) that translates both ways.
//
//   client body --ParseEmbeddingsRequest--> EmbeddingsRequest   (once, a DOM)
//   EmbeddingsRequest --EmbeddingsApi::BuildRequest--> upstream body
//   upstream body --EmbeddingsApi::ParseResponse--> Embeddings --RenderEmbeddings--> client body
//
// A dialect with no embeddings API (Anthropic) returns nullptr from Provider::embeddings(); the
// gateway then answers 400 for that model. Errors are values: kInvalidRequest with `param`
// naming the client's field (OpenAI style, "input[2]"), kUpstreamBadResponse for an answer that
// cannot be read. Functions are pure; EmbeddingsApi implementations are immutable and
// thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::providers {

enum class EncodingFormat : uint8_t {
  kFloat,   // arrays of numbers (the API's default when the field is absent)
  kBase64,  // base64 of the little-endian float32 bytes (the openai SDKs ask for this)
};

// The four shapes `input` may take.
enum class EmbeddingsInput : uint8_t {
  kText,         // "a string"
  kTexts,        // ["a", "b"]
  kTokens,       // [1, 2, 3]: one input given as token ids
  kTokenArrays,  // [[1, 2], [3]]: several
};

// OpenAI's limit on the number of inputs in one request.
inline constexpr size_t kMaxEmbeddingsInputs = 2048;

// A validated client request. Owns its DOM; `input()` and the other fields view into it.
struct EmbeddingsRequest {
  boost::json::object body;  // the client's body as parsed (unknown members kept)
  std::string model;
  EmbeddingsInput kind = EmbeddingsInput::kText;
  size_t input_count = 0;    // how many embeddings the answer must hold
  int64_t input_tokens = 0;  // token ids given (token inputs only; 0 for text)
  EncodingFormat format = EncodingFormat::kFloat;
  std::optional<int64_t> dimensions;

  const boost::json::value& input() const { return body.at("input"); }
};

// Validates an OpenAI embeddings body. kInvalidRequest (param): not a JSON object (""); model
// missing, not a string or empty ("model"); input missing, null, of another type, an empty
// string or array, more than kMaxEmbeddingsInputs items, mixed items, a token that is not a
// non-negative integer ("input", "input[i]", "input[i][j]"); encoding_format other than
// "float"/"base64" ("encoding_format"); dimensions not a positive integer ("dimensions"); user
// not a string ("user"). null counts as absent for the optional fields.
Result<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body);

// For a dialect that embeds text only and reads nothing but model, input, encoding_format and
// dimensions (Ollama, Cohere, Gemini): token arrays in `input` are a 400 naming "input", and
// any other member that is not null is refused by name, never dropped. `provider` is the
// dialect's name, for the messages.
Status CheckTextOnlyRequest(const EmbeddingsRequest& request, std::string_view provider);

// A provider's answer, neutral: one vector per input, in input order.
struct Embeddings {
  std::string model;  // as the provider named it; empty if it did not
  size_t dimensions = 0;
  std::vector<float> values;   // count() * dimensions floats, row-major
  int64_t prompt_tokens = -1;  // -1: not reported

  size_t count() const { return dimensions == 0 ? 0 : values.size() / dimensions; }
};

// Appends one vector (a JSON array of numbers) to `out`. kUpstreamBadResponse when it is not
// an array of finite float32 numbers, is empty, or its length differs from the vectors before
// it; `out` is then unchanged.
Status AppendVector(Embeddings& out, const boost::json::value& vector);

// {"object":"list","data":[{"object":"embedding","index":i,"embedding":...}],"model":..,
//  "usage":{"prompt_tokens":n,"total_tokens":n}} with each embedding an array of floats
// (shortest round-trip form of each float32) or a base64 string (common/base64.h). Unreported
// usage renders as 0.
std::string RenderEmbeddings(const Embeddings& embeddings, EncodingFormat format);

// Appends `values` as a JSON array of numbers (the shortest round-trip form of each float32).
void AppendFloatArray(std::string& out, const float* values, size_t count);

// What a client's embeddings call says besides its body (Gemini: the model is in the URL, and
// :embedContent embeds one content where :batchEmbedContents embeds several).
struct EmbeddingsCall {
  std::string_view model;       // from the URL; empty when the body names it
  bool single = false;          // one embedding answered as one object, not a list
  std::string_view request_id;  // for answers that carry an id (Cohere)
};

// The client role of a dialect's embeddings API (Gemini :embedContent / :batchEmbedContents,
// Cohere /v2/embed), optional: Provider::embeddings_client(). The gateway reads the client's
// body as an OpenAI embeddings request (ToOpenAiBody, then ParseEmbeddingsRequest), so every
// upstream dialect's EmbeddingsApi serves it, and renders the neutral answer back (Render). A
// deployment of the client's own dialect gets the client's body (IdentityBody) and its answer
// untouched, when the dialect's upstream call is the same API (ServesIdentity).
class EmbeddingsClient {
 public:
  virtual ~EmbeddingsClient() = default;

  // The client's body as an OpenAI /v1/embeddings body. kInvalidRequest naming the client's
  // field for what cannot be carried.
  virtual Result<std::string> ToOpenAiBody(std::string_view body,
                                           const EmbeddingsCall& call) const = 0;
  // The neutral answer in the client's shape.
  virtual std::string Render(const Embeddings& embeddings, const EmbeddingsCall& call) const = 0;
  // Whether a deployment of this dialect serves `call` with the client's own body.
  virtual bool ServesIdentity(const EmbeddingsCall& call) const = 0;
  // The client's body for a deployment of this dialect, naming `upstream_model`.
  virtual Result<std::string> IdentityBody(std::string_view body,
                                           std::string_view upstream_model) const = 0;
};

// The embeddings part of a dialect (providers/<dialect>/). Immutable; thread-safe.
class EmbeddingsApi {
 public:
  virtual ~EmbeddingsApi() = default;

  // The upstream body for `request`, naming `upstream_model`. kInvalidRequest naming the
  // client's field for what the dialect cannot express (never dropped silently).
  virtual Result<std::string> BuildRequest(const EmbeddingsRequest& request,
                                           std::string_view upstream_model) const = 0;
  // A whole 2xx answer. An error object in it is returned as that error. Non-2xx answers go
  // through the Provider's ParseError.
  virtual Result<Embeddings> ParseResponse(std::string_view body) const = 0;
};

}  // namespace turnpike::providers
