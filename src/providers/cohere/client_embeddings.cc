#include "providers/cohere/client_embeddings.h"

#include <boost/json/serialize.hpp>

#include "common/json_escape.h"
#include "providers/cohere/client_requests.h"
#include "providers/json_text.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;
using request::Invalid;
using request::Present;

constexpr std::string_view kInputTypes[] = {"search_document", "search_query", "classification",
                                            "clustering", "image"};

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("invalid request: '" + param + "' must be " + std::string(expected), param);
}

bool IsFloatOnly(const json::value& types) {
  return types.is_array() && types.as_array().size() == 1 && types.as_array().front() == "float";
}

}  // namespace

Result<std::string> CohereEmbeddingsClient::ToOpenAiBody(std::string_view body,
                                                         const EmbeddingsCall&) const {
  boost::system::error_code ec;
  ScratchJson scratch;
  const json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Invalid("invalid request: the body is not a JSON object", "");
  const json::object& in = doc.as_object();
  json::object out;
  for (const auto& [key, value] : in) {
    if (value.is_null()) continue;
    if (key == "model") {
      out["model"] = value;
    } else if (key == "texts") {
      out["input"] = value;  // ParseEmbeddingsRequest checks it (an array of strings)
    } else if (key == "output_dimension") {
      out["dimensions"] = value;
    } else if (key == "input_type") {
      bool known = false;
      for (std::string_view type : kInputTypes) {
        known = known || (value.is_string() && value.as_string() == type);
      }
      if (!known) return WrongType("input_type", "one of search_document, search_query, ...");
    } else if (key == "embedding_types") {
      if (!IsFloatOnly(value)) out[key] = value;
    } else if (key == "truncate") {
      if (value != "NONE") out[key] = value;
    } else {
      out[key] = value;  // images, inputs, max_tokens...: refused by name when translated
    }
  }
  if (!Present(in, "texts")) return WrongType("texts", "a non-empty array of strings");
  if (!Present(in, "input_type")) return WrongType("input_type", "set (Cohere requires it)");
  return json::serialize(out);
}

std::string CohereEmbeddingsClient::Render(const Embeddings& embeddings,
                                           const EmbeddingsCall& call) const {
  std::string out = R"({"id":)";
  AppendJsonQuoted(out, call.request_id);
  out.append(R"(,"embeddings":{"float":[)");
  for (size_t i = 0; i < embeddings.count(); ++i) {
    if (i > 0) out.push_back(',');
    AppendFloatArray(out, embeddings.values.data() + i * embeddings.dimensions,
                     embeddings.dimensions);
  }
  out.append(R"(]},"texts":[],"meta":{"api_version":{"version":"2"},"billed_units":)");
  out.append(R"({"input_tokens":)");
  AppendInt(out, std::max<int64_t>(embeddings.prompt_tokens, 0));
  out.append(R"(}},"response_type":"embeddings_by_type"})");
  return out;
}

Result<std::string> CohereEmbeddingsClient::IdentityBody(std::string_view body,
                                                         std::string_view upstream_model) const {
  return SpliceModel(body, upstream_model);
}

}  // namespace turnpike::providers::cohere
