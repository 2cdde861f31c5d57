#include "providers/ollama/ollama_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/json_text.h"
#include "providers/ollama/requests.h"
#include "providers/ollama/stream_decoder.h"
#include "providers/ollama/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::ollama {
namespace {

namespace json = boost::json;

// The status an error found in a 2xx body is judged by (Ollama's errors carry no type).
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

int64_t Count(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_int64() ? value->as_int64() : -1;
}

std::string StringOr(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

// One message.tool_calls entry -> a ToolCall numbered `index`.
Result<ToolCall> ReadToolCall(const json::value& call, int32_t index) {
  const json::value* function =
      call.is_object() ? call.as_object().if_contains("function") : nullptr;
  if (function == nullptr || !function->is_object()) {
    return Bad("The upstream answer has a malformed tool call.");
  }
  ToolCall out;
  AppendCallId(out.id, index);
  out.name = StringOr(function->as_object(), "name");
  if (out.name.empty()) return Bad("The upstream answer has a tool call without a name.");
  const json::value* arguments = function->as_object().if_contains("arguments");
  if (arguments == nullptr || arguments->is_null()) {
    out.arguments = "{}";
  } else if (arguments->is_string()) {
    out.arguments = std::string(arguments->as_string());
  } else {
    out.arguments = json::serialize(*arguments);
  }
  return out;
}

}  // namespace

UpstreamEndpoint OllamaProvider::Endpoint(const EndpointParams& params) const {
  UpstreamEndpoint endpoint;
  endpoint.path = std::string(params.base_path) + "/api/chat";
  endpoint.stream_path = endpoint.path;
  endpoint.embed_path = std::string(params.base_path) + "/api/embed";
  if (!params.api_key.empty()) endpoint.authorization = "Bearer " + std::string(params.api_key);
  return endpoint;
}

Result<std::string> OllamaProvider::BuildRequest(const json::object& chat,
                                                 const UpstreamRequestOptions& options) const {
  return BuildChatRequest(chat, options);
}

std::unique_ptr<StreamDecoder> OllamaProvider::NewDecoder() const {
  return std::make_unique<OllamaStreamDecoder>();
}

Result<Response> OllamaProvider::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  // An error object under a 2xx status is still an error, never a 200 to the client.
  if (answer.contains("error")) return ParseErrorBody(kStatusForErrorIn2xx, body);
  const json::value* done = answer.if_contains("done");
  if (done == nullptr || *done != true) return Bad("The upstream answer is not complete.");
  const json::value* message = answer.if_contains("message");
  if (message == nullptr || !message->is_object()) {
    return Bad("The upstream answer has no message.");
  }
  Response response;
  const std::string created_at = StringOr(answer, "created_at");
  AppendAnswerId(response.id, created_at);
  response.model = StringOr(answer, "model");
  response.text = StringOr(message->as_object(), "content");
  response.reasoning = StringOr(message->as_object(), "thinking");
  if (const json::value* calls = message->as_object().if_contains("tool_calls");
      calls && !calls->is_null()) {
    if (!calls->is_array()) return Bad("The upstream answer has malformed tool calls.");
    for (const json::value& call : calls->as_array()) {
      Result<ToolCall> read = ReadToolCall(call, static_cast<int32_t>(response.tool_calls.size()));
      if (!read.ok()) return read.error();
      response.tool_calls.push_back(std::move(read.value()));
    }
  }
  response.finish = ParseDoneReason(StringOr(answer, "done_reason"), !response.tool_calls.empty());
  response.usage.prompt_tokens = Count(answer, "prompt_eval_count");
  response.usage.completion_tokens = Count(answer, "eval_count");
  return response;
}

Error OllamaProvider::ParseError(int status, std::string_view body) const {
  return ParseErrorBody(status, body);
}

Result<json::object> OllamaProvider::ParseRequest(std::string_view) const {
  return Error{ErrorCode::kNotFound, "The gateway has no Ollama front door (not implemented).", ""};
}

std::unique_ptr<StreamEncoder> OllamaProvider::NewEncoder(const EncoderOptions&) const {
  return nullptr;
}

std::string OllamaProvider::RenderResponse(const Response& response, int64_t) const {
  json::array calls;
  for (const ToolCall& call : response.tool_calls) {
    boost::system::error_code ec;
    json::value arguments = json::parse(call.arguments, ec);
    if (ec || !arguments.is_object()) arguments = json::object{};
    calls.push_back(json::object{
        {"function", json::object{{"name", call.name}, {"arguments", std::move(arguments)}}}});
  }
  json::object message{{"role", "assistant"}, {"content", response.text}};
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  json::object answer{
      {"model", response.model},
      {"message", std::move(message)},
      {"done", true},
      {"done_reason", response.finish == FinishReason::kLength ? "length" : "stop"}};
  if (response.usage.prompt_tokens >= 0) answer["prompt_eval_count"] = response.usage.prompt_tokens;
  if (response.usage.completion_tokens >= 0) {
    answer["eval_count"] = response.usage.completion_tokens;
  }
  return json::serialize(answer);
}

ErrorReply OllamaProvider::RenderError(const Error& error) const {
  std::string body = R"({"error":")";
  if (!error.param.empty()) {
    AppendJsonEscaped(body, error.param);
    body.append(": ");
  }
  AppendJsonEscaped(body, error.message);
  body.append("\"}");
  return ErrorReply{HttpStatus(error.code), std::move(body)};
}

}  // namespace turnpike::providers::ollama
