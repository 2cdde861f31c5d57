#include "providers/gemini/gemini_provider.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/gemini/client_requests.h"
#include "providers/gemini/requests.h"
#include "providers/gemini/stream_decoder.h"
#include "providers/gemini/stream_encoder.h"
#include "providers/gemini/thought_signature.h"
#include "providers/gemini/wire.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

constexpr std::string_view kModelsPrefix = "models/";
constexpr std::string_view kApiVersionPath = "/v1beta/models/";
// A 2xx body carrying an error object is parsed as if answered with this status, so the
// error's own `code` and `status` decide.
constexpr int kOkStatus = 200;

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

// usageMetadata in the common convention (the same rule as the stream decoder's).
TokenUsage ReadUsage(const json::object& u) {
  TokenUsage usage;
  const int64_t prompt = Count(u, "promptTokenCount");
  const int64_t tool_prompt = Count(u, "toolUsePromptTokenCount");
  const int64_t candidates = Count(u, "candidatesTokenCount");
  const int64_t thoughts = Count(u, "thoughtsTokenCount");
  usage.cached_tokens = Count(u, "cachedContentTokenCount");
  if (prompt >= 0) usage.prompt_tokens = prompt + std::max<int64_t>(tool_prompt, 0);
  if (candidates >= 0 || thoughts >= 0) {
    usage.completion_tokens = std::max<int64_t>(candidates, 0) + std::max<int64_t>(thoughts, 0);
  }
  usage.reasoning_tokens = thoughts;
  return usage;
}

// The parts of the first candidate into `response`.
Status ReadParts(const json::value& content, Response& response) {
  if (!content.is_object()) return Ok{};
  const json::value* parts = content.as_object().if_contains("parts");
  if (parts == nullptr || parts->is_null()) return Ok{};
  if (!parts->is_array()) return Bad("The upstream answer has malformed content parts.");
  for (const json::value& value : parts->as_array()) {
    if (!value.is_object()) return Bad("The upstream answer has a malformed content part.");
    const json::object& part = value.as_object();
    if (const json::value* thought = part.if_contains("thought"); thought && *thought == true) {
      // A thought summary is reasoning, not the answer.
      if (const json::value* text = part.if_contains("text"); text && text->is_string()) {
        response.reasoning += text->as_string();
      }
      continue;
    }
    if (const json::value* text = part.if_contains("text"); text && text->is_string()) {
      response.text += text->as_string();
      continue;
    }
    const json::value* call = part.if_contains("functionCall");
    if (call == nullptr && part.size() == 1 && part.contains("thoughtSignature")) {
      continue;  // a signature alone (carried only on function calls)
    }
    if (call == nullptr || !call->is_object()) {
      return Bad(
          "The upstream answered with a content part (not text or a function call) that "
          "the client's API cannot express.");
    }
    const json::object& fields = call->as_object();
    const std::string signature = StringOr(part, "thoughtSignature");
    if (!signature.empty() && !IsSignature(signature)) {
      return Bad("The upstream sent a function call's thoughtSignature that is not base64.");
    }
    std::string id = StringOr(fields, "id");
    if (id.empty()) {
      id = "call_";
      if (!response.id.empty()) id += response.id + "_";
      id += std::to_string(response.tool_calls.size());
    }
    MakeClientId(id, signature);  // the client gives it back with the call next turn
    const json::value* args = fields.if_contains("args");
    response.tool_calls.push_back(
        ToolCall{std::move(id), StringOr(fields, "name"),
                 args && args->is_object() ? json::serialize(*args) : std::string("{}")});
  }
  return Ok{};
}

}  // namespace

UpstreamEndpoint GeminiProvider::Endpoint(const EndpointParams& params) const {
  std::string_view model = params.model;
  if (model.starts_with(kModelsPrefix)) model.remove_prefix(kModelsPrefix.size());
  UpstreamEndpoint endpoint;
  const std::string base =
      std::string(params.base_path) + std::string(kApiVersionPath) + std::string(model);
  endpoint.path = base + ":generateContent";
  endpoint.stream_path = base + ":streamGenerateContent?alt=sse";
  endpoint.embed_path = base + ":batchEmbedContents";
  endpoint.count_tokens_path = base + ":countTokens";
  if (!params.api_key.empty()) {
    endpoint.extra_headers = "x-goog-api-key: " + std::string(params.api_key);
  }
  return endpoint;
}

Result<std::string> GeminiProvider::BuildRequest(const json::object& chat,
                                                 const UpstreamRequestOptions& options) const {
  return BuildGenerateContentRequest(chat, options);
}

std::unique_ptr<StreamDecoder> GeminiProvider::NewDecoder() const {
  return std::make_unique<GeminiStreamDecoder>();
}

Result<Response> GeminiProvider::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& answer = doc.as_object();
  // An error object under a 2xx status is still an error, never a 200 to the client.
  if (answer.contains("error")) return ParseErrorBody(kOkStatus, body);
  Response response;
  response.id = StringOr(answer, "responseId");
  response.model = StringOr(answer, "modelVersion");
  if (const json::value* usage = answer.if_contains("usageMetadata"); usage && usage->is_object()) {
    response.usage = ReadUsage(usage->as_object());
  }
  const json::value* candidates = answer.if_contains("candidates");
  if (candidates == nullptr || !candidates->is_array() || candidates->as_array().empty()) {
    const json::value* feedback = answer.if_contains("promptFeedback");
    if (feedback && feedback->is_object() && feedback->as_object().contains("blockReason")) {
      response.finish = FinishReason::kContentFilter;  // the prompt was blocked
      return response;
    }
    return Bad("The upstream answer has no candidates.");
  }
  if (candidates->as_array().size() > 1) {
    return Bad("The upstream sent more than one candidate; the client's API carries one.");
  }
  const json::value& first = candidates->as_array().front();
  if (!first.is_object()) return Bad("The upstream answer has a malformed candidate.");
  if (const json::value* content = first.as_object().if_contains("content")) {
    if (Status s = ReadParts(*content, response); !s.ok()) return s.error();
  }
  response.finish = ParseFinishReason(StringOr(first.as_object(), "finishReason"));
  if (response.finish == FinishReason::kNone) response.finish = FinishReason::kStop;
  if (response.finish == FinishReason::kStop && !response.tool_calls.empty()) {
    response.finish = FinishReason::kToolCalls;
  }
  return response;
}

Error GeminiProvider::ParseError(int status, std::string_view body) const {
  return ParseErrorBody(status, body);
}

Result<json::object> GeminiProvider::ParseRequest(std::string_view body) const {
  return ParseGenerateContentRequest(body);
}

std::unique_ptr<StreamEncoder> GeminiProvider::NewEncoder(const EncoderOptions& options) const {
  return std::make_unique<GeminiStreamEncoder>(IncludeThoughts(options.client_body));
}

std::string GeminiProvider::RenderResponse(const Response& response, int64_t) const {
  return RenderGenerateContent(response, false);
}

std::string GeminiProvider::RenderWholeResponse(const Response& response,
                                                const EncoderOptions& options) const {
  return RenderGenerateContent(response, IncludeThoughts(options.client_body));
}

Result<std::string> GeminiProvider::IdentityBody(std::string_view body, std::string_view) const {
  // The model travels in the URL: the client's body goes upstream untouched.
  return std::string(body);
}

ErrorReply GeminiProvider::RenderError(const Error& error) const { return RenderErrorReply(error); }

}  // namespace turnpike::providers::gemini
