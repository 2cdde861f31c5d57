#include "providers/openai_responses/upstream_answer.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "providers/scratch_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

std::string StringOr(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

int64_t Count(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_int64() ? value->as_int64() : -1;
}

const json::object* ObjectAt(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_object() ? &value->as_object() : nullptr;
}

// One message item's text: its output_text and refusal parts.
Status AppendMessageText(const json::object& item, std::string& text) {
  const json::value* content = item.if_contains("content");
  if (content == nullptr || !content->is_array()) {
    return Bad("The upstream answer has a message without content.");
  }
  for (const json::value& part : content->as_array()) {
    if (!part.is_object()) return Bad("The upstream answer has a malformed content part.");
    const json::object& p = part.as_object();
    if (p.if_contains("type") && p.at("type") == "refusal") {
      text += StringOr(p, "refusal");
    } else {
      text += StringOr(p, "text");
    }
  }
  return Ok{};
}

}  // namespace

FinishReason FinishFor(std::string_view status, std::string_view incomplete_reason,
                       bool called_tools) {
  if (status == "incomplete") {
    return incomplete_reason == "content_filter" ? FinishReason::kContentFilter
                                                 : FinishReason::kLength;
  }
  return called_tools ? FinishReason::kToolCalls : FinishReason::kStop;
}

ErrorCode CodeForResponseError(std::string_view code) {
  if (code == "rate_limit_exceeded") return ErrorCode::kRateLimited;
  if (code == "invalid_prompt") return ErrorCode::kInvalidRequest;
  return ErrorCode::kUpstreamBadResponse;
}

Result<Response> ParseResponseBody(std::string_view body) {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  // A failed response, or OpenAI's error envelope under a 2xx status: an error, never a 200.
  if (const json::object* error = ObjectAt(answer, "error")) {
    std::string message = StringOr(*error, "message");
    if (message.empty()) message = "The upstream response failed.";
    return Error{CodeForResponseError(StringOr(*error, "code")), std::move(message),
                 StringOr(*error, "param")};
  }
  const std::string status = StringOr(answer, "status");
  if (status == "failed") return Bad("The upstream response failed.");
  if (status != "completed" && status != "incomplete") {
    return Bad("The upstream response is not finished (status '" + status + "').");
  }
  const json::value* output = answer.if_contains("output");
  if (output == nullptr || !output->is_array()) return Bad("The upstream answer has no output.");
  Response response;
  response.id = StringOr(answer, "id");
  response.model = StringOr(answer, "model");
  for (const json::value& item : output->as_array()) {
    if (!item.is_object()) return Bad("The upstream answer has a malformed output item.");
    const json::object& i = item.as_object();
    const std::string type = StringOr(i, "type");
    if (type == "message") {
      if (Status s = AppendMessageText(i, response.text); !s.ok()) return s.error();
    } else if (type == "function_call") {
      ToolCall call{StringOr(i, "call_id"), StringOr(i, "name"), StringOr(i, "arguments")};
      if (call.id.empty() || call.name.empty()) {
        return Bad("The upstream answer has a function call without call_id or name.");
      }
      response.tool_calls.push_back(std::move(call));
    }
    // reasoning (and any other item the gateway never asks for) carries nothing for chat.
  }
  std::string reason;
  if (const json::object* details = ObjectAt(answer, "incomplete_details")) {
    reason = StringOr(*details, "reason");
  }
  response.finish = FinishFor(status, reason, !response.tool_calls.empty());
  if (const json::object* usage = ObjectAt(answer, "usage")) {
    response.usage.prompt_tokens = Count(*usage, "input_tokens");
    response.usage.completion_tokens = Count(*usage, "output_tokens");
    if (const json::object* details = ObjectAt(*usage, "input_tokens_details")) {
      response.usage.cached_tokens = Count(*details, "cached_tokens");
    }
  }
  return response;
}

}  // namespace turnpike::providers::openai_responses
