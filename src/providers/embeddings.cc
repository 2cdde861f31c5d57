#include "providers/embeddings.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <charconv>
#include <cmath>

#include "common/base64.h"
#include "providers/json_text.h"
#include "providers/request_fields.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;
using request::At;
using request::Invalid;
using request::WrongType;

constexpr std::string_view kInputTypes =
    "a string, an array of strings, an array of integers or an array of arrays of integers";
// std::to_chars of a float in its shortest form needs at most this many characters.
constexpr size_t kMaxFloatChars = 24;
// For reserving: "-0.012345678," is typical of unit-norm vectors.
constexpr size_t kTypicalFloatChars = 13;

bool IsToken(const json::value& v) { return (v.is_int64() && v.as_int64() >= 0) || v.is_uint64(); }

// One token array ("input" or "input[i]"): non-empty, every item a non-negative integer.
Result<int64_t> CountTokens(const json::array& tokens, const std::string& param) {
  if (tokens.empty()) return Invalid("'" + param + "' must not be empty.", param);
  for (size_t j = 0; j < tokens.size(); ++j) {
    if (!IsToken(tokens[j])) return WrongType(At(param, j), "a non-negative integer token");
  }
  return static_cast<int64_t>(tokens.size());
}

Status ReadInput(const json::value* input, EmbeddingsRequest& out) {
  const std::string param = "input";
  if (input == nullptr || input->is_null()) {
    return Invalid("Missing required parameter: 'input'.", param);
  }
  if (input->is_string()) {
    if (input->as_string().empty()) return Invalid("'input' must not be an empty string.", param);
    out.kind = EmbeddingsInput::kText;
    out.input_count = 1;
    return Ok{};
  }
  if (!input->is_array()) return WrongType(param, kInputTypes);
  const json::array& items = input->as_array();
  if (items.empty()) return Invalid("'input' must not be an empty array.", param);
  if (items.front().is_number()) {
    Result<int64_t> tokens = CountTokens(items, param);
    if (!tokens.ok()) return tokens.error();
    out.kind = EmbeddingsInput::kTokens;
    out.input_count = 1;
    out.input_tokens = tokens.value();
    return Ok{};
  }
  if (items.size() > kMaxEmbeddingsInputs) {
    return Invalid("'input' must have at most " + std::to_string(kMaxEmbeddingsInputs) + " items.",
                   param);
  }
  out.kind = items.front().is_array() ? EmbeddingsInput::kTokenArrays : EmbeddingsInput::kTexts;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = At(param, i);
    if (out.kind == EmbeddingsInput::kTexts) {
      if (!items[i].is_string()) return WrongType(item, "a string, like the other items");
      if (items[i].as_string().empty()) return Invalid("'" + item + "' must not be empty.", item);
      continue;
    }
    if (!items[i].is_array()) return WrongType(item, "an array of integers, like the other items");
    Result<int64_t> tokens = CountTokens(items[i].as_array(), item);
    if (!tokens.ok()) return tokens.error();
    out.input_tokens += tokens.value();
  }
  out.input_count = items.size();
  return Ok{};
}

Status ReadOptions(const json::object& body, EmbeddingsRequest& out) {
  if (request::Present(body, "encoding_format")) {
    const json::value& format = body.at("encoding_format");
    if (format == "float") {
      out.format = EncodingFormat::kFloat;
    } else if (format == "base64") {
      out.format = EncodingFormat::kBase64;
    } else {
      return Invalid("Invalid value for 'encoding_format': expected 'float' or 'base64'.",
                     "encoding_format");
    }
  }
  if (request::Present(body, "dimensions")) {
    const json::value& dimensions = body.at("dimensions");
    if (!dimensions.is_int64() || dimensions.as_int64() < 1) {
      return WrongType("dimensions", "a positive integer");
    }
    out.dimensions = dimensions.as_int64();
  }
  if (request::Present(body, "user") && !body.at("user").is_string()) {
    return WrongType("user", "a string");
  }
  return Ok{};
}

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

void AppendFloat(std::string& out, float value) {
  char buffer[kMaxFloatChars];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace

Result<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return Invalid("We could not parse the JSON body of your request.", "");
  if (!doc.is_object()) return Invalid("The request body must be a JSON object.", "");
  EmbeddingsRequest out;
  out.body = std::move(doc.as_object());
  const json::value* model = out.body.if_contains("model");
  if (model == nullptr || model->is_null()) {
    return Invalid("You must provide a model parameter.", "model");
  }
  if (!model->is_string()) return WrongType("model", "a string");
  if (model->as_string().empty()) return Invalid("'model' must not be empty.", "model");
  out.model = std::string(model->as_string());
  if (Status input = ReadInput(out.body.if_contains("input"), out); !input.ok()) {
    return input.error();
  }
  if (Status options = ReadOptions(out.body, out); !options.ok()) return options.error();
  return out;
}

Status CheckTextOnlyRequest(const EmbeddingsRequest& request, std::string_view provider) {
  if (request.kind == EmbeddingsInput::kTokens || request.kind == EmbeddingsInput::kTokenArrays) {
    return Invalid("Token arrays in 'input' cannot be sent to this model's provider (" +
                       std::string(provider) + "); send text.",
                   "input");
  }
  for (const auto& member : request.body) {
    const std::string_view key = member.key();
    const bool read =
        key == "model" || key == "input" || key == "encoding_format" || key == "dimensions";
    if (!read && !member.value().is_null()) {
      return request::UnsupportedBy(std::string(key), provider);
    }
  }
  return Ok{};
}

Status AppendVector(Embeddings& out, const json::value& vector) {
  if (!vector.is_array() || vector.as_array().empty()) {
    return Bad("The upstream answer has an embedding that is not a non-empty array of numbers.");
  }
  const json::array& numbers = vector.as_array();
  if (!out.values.empty() && numbers.size() != out.dimensions) {
    return Bad("The upstream answer has embeddings of different lengths.");
  }
  const size_t before = out.values.size();
  out.values.reserve(before + numbers.size());
  for (const json::value& number : numbers) {
    const float value = number.is_number() ? static_cast<float>(number.to_number<double>()) : NAN;
    if (!std::isfinite(value)) {
      out.values.resize(before);  // `out` is left as it was
      return Bad("The upstream answer has an embedding with a non-number or out of range.");
    }
    out.values.push_back(value);
  }
  out.dimensions = numbers.size();
  return Ok{};
}

void AppendFloatArray(std::string& out, const float* values, size_t count) {
  out.push_back('[');
  for (size_t d = 0; d < count; ++d) {
    if (d > 0) out.push_back(',');
    AppendFloat(out, values[d]);
  }
  out.push_back(']');
}

std::string RenderEmbeddings(const Embeddings& embeddings, EncodingFormat format) {
  std::string out = R"({"object":"list","data":[)";
  const size_t count = embeddings.count();
  const size_t per_value = format == EncodingFormat::kFloat ? kTypicalFloatChars : 2;
  out.reserve(out.size() + count * embeddings.dimensions * per_value);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out.push_back(',');
    out.append(R"({"object":"embedding","index":)");
    AppendInt(out, static_cast<int64_t>(i));
    out.append(R"(,"embedding":)");
    const float* vector = embeddings.values.data() + i * embeddings.dimensions;
    if (format == EncodingFormat::kBase64) {
      out.push_back('"');
      AppendFloat32Base64(out, vector, embeddings.dimensions);
      out.push_back('"');
    } else {
      AppendFloatArray(out, vector, embeddings.dimensions);
    }
    out.push_back('}');
  }
  out.append(R"(],"model":)");
  AppendJsonQuoted(out, embeddings.model);
  const int64_t tokens = std::max<int64_t>(embeddings.prompt_tokens, 0);
  out.append(R"(,"usage":{"prompt_tokens":)");
  AppendInt(out, tokens);
  out.append(R"(,"total_tokens":)");
  AppendInt(out, tokens);
  out.append("}}");
  return out;
}

}  // namespace turnpike::providers
