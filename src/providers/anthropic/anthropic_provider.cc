#include "providers/anthropic/anthropic_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/anthropic/requests.h"
#include "providers/anthropic/stream_decoder.h"
#include "providers/anthropic/stream_encoder.h"
#include "providers/anthropic/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::anthropic {
namespace {

namespace json = boost::json;

// The version of the Messages API spoken to `provider: anthropic` deployments.
constexpr std::string_view kApiVersion = "2023-06-01";

// The status an error found in a 2xx body is judged by when its type is unknown.
constexpr int kStatusForErrorIn2xx = 502;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

int64_t Count(const json::object& usage, std::string_view key) {
  const json::value* value = usage.if_contains(key);
  return value != nullptr && value->is_int64() ? value->as_int64() : -1;
}

std::string StringOr(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

}  // namespace

UpstreamEndpoint AnthropicProvider::Endpoint(const EndpointParams& params) const {
  UpstreamEndpoint endpoint;
  endpoint.path = std::string(params.base_path) + "/v1/messages";
  endpoint.stream_path = endpoint.path;
  endpoint.count_tokens_path = endpoint.path + "/count_tokens";
  if (!params.api_key.empty()) {
    endpoint.extra_headers = "x-api-key: " + std::string(params.api_key) + "\r\n";
  }
  endpoint.extra_headers.append("anthropic-version: ").append(kApiVersion);
  return endpoint;
}

Result<std::string> AnthropicProvider::BuildRequest(const json::object& chat,
                                                    const UpstreamRequestOptions& options) const {
  return BuildMessagesRequest(chat, options);
}

std::unique_ptr<StreamDecoder> AnthropicProvider::NewDecoder() const {
  return std::make_unique<AnthropicStreamDecoder>();
}

Result<Response> AnthropicProvider::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& message = doc.as_object();
  // An error object under a 2xx status is still an error, never a 200 to the client.
  if (StringOr(message, "type") == "error") {
    return ParseErrorBody(kStatusForErrorIn2xx, body);
  }
  Response response;
  response.id = StringOr(message, "id");
  response.model = StringOr(message, "model");
  response.finish = ParseStopReason(StringOr(message, "stop_reason"));
  response.stop_sequence = StringOr(message, "stop_sequence");
  const json::value* content = message.if_contains("content");
  if (content == nullptr || !content->is_array()) return Bad("The upstream answer has no content.");
  for (const json::value& block : content->as_array()) {
    if (!block.is_object()) return Bad("The upstream answer has a malformed content block.");
    const std::string type = StringOr(block.as_object(), "type");
    if (type == "text") {
      response.text += StringOr(block.as_object(), "text");
    } else if (type == "tool_use") {
      const json::value* input = block.as_object().if_contains("input");
      response.tool_calls.push_back(ToolCall{StringOr(block.as_object(), "id"),
                                             StringOr(block.as_object(), "name"),
                                             input ? json::serialize(*input) : "{}"});
    } else if (type == "thinking") {
      response.reasoning += StringOr(block.as_object(), "thinking");
      response.reasoning_signature = StringOr(block.as_object(), "signature");
    } else if (type == "redacted_thinking") {
      response.redacted_reasoning.push_back(StringOr(block.as_object(), "data"));
    } else {
      return Bad("The upstream answered with a '" + type +
                 "' content block, which the client's API cannot express.");
    }
  }
  if (const json::value* usage = message.if_contains("usage"); usage && usage->is_object()) {
    const json::object& u = usage->as_object();
    const int64_t input = Count(u, "input_tokens");
    response.usage.cached_tokens = Count(u, "cache_read_input_tokens");
    response.usage.cache_creation_tokens = Count(u, "cache_creation_input_tokens");
    response.usage.completion_tokens = Count(u, "output_tokens");
    if (input >= 0) {
      response.usage.prompt_tokens = input + std::max<int64_t>(response.usage.cached_tokens, 0) +
                                     std::max<int64_t>(response.usage.cache_creation_tokens, 0);
    }
  }
  return response;
}

Error AnthropicProvider::ParseError(int status, std::string_view body) const {
  return ParseErrorBody(status, body);
}

Result<json::object> AnthropicProvider::ParseRequest(std::string_view body) const {
  return ParseMessagesRequest(body);
}

std::unique_ptr<StreamEncoder> AnthropicProvider::NewEncoder(const EncoderOptions&) const {
  return std::make_unique<AnthropicStreamEncoder>();
}

std::string AnthropicProvider::RenderResponse(const Response& response, int64_t) const {
  ScratchJson scratch;  // the answer is built here and serialized before it goes
  const json::storage_ptr sp = scratch.storage();
  json::array content(sp);
  // Thinking first, as Anthropic answers; its signature is empty when the upstream signs
  // nothing (README.md).
  if (!response.reasoning.empty() || !response.reasoning_signature.empty()) {
    content.push_back(json::object({{"type", "thinking"},
                                    {"thinking", response.reasoning},
                                    {"signature", response.reasoning_signature}},
                                   sp));
  }
  for (const std::string& data : response.redacted_reasoning) {
    content.push_back(json::object({{"type", "redacted_thinking"}, {"data", data}}, sp));
  }
  if (!response.text.empty()) {
    content.push_back(json::object({{"type", "text"}, {"text", response.text}}, sp));
  }
  for (const ToolCall& call : response.tool_calls) {
    boost::system::error_code ec;
    json::value input = json::parse(call.arguments, ec, sp);
    if (ec || !input.is_object()) input = json::object(sp);
    content.push_back(json::object(
        {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", std::move(input)}},
        sp));
  }
  const TokenUsage& u = response.usage;
  const int64_t cached = std::max<int64_t>(u.cached_tokens, 0);
  const int64_t created = std::max<int64_t>(u.cache_creation_tokens, 0);
  json::object usage({{"input_tokens", std::max<int64_t>(u.prompt_tokens - cached - created, 0)}},
                     sp);
  if (u.cache_creation_tokens >= 0) usage["cache_creation_input_tokens"] = u.cache_creation_tokens;
  if (u.cached_tokens >= 0) usage["cache_read_input_tokens"] = u.cached_tokens;
  usage["output_tokens"] = std::max<int64_t>(u.completion_tokens, 0);
  json::object message({{"id", response.id},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", response.model},
                        {"content", std::move(content)},
                        {"stop_reason", StopReasonName(response.finish)}},
                       sp);
  if (response.stop_sequence.empty()) {
    message["stop_sequence"] = nullptr;
  } else {
    message["stop_sequence"] = response.stop_sequence;
  }
  message["usage"] = std::move(usage);
  return json::serialize(message);
}

ErrorReply AnthropicProvider::RenderError(const Error& error) const {
  return RenderErrorReply(error);
}

}  // namespace turnpike::providers::anthropic
