#include "providers/ollama/embeddings.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/ollama/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::ollama {
namespace {

namespace json = boost::json;

constexpr std::string_view kProvider = "ollama";
// The status an error found in a 2xx body is judged by (Ollama's errors carry no type).
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

}  // namespace

Result<std::string> OllamaEmbeddings::BuildRequest(const EmbeddingsRequest& request,
                                                   std::string_view upstream_model) const {
  if (Status checked = CheckTextOnlyRequest(request, kProvider); !checked.ok()) {
    return checked.error();
  }
  ScratchJson scratch;  // the body is serialized before it goes
  json::object body(scratch.storage());
  body["model"] = upstream_model;
  body["input"] = request.input();
  // OpenAI refuses an input longer than the model's context; Ollama would cut it silently.
  body["truncate"] = false;
  if (request.dimensions) body["dimensions"] = *request.dimensions;
  return json::serialize(body);
}

Result<Embeddings> OllamaEmbeddings::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into Embeddings (floats and a name) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  if (answer.contains("error")) return ParseErrorBody(kStatusForErrorIn2xx, body);
  const json::value* vectors = answer.if_contains("embeddings");
  if (vectors == nullptr || !vectors->is_array()) {
    return Bad("The upstream answer has no embeddings.");
  }
  Embeddings out;
  for (const json::value& vector : vectors->as_array()) {
    if (Status appended = AppendVector(out, vector); !appended.ok()) return appended.error();
  }
  if (const json::value* model = answer.if_contains("model"); model && model->is_string()) {
    out.model = std::string(model->as_string());
  }
  if (const json::value* count = answer.if_contains("prompt_eval_count");
      count && count->is_int64()) {
    out.prompt_tokens = count->as_int64();
  }
  return out;
}

}  // namespace turnpike::providers::ollama
