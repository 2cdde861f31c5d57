#include "providers/cohere/cohere_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/cohere/client_requests.h"
#include "providers/cohere/requests.h"
#include "providers/cohere/stream_decoder.h"
#include "providers/cohere/stream_encoder.h"
#include "providers/cohere/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

// The status an error found in a 2xx body is judged by.
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

std::string StringOr(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

const json::object* ObjectAt(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_object() ? &value->as_object() : nullptr;
}

// A count (Cohere's schema says double) as an integer; -1 when absent.
int64_t Count(const json::object* object, std::string_view key) {
  if (object == nullptr) return -1;
  const json::value* value = object->if_contains(key);
  if (value == nullptr || !value->is_number()) return -1;
  return static_cast<int64_t>(value->to_number<double>());
}

TokenUsage ReadUsage(const json::object* usage) {
  if (usage == nullptr) return TokenUsage{};
  UsageCounts counts;
  const json::object* billed = ObjectAt(*usage, "billed_units");
  const json::object* tokens = ObjectAt(*usage, "tokens");
  counts.billed_input = Count(billed, "input_tokens");
  counts.billed_output = Count(billed, "output_tokens");
  counts.input = Count(tokens, "input_tokens");
  counts.output = Count(tokens, "output_tokens");
  counts.cached = Count(usage, "cached_tokens");
  return ToTokenUsage(counts);
}

Status ReadContent(const json::value* content, Response& response) {
  if (content == nullptr || content->is_null()) return Ok{};
  if (content->is_string()) {
    response.text = std::string(content->as_string());
    return Ok{};
  }
  if (!content->is_array()) return Bad("The upstream answer has malformed content.");
  for (const json::value& block : content->as_array()) {
    if (!block.is_object()) return Bad("The upstream answer has a malformed content block.");
    const std::string type = StringOr(block.as_object(), "type");
    if (type == "thinking") {  // a reasoning model's thinking (README.md)
      response.reasoning += StringOr(block.as_object(), "thinking");
      continue;
    }
    if (type != "text") {
      return Bad("The upstream answered with a '" + type +
                 "' content block, which the client's API cannot express.");
    }
    response.text += StringOr(block.as_object(), "text");
  }
  return Ok{};
}

Status ReadToolCalls(const json::value* calls, Response& response) {
  if (calls == nullptr || calls->is_null()) return Ok{};
  if (!calls->is_array()) return Bad("The upstream answer has malformed tool_calls.");
  for (const json::value& call : calls->as_array()) {
    const json::object* function =
        call.is_object() ? ObjectAt(call.as_object(), "function") : nullptr;
    if (function == nullptr) return Bad("The upstream answer has a malformed tool call.");
    std::string arguments = StringOr(*function, "arguments");
    if (arguments.empty()) arguments = "{}";
    response.tool_calls.push_back(ToolCall{StringOr(call.as_object(), "id"),
                                           StringOr(*function, "name"), std::move(arguments)});
  }
  return Ok{};
}

}  // namespace

UpstreamEndpoint CohereProvider::Endpoint(const EndpointParams& params) const {
  UpstreamEndpoint endpoint;
  endpoint.path = std::string(params.base_path) + "/v2/chat";
  endpoint.stream_path = endpoint.path;
  endpoint.embed_path = std::string(params.base_path) + "/v2/embed";
  if (!params.api_key.empty()) endpoint.authorization = "Bearer " + std::string(params.api_key);
  return endpoint;
}

Result<std::string> CohereProvider::BuildRequest(const json::object& chat,
                                                 const UpstreamRequestOptions& options) const {
  return BuildChatRequest(chat, options);
}

std::unique_ptr<StreamDecoder> CohereProvider::NewDecoder() const {
  return std::make_unique<CohereStreamDecoder>();
}

Result<Response> CohereProvider::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  const json::object* message = ObjectAt(answer, "message");
  // An error body ({"message":"..."}) under a 2xx status is still an error, never a 200.
  if (message == nullptr) {
    if (const json::value* text = answer.if_contains("message"); text && text->is_string()) {
      return ParseErrorBody(kStatusForErrorIn2xx, body);
    }
    return Bad("The upstream answer has no message.");
  }
  const std::string finish = StringOr(answer, "finish_reason");
  if (IsFailure(finish)) return FailureError(finish, "");
  Response response;
  response.id = StringOr(answer, "id");
  response.finish = ParseFinishReason(finish);
  if (Status s = ReadContent(message->if_contains("content"), response); !s.ok()) return s.error();
  if (Status s = ReadToolCalls(message->if_contains("tool_calls"), response); !s.ok()) {
    return s.error();
  }
  response.usage = ReadUsage(ObjectAt(answer, "usage"));
  return response;
}

Error CohereProvider::ParseError(int status, std::string_view body) const {
  return ParseErrorBody(status, body);
}

Result<json::object> CohereProvider::ParseRequest(std::string_view body) const {
  return ParseChatRequest(body);
}

std::unique_ptr<StreamEncoder> CohereProvider::NewEncoder(const EncoderOptions&) const {
  return std::make_unique<CohereStreamEncoder>();
}

Result<std::string> CohereProvider::IdentityBody(std::string_view body,
                                                 std::string_view upstream_model) const {
  return SpliceModel(body, upstream_model);
}

std::string CohereProvider::RenderResponse(const Response& response, int64_t) const {
  json::object message{{"role", "assistant"}};
  json::array content;
  if (!response.reasoning.empty()) {
    content.push_back(json::object{{"type", "thinking"}, {"thinking", response.reasoning}});
  }
  if (!response.text.empty())
    content.push_back(json::object{{"type", "text"}, {"text", response.text}});
  message["content"] = std::move(content);
  if (!response.tool_calls.empty()) {
    json::array calls;
    for (const ToolCall& call : response.tool_calls) {
      calls.push_back(json::object{
          {"id", call.id},
          {"type", "function"},
          {"function", json::object{{"name", call.name}, {"arguments", call.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  const std::string_view finish = FinishReasonName(response.finish);
  const json::object tokens{
      {"input_tokens", std::max<int64_t>(response.usage.prompt_tokens, 0)},
      {"output_tokens", std::max<int64_t>(response.usage.completion_tokens, 0)}};
  return json::serialize(
      json::object{{"id", response.id},
                   {"finish_reason", finish},
                   {"message", std::move(message)},
                   {"usage", json::object{{"billed_units", tokens}, {"tokens", tokens}}}});
}

ErrorReply CohereProvider::RenderError(const Error& error) const {
  std::string message = error.param.empty() ? error.message : error.param + ": " + error.message;
  return ErrorReply{HttpStatus(error.code), json::serialize(json::object{{"message", message}})};
}

}  // namespace turnpike::providers::cohere
