#include "providers/gemini/client_embeddings.h"

#include <boost/json/serialize.hpp>

#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;
using request::At;
using request::Invalid;

constexpr std::string_view kModelsPrefix = "models/";
// Read from each EmbedContentRequest; taskType and title are hints not carried (header).
constexpr std::string_view kKnown[] = {"model", "content", "outputDimensionality", "taskType",
                                       "title"};

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("Invalid value at '" + param + "': expected " + std::string(expected) + ".",
                 param);
}

// The text of one EmbedContentRequest; `prefix` names it in errors ("" or "requests[i].").
Result<std::string> TextOf(const json::object& request, const std::string& prefix) {
  if (std::optional<std::string> field = request::FirstUnhandled(request, kKnown)) {
    return Invalid("This field cannot be translated for the model's provider.", prefix + *field);
  }
  const json::value* content = request.if_contains("content");
  const json::value* parts = content != nullptr && content->is_object()
                                 ? content->as_object().if_contains("parts")
                                 : nullptr;
  if (parts == nullptr || !parts->is_array() || parts->as_array().empty()) {
    return WrongType(prefix + "content.parts", "a non-empty array");
  }
  std::string text;
  size_t j = 0;
  for (const json::value& part : parts->as_array()) {
    const std::string at = At(prefix + "content.parts", j++);
    const json::value* piece = part.is_object() ? part.as_object().if_contains("text") : nullptr;
    if (piece == nullptr || !piece->is_string()) {
      return Invalid("Only text parts can be embedded through the gateway.", at);
    }
    if (!text.empty()) text += "\n";
    text += piece->as_string();
  }
  return text;
}

}  // namespace

Result<std::string> GeminiEmbeddingsClient::ToOpenAiBody(std::string_view body,
                                                         const EmbeddingsCall& call) const {
  boost::system::error_code ec;
  ScratchJson scratch;
  const json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) {
    return Invalid("Invalid JSON payload received: the body is not a JSON object.", "");
  }
  const json::object& in = doc.as_object();
  std::vector<const json::object*> requests;
  std::vector<std::string> prefixes;  // how errors name each request
  if (call.single) {
    requests.push_back(&in);
    prefixes.emplace_back();
  } else {
    if (std::optional<std::string> field =
            request::FirstUnhandled(in, std::initializer_list<std::string_view>{"requests"})) {
      return Invalid("This field cannot be translated for the model's provider.", *field);
    }
    const json::value* list = in.if_contains("requests");
    if (list == nullptr || !list->is_array() || list->as_array().empty()) {
      return WrongType("requests", "a non-empty array");
    }
    size_t i = 0;
    for (const json::value& request : list->as_array()) {
      const std::string param = At("requests", i++);
      if (!request.is_object()) return WrongType(param, "an EmbedContentRequest");
      requests.push_back(&request.as_object());
      prefixes.push_back(param + ".");
    }
  }
  json::array input;
  const json::value* dimensions = nullptr;
  for (size_t i = 0; i < requests.size(); ++i) {
    Result<std::string> text = TextOf(*requests[i], prefixes[i]);
    if (!text.ok()) return text.error();
    input.push_back(json::string(text.value()));
    const json::value* d = requests[i]->if_contains("outputDimensionality");
    if (d != nullptr && d->is_null()) d = nullptr;
    // One `dimensions` for the whole OpenAI request.
    const bool same = i == 0 || (d == nullptr && dimensions == nullptr) ||
                      (d != nullptr && dimensions != nullptr && *d == *dimensions);
    if (!same) {
      return Invalid("Every request must ask for the same outputDimensionality.",
                     prefixes[i] + "outputDimensionality");
    }
    if (i == 0) dimensions = d;
  }
  json::object out{{"model", call.model}, {"input", std::move(input)}};
  if (dimensions != nullptr) out["dimensions"] = *dimensions;
  return json::serialize(out);
}

std::string GeminiEmbeddingsClient::Render(const Embeddings& embeddings,
                                           const EmbeddingsCall& call) const {
  std::string out = call.single ? R"({"embedding":)" : R"({"embeddings":[)";
  for (size_t i = 0; i < embeddings.count(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(R"({"values":)");
    AppendFloatArray(out, embeddings.values.data() + i * embeddings.dimensions,
                     embeddings.dimensions);
    out.push_back('}');
  }
  out.append(call.single ? "}" : "]}");
  return out;
}

Result<std::string> GeminiEmbeddingsClient::IdentityBody(std::string_view body,
                                                         std::string_view upstream_model) const {
  boost::system::error_code ec;
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  json::value* list = !ec && doc.is_object() ? doc.as_object().if_contains("requests") : nullptr;
  if (list == nullptr || !list->is_array()) return WrongType("requests", "an array");
  std::string model(upstream_model);
  if (!model.starts_with(kModelsPrefix)) model.insert(0, kModelsPrefix);
  for (json::value& request : list->as_array()) {
    if (request.is_object()) request.as_object()["model"] = model;
  }
  return json::serialize(doc);
}

}  // namespace turnpike::providers::gemini
