#include "mock/embeddings.h"

#include <boost/json/parse.hpp>
#include <cctype>
#include <charconv>
#include <cmath>

#include "common/base64.h"
#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

namespace json = boost::json;

constexpr uint64_t kBytesPerPromptToken = 4;    // as for chat prompts (chat_request.cc)
constexpr size_t kMaxCohereMockTexts = 96;      // Cohere's own limit per request
constexpr size_t kMaxGeminiMockRequests = 100;  // Gemini's own limit per batch
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
constexpr int kMantissaBits = 24;  // random floats take the top 24 bits of a draw
constexpr size_t kFloatChars = 24;
// Reported durations (nanoseconds), fixed so answers are reproducible.
constexpr int64_t kTotalDurationNs = 1'000'000;
constexpr int64_t kLoadDurationNs = 100'000;

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = kFnvOffset;
  for (unsigned char c : text) hash = (hash ^ c) * kFnvPrime;
  return hash;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += kGolden);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Sets `seed` to "tokens:1,2,3," for a non-empty array of token ids; false for anything else.
bool TokenSeed(const json::array& tokens, std::string& seed) {
  seed = "tokens:";
  for (const json::value& token : tokens) {
    if (!token.is_int64() && !token.is_uint64()) return false;
    seed += std::to_string(token.to_number<int64_t>());
    seed.push_back(',');
  }
  return !tokens.empty();
}

Result<json::object> Root(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return Invalid("We could not parse the JSON body of your request.", "");
  if (!doc.is_object()) return Invalid("The request body must be a JSON object.", "");
  return std::move(doc.as_object());
}

Status ReadCommon(const json::object& root, bool tokens_allowed, EmbedRequest& out) {
  const json::value* model = root.if_contains("model");
  if (model == nullptr || !model->is_string()) {
    return Invalid("'model' is required and must be a string", "model");
  }
  out.model = std::string(model->as_string());
  const json::value* input = root.if_contains("input");
  if (input != nullptr && input->is_string()) {
    out.seeds.emplace_back(input->as_string());
  } else if (input != nullptr && input->is_array() && !input->as_array().empty()) {
    const json::array& items = input->as_array();
    std::string seed;
    if (tokens_allowed && TokenSeed(items, seed)) {
      out.seeds.push_back(std::move(seed));
    } else {
      for (const json::value& item : items) {
        if (item.is_string()) {
          out.seeds.emplace_back(item.as_string());
        } else if (tokens_allowed && item.is_array() && TokenSeed(item.as_array(), seed)) {
          out.seeds.push_back(seed);
        } else {
          return Invalid("'input' has an item of an unsupported type", "input");
        }
      }
    }
  } else {
    return Invalid("'input' is required: a string or a non-empty array", "input");
  }
  if (const json::value* dims = root.if_contains("dimensions"); dims && !dims->is_null()) {
    if (!dims->is_int64() || dims->as_int64() < 1 ||
        dims->as_int64() > kMaxMockEmbeddingDimensions) {
      return Invalid("'dimensions' must be an integer between 1 and " +
                         std::to_string(kMaxMockEmbeddingDimensions),
                     "dimensions");
    }
    out.dimensions = dims->as_int64();
  }
  return Ok{};
}

void AppendFloat(std::string& out, float value) {
  char buffer[kFloatChars];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}

void AppendFloats(std::string& out, const std::vector<float>& values) {
  out.push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendFloat(out, values[i]);
  }
  out.push_back(']');
}

}  // namespace

std::vector<float> EmbeddingOf(const EmbedRequest& request, size_t i) {
  return request.words ? WordsEmbedding(request.seeds[i], request.dimensions)
                       : MockEmbedding(request.seeds[i], request.dimensions);
}

Result<EmbedRequest> ParseOpenAiEmbed(std::string_view body) {
  Result<json::object> root = Root(body);
  if (!root.ok()) return root.error();
  EmbedRequest out;
  if (Status common = ReadCommon(root.value(), true, out); !common.ok()) return common.error();
  if (const json::value* format = root->if_contains("encoding_format");
      format && !format->is_null()) {
    if (*format != "float" && *format != "base64") {
      return Invalid("'encoding_format' must be 'float' or 'base64'", "encoding_format");
    }
    out.base64 = *format == "base64";
  }
  out.prompt_tokens = body.size() / kBytesPerPromptToken;
  return out;
}

Result<EmbedRequest> ParseOllamaEmbed(std::string_view body) {
  Result<json::object> root = Root(body);
  if (!root.ok()) return root.error();
  EmbedRequest out;
  out.wire = Wire::kOllama;
  if (Status common = ReadCommon(root.value(), false, out); !common.ok()) return common.error();
  out.prompt_tokens = body.size() / kBytesPerPromptToken;
  return out;
}

Result<EmbedRequest> ParseCohereEmbed(std::string_view body) {
  Result<json::object> root = Root(body);
  if (!root.ok()) return root.error();
  const json::object& in = root.value();
  EmbedRequest out;
  out.wire = Wire::kCohere;
  const json::value* model = in.if_contains("model");
  if (model == nullptr || !model->is_string()) {
    return Invalid("invalid request: model must be a string", "model");
  }
  out.model = std::string(model->as_string());
  const json::value* texts = in.if_contains("texts");
  if (texts == nullptr || !texts->is_array() || texts->as_array().empty() ||
      texts->as_array().size() > kMaxCohereMockTexts) {
    return Invalid("invalid request: texts must be an array of 1 to 96 strings", "texts");
  }
  for (const json::value& text : texts->as_array()) {
    if (!text.is_string()) return Invalid("invalid request: texts must be strings", "texts");
    out.seeds.emplace_back(text.as_string());
  }
  const json::value* input_type = in.if_contains("input_type");
  const bool known_type =
      input_type &&
      (*input_type == "search_document" || *input_type == "search_query" ||
       *input_type == "classification" || *input_type == "clustering" || *input_type == "image");
  if (!known_type) {
    return Invalid("invalid request: input_type is required for embed models v3 and higher",
                   "input_type");
  }
  if (const json::value* types = in.if_contains("embedding_types"); types && !types->is_null()) {
    bool has_float = false;
    if (types->is_array()) {
      for (const json::value& type : types->as_array()) has_float = has_float || type == "float";
    }
    if (!has_float) {
      return Invalid("invalid request: the mock renders float embeddings only", "embedding_types");
    }
  }
  if (const json::value* dims = in.if_contains("output_dimension"); dims && !dims->is_null()) {
    if (!dims->is_int64() || dims->as_int64() < 1 ||
        dims->as_int64() > kMaxMockEmbeddingDimensions) {
      return Invalid("invalid request: output_dimension must be a positive integer",
                     "output_dimension");
    }
    out.dimensions = dims->as_int64();
  }
  out.prompt_tokens = body.size() / kBytesPerPromptToken;
  return out;
}

Result<EmbedRequest> ParseGeminiEmbed(std::string_view body) {
  Result<json::object> root = Root(body);
  if (!root.ok()) return root.error();
  EmbedRequest out;
  out.wire = Wire::kGemini;
  const json::value* requests = root->if_contains("requests");
  if (requests == nullptr || !requests->is_array() || requests->as_array().empty() ||
      requests->as_array().size() > kMaxGeminiMockRequests) {
    return Invalid("* BatchEmbedContentsRequest.requests: must hold 1 to 100 requests", "requests");
  }
  for (const json::value& request : requests->as_array()) {
    const json::object* one = request.if_object();
    const json::value* model = one ? one->if_contains("model") : nullptr;
    if (model == nullptr || !model->is_string() || !model->as_string().starts_with("models/")) {
      return Invalid("* BatchEmbedContentsRequest.requests[].model: must be models/<name>",
                     "model");
    }
    if (out.model.empty()) out.model = std::string(model->as_string());
    const json::value* content = one->if_contains("content");
    const json::value* parts =
        content && content->is_object() ? content->as_object().if_contains("parts") : nullptr;
    if (parts == nullptr || !parts->is_array() || parts->as_array().size() != 1 ||
        !parts->as_array()[0].is_object()) {
      return Invalid("* BatchEmbedContentsRequest.requests[].content: one text part", "content");
    }
    const json::value* text = parts->as_array()[0].as_object().if_contains("text");
    if (text == nullptr || !text->is_string()) {
      return Invalid("* BatchEmbedContentsRequest.requests[].content.parts[0].text: required",
                     "content");
    }
    out.seeds.emplace_back(text->as_string());
    if (const json::value* dims = one->if_contains("outputDimensionality"); dims) {
      if (!dims->is_int64() || dims->as_int64() < 1 ||
          dims->as_int64() > kMaxMockEmbeddingDimensions) {
        return Invalid("outputDimensionality must be a positive integer", "outputDimensionality");
      }
      out.dimensions = dims->as_int64();
    }
  }
  out.prompt_tokens = body.size() / kBytesPerPromptToken;
  return out;
}

std::vector<float> WordsEmbedding(std::string_view text, int64_t dimensions) {
  std::vector<float> values(static_cast<size_t>(dimensions));
  std::string word;
  const auto add = [&] {
    if (word.empty()) return;
    const uint64_t hash = Fnv1a(word);
    values[(hash >> 1) % values.size()] += (hash & 1) != 0 ? 1.0F : -1.0F;
    word.clear();
  };
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      add();
    }
  }
  add();
  double norm = 0;
  for (float value : values) norm += static_cast<double>(value) * value;
  const double scale = norm > 0 ? 1 / std::sqrt(norm) : 1;
  for (float& value : values) value = static_cast<float>(value * scale);
  return values;
}

std::vector<float> MockEmbedding(std::string_view seed, int64_t dimensions) {
  uint64_t state = Fnv1a(seed);
  std::vector<float> values(static_cast<size_t>(dimensions));
  double norm = 0;
  for (float& value : values) {
    const double unit = static_cast<double>(SplitMix64(state) >> (64 - kMantissaBits)) /
                        static_cast<double>(uint64_t{1} << kMantissaBits);
    value = static_cast<float>(unit * 2 - 1);
    norm += static_cast<double>(value) * value;
  }
  const double scale = norm > 0 ? 1 / std::sqrt(norm) : 1;
  for (float& value : values) value = static_cast<float>(value * scale);
  return values;
}

std::string RenderOpenAiEmbeddings(const EmbedRequest& request) {
  std::string out = R"({"object":"list","data":[)";
  for (size_t i = 0; i < request.seeds.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += R"({"object":"embedding","index":)" + std::to_string(i) + R"(,"embedding":)";
    const std::vector<float> vector = EmbeddingOf(request, i);
    if (request.base64) {
      out.push_back('"');
      AppendFloat32Base64(out, vector.data(), vector.size());
      out.push_back('"');
    } else {
      AppendFloats(out, vector);
    }
    out.push_back('}');
  }
  out += R"(],"model":)";
  AppendJsonQuoted(out, request.model);
  const std::string tokens = std::to_string(request.prompt_tokens);
  out += R"(,"usage":{"prompt_tokens":)" + tokens + R"(,"total_tokens":)" + tokens + "}}";
  return out;
}

std::string RenderOllamaEmbed(const EmbedRequest& request) {
  std::string out = R"({"model":)";
  AppendJsonQuoted(out, request.model);
  out += R"(,"embeddings":[)";
  for (size_t i = 0; i < request.seeds.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendFloats(out, EmbeddingOf(request, i));
  }
  out += R"(],"total_duration":)" + std::to_string(kTotalDurationNs) + R"(,"load_duration":)" +
         std::to_string(kLoadDurationNs) + R"(,"prompt_eval_count":)" +
         std::to_string(request.prompt_tokens) + "}";
  return out;
}

}  // namespace turnpike::mock

namespace turnpike::mock {

std::string RenderCohereEmbed(const EmbedRequest& request) {
  std::string out = R"({"id":"embed-mock","embeddings":{"float":[)";
  for (size_t i = 0; i < request.seeds.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendFloats(out, EmbeddingOf(request, i));
  }
  out += R"(]},"texts":[)";
  for (size_t i = 0; i < request.seeds.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonQuoted(out, request.seeds[i]);
  }
  out += R"(],"meta":{"api_version":{"version":"2"},"billed_units":{"input_tokens":)" +
         std::to_string(request.prompt_tokens) + R"(}},"response_type":"embeddings_by_type"})";
  return out;
}

}  // namespace turnpike::mock

namespace turnpike::mock {

std::string RenderGeminiEmbed(const EmbedRequest& request) {
  std::string out = R"({"embeddings":[)";
  for (size_t i = 0; i < request.seeds.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += R"({"values":)";
    AppendFloats(out, EmbeddingOf(request, i));
    out.push_back('}');
  }
  out += "]}";
  return out;
}

}  // namespace turnpike::mock
