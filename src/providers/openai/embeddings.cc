#include "providers/openai/embeddings.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/scratch_json.h"

namespace turnpike::providers::openai {
namespace {

namespace json = boost::json;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

// OpenAI's error envelope in a 2xx body: {"error":{"message":..,"type":..}}.
Error ErrorIn(const json::value& error) {
  const json::value* message =
      error.is_object() ? error.as_object().if_contains("message") : nullptr;
  return Bad(message != nullptr && message->is_string() ? std::string(message->as_string())
                                                        : "The upstream answer is an error.");
}

}  // namespace

Result<std::string> OpenAiEmbeddings::BuildRequest(const EmbeddingsRequest& request,
                                                   std::string_view upstream_model) const {
  ScratchJson scratch;  // the copy is serialized before it goes
  json::object body(request.body, scratch.storage());
  body["model"] = upstream_model;
  return json::serialize(body);
}

Result<Embeddings> OpenAiEmbeddings::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into Embeddings (floats and a name) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  if (const json::value* error = answer.if_contains("error"); error && !error->is_null()) {
    return ErrorIn(*error);
  }
  const json::value* data = answer.if_contains("data");
  if (data == nullptr || !data->is_array()) return Bad("The upstream answer has no data.");
  Embeddings out;
  // Items are placed by their `index`; OpenAI lists them in order, which is checked.
  for (size_t i = 0; i < data->as_array().size(); ++i) {
    const json::value& item = data->as_array()[i];
    const json::value* index = item.is_object() ? item.as_object().if_contains("index") : nullptr;
    if (index == nullptr || !index->is_int64() || index->as_int64() != static_cast<int64_t>(i)) {
      return Bad("The upstream answer's embeddings are not indexed in order.");
    }
    const json::value* vector = item.as_object().if_contains("embedding");
    if (vector == nullptr) return Bad("The upstream answer has an item without an embedding.");
    if (Status appended = AppendVector(out, *vector); !appended.ok()) return appended.error();
  }
  if (const json::value* model = answer.if_contains("model"); model && model->is_string()) {
    out.model = std::string(model->as_string());
  }
  const json::value* usage = answer.if_contains("usage");
  const json::value* prompt = usage != nullptr && usage->is_object()
                                  ? usage->as_object().if_contains("prompt_tokens")
                                  : nullptr;
  if (prompt != nullptr && prompt->is_int64()) out.prompt_tokens = prompt->as_int64();
  return out;
}

}  // namespace turnpike::providers::openai
