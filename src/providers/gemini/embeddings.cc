#include "providers/gemini/embeddings.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/gemini/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

constexpr std::string_view kProvider = "gemini";
constexpr std::string_view kModelsPrefix = "models/";
// The status an error found in a 2xx body is judged by.
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

json::object EmbedRequest(const std::string& model, const json::value& text,
                          const std::optional<int64_t>& dimensions, const json::storage_ptr& sp) {
  json::object one(sp);
  one["model"] = model;
  one["content"] =
      json::object({{"parts", json::array({json::object({{"text", text}}, sp)}, sp)}}, sp);
  if (dimensions) one["outputDimensionality"] = *dimensions;
  return one;
}

}  // namespace

Result<std::string> GeminiEmbeddings::BuildRequest(const EmbeddingsRequest& request,
                                                   std::string_view upstream_model) const {
  if (Status checked = CheckTextOnlyRequest(request, kProvider); !checked.ok()) {
    return checked.error();
  }
  const std::string model = upstream_model.starts_with(kModelsPrefix)
                                ? std::string(upstream_model)
                                : std::string(kModelsPrefix) + std::string(upstream_model);
  ScratchJson scratch;  // the body is serialized before it goes
  const json::storage_ptr sp = scratch.storage();
  json::array requests(sp);
  if (request.kind == EmbeddingsInput::kText) {
    requests.push_back(EmbedRequest(model, request.input(), request.dimensions, sp));
  } else {
    for (const json::value& text : request.input().as_array()) {
      requests.push_back(EmbedRequest(model, text, request.dimensions, sp));
    }
  }
  return json::serialize(json::object({{"requests", std::move(requests)}}, sp));
}

Result<Embeddings> GeminiEmbeddings::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into Embeddings (floats and a name) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  if (answer.contains("error")) return ParseErrorBody(kStatusForErrorIn2xx, body);
  const json::value* embeddings = answer.if_contains("embeddings");
  if (embeddings == nullptr || !embeddings->is_array()) {
    return Bad("The upstream answer has no embeddings.");
  }
  Embeddings out;
  for (const json::value& embedding : embeddings->as_array()) {
    const json::value* values =
        embedding.is_object() ? embedding.as_object().if_contains("values") : nullptr;
    if (values == nullptr) return Bad("An upstream embedding has no values.");
    if (Status appended = AppendVector(out, *values); !appended.ok()) return appended.error();
  }
  return out;
}

}  // namespace turnpike::providers::gemini
