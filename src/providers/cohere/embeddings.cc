#include "providers/cohere/embeddings.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/cohere/wire.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

constexpr std::string_view kProvider = "cohere";
// The status an error found in a 2xx body is judged by.
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

}  // namespace

Result<std::string> CohereEmbeddings::BuildRequest(const EmbeddingsRequest& request,
                                                   std::string_view upstream_model) const {
  if (Status checked = CheckTextOnlyRequest(request, kProvider); !checked.ok()) {
    return checked.error();
  }
  if (request.input_count > kMaxCohereTexts) {
    return request::Invalid("This model's provider (cohere) embeds at most " +
                                std::to_string(kMaxCohereTexts) + " inputs per request.",
                            "input");
  }
  ScratchJson scratch;  // the body is serialized before it goes
  const json::storage_ptr sp = scratch.storage();
  json::object body(sp);
  body["model"] = upstream_model;
  json::array texts(sp);
  if (request.kind == EmbeddingsInput::kText) {
    texts.push_back(request.input());
  } else {
    texts = request.input().as_array();
  }
  body["texts"] = std::move(texts);
  // Required by Cohere's v3+ models; OpenAI has no such field, and documents are what an
  // OpenAI-style caller usually embeds (README.md).
  body["input_type"] = "search_document";
  body["embedding_types"] = json::array({"float"}, sp);
  // OpenAI refuses an input longer than the model's context; Cohere would cut it silently.
  body["truncate"] = "NONE";
  if (request.dimensions) body["output_dimension"] = *request.dimensions;
  return json::serialize(body);
}

Result<Embeddings> CohereEmbeddings::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into Embeddings (floats and a name) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  const json::value* by_type = answer.if_contains("embeddings");
  if (by_type == nullptr) {
    if (answer.contains("message")) return ParseErrorBody(kStatusForErrorIn2xx, body);
    return Bad("The upstream answer has no embeddings.");
  }
  const json::value* vectors =
      by_type->is_object() ? by_type->as_object().if_contains("float") : nullptr;
  if (vectors == nullptr || !vectors->is_array()) {
    return Bad("The upstream answer has no float embeddings.");
  }
  Embeddings out;
  for (const json::value& vector : vectors->as_array()) {
    if (Status appended = AppendVector(out, vector); !appended.ok()) return appended.error();
  }
  const json::value* meta = answer.if_contains("meta");
  const json::value* billed =
      meta && meta->is_object() ? meta->as_object().if_contains("billed_units") : nullptr;
  const json::value* tokens =
      billed && billed->is_object() ? billed->as_object().if_contains("input_tokens") : nullptr;
  if (tokens != nullptr && tokens->is_number()) {
    out.prompt_tokens = static_cast<int64_t>(tokens->to_number<double>());
  }
  return out;
}

}  // namespace turnpike::providers::cohere
