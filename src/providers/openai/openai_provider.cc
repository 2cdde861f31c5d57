#include "providers/openai/openai_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>

#include "providers/openai/stream_codec.h"
#include "providers/reasoning.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai {
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

int64_t Count(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_int64() ? value->as_int64() : -1;
}

// Appends JSON text to a string as json::serialize writes it, through one serializer and a
// buffer on the stack, so writing a DOM member by member makes no string per member.
class JsonAppender {
 public:
  explicit JsonAppender(std::string& out) : out_(out) {}
  void Raw(std::string_view text) { out_.append(text); }
  void String(std::string_view text) {
    serializer_.reset(text);
    Drain();
  }
  void Key(std::string_view key) {
    String(key);
    out_.push_back(':');
  }
  void Value(const json::value& value) {
    serializer_.reset(&value);
    Drain();
  }

 private:
  void Drain() {
    while (!serializer_.done()) out_.append(serializer_.read(buffer_));
  }

  std::string& out_;
  json::serializer serializer_;
  char buffer_[4096];
};

// `stream_options` with include_usage set to true, written where the pivot has it (or last).
void AppendStreamOptions(JsonAppender& w, const json::value* options) {
  w.Key("stream_options");
  if (options == nullptr || !options->is_object()) {
    w.Raw(R"({"include_usage":true})");
    return;
  }
  bool first = true;
  bool wrote_usage = false;
  w.Raw("{");
  for (const json::key_value_pair& member : options->as_object()) {
    if (!first) w.Raw(",");
    first = false;
    w.Key(member.key());
    if (member.key() == "include_usage") {
      w.Raw("true");
      wrote_usage = true;
    } else {
      w.Value(member.value());
    }
  }
  if (!wrote_usage) w.Raw(first ? R"("include_usage":true)" : R"(,"include_usage":true)");
  w.Raw("}");
}

// Reasoning of earlier turns is not sent to OpenAI-compatible upstreams: DeepSeek answers 400
// to an input message with reasoning_content, and the chat templates of vLLM and llama.cpp
// drop it. The gateway's signature fields belong to other dialects (reasoning.h).
bool DroppedMessageField(std::string_view key) {
  return key == reasoning::kContent || reasoning::IsGatewayMessageField(key);
}

bool NeedsFiltering(const json::object& message) {
  for (const json::key_value_pair& member : message) {
    if (DroppedMessageField(member.key())) return true;
  }
  return false;
}

bool NeedsFiltering(const json::array& messages) {
  for (const json::value& message : messages) {
    if (message.is_object() && NeedsFiltering(message.as_object())) return true;
  }
  return false;
}

// One message, without the fields this dialect drops.
void AppendMessage(JsonAppender& w, const json::value& message) {
  if (!message.is_object()) {
    w.Value(message);
    return;
  }
  w.Raw("{");
  bool first = true;
  for (const json::key_value_pair& member : message.as_object()) {
    if (DroppedMessageField(member.key())) continue;
    if (!first) w.Raw(",");
    first = false;
    w.Key(member.key());
    w.Value(member.value());
  }
  w.Raw("}");
}

// The messages, with the window's before messages[at] (when there is a window). A message
// that keeps all its fields is written as serializing it writes it: from its text, for the
// window's.
void AppendMessages(JsonAppender& w, const json::array& messages, size_t at,
                    std::span<const TextMessage> window) {
  const bool filtering = NeedsFiltering(messages);
  w.Key("messages");
  w.Raw("[");
  bool first = true;
  auto next = [&] {
    if (!first) w.Raw(",");
    first = false;
  };
  auto pivot_message = [&](const json::value& message) {
    next();
    if (filtering) {
      AppendMessage(w, message);
    } else {
      w.Value(message);
    }
  };
  for (size_t i = 0; i < at && i < messages.size(); ++i) pivot_message(messages[i]);
  for (const TextMessage& message : window) {
    next();
    if (message.value->is_object() && NeedsFiltering(message.value->as_object())) {
      AppendMessage(w, *message.value);
    } else {
      w.Raw(message.text);
    }
  }
  for (size_t i = at; i < messages.size(); ++i) pivot_message(messages[i]);
  w.Raw("]");
}

// BuildRequest's writer; `window` goes into the messages before messages[at].
std::string WriteRequest(const json::object& chat, const UpstreamRequestOptions& options, size_t at,
                         std::span<const TextMessage> window) {
  const json::value* stream = chat.if_contains("stream");
  const bool streaming = stream != nullptr && *stream == true;
  std::string out;
  if (!window.empty()) {
    // An agent turn's window is most of the body (50 messages by default): room for its texts
    // and a kilobyte of the rest, so that the body grows once at most instead of doubling its
    // way there, copying what it holds each time.
    size_t window_bytes = 0;
    for (const TextMessage& message : window) window_bytes += message.text.size() + 1;
    out.reserve(window_bytes + 1024);
  }
  JsonAppender w(out);
  w.Raw("{");
  bool first = true;
  auto next = [&] {
    if (!first) w.Raw(",");
    first = false;
  };
  bool wrote_model = false;
  bool wrote_options = false;
  for (const json::key_value_pair& member : chat) {
    next();
    if (member.key() == "model") {
      w.Key("model");
      w.String(options.upstream_model);
      wrote_model = true;
    } else if (member.key() == "stream_options" && streaming) {
      AppendStreamOptions(w, &member.value());
      wrote_options = true;
    } else if (member.key() == "messages" && member.value().is_array() &&
               (!window.empty() || NeedsFiltering(member.value().as_array()))) {
      AppendMessages(w, member.value().as_array(), at, window);
    } else {
      w.Key(member.key());
      w.Value(member.value());
    }
  }
  if (!options.tools_text.empty() && options.tools != nullptr && !options.tools->empty() &&
      !chat.contains("tools")) {
    next();
    w.Key("tools");
    w.Raw(options.tools_text);
  }
  if (!wrote_model) {
    next();
    w.Key("model");
    w.String(options.upstream_model);
  }
  if (streaming && !wrote_options) {
    next();
    AppendStreamOptions(w, nullptr);
  }
  w.Raw("}");
  return out;
}

}  // namespace

Error ParseErrorEnvelope(int status, std::string_view body) {
  Error error{ErrorCodeForStatus(status),
              "The upstream provider answered HTTP " + std::to_string(status) + ".", ""};
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec || !doc.is_object()) return error;
  const json::value* inner = doc.as_object().if_contains("error");
  if (inner == nullptr || !inner->is_object()) return error;
  std::string message = StringOr(inner->as_object(), "message");
  if (!message.empty()) error.message = std::move(message);
  error.param = StringOr(inner->as_object(), "param");
  return error;
}

UpstreamEndpoint OpenAiProvider::Endpoint(const EndpointParams& params) const {
  UpstreamEndpoint endpoint;
  endpoint.path = std::string(params.base_path) + "/chat/completions";
  endpoint.stream_path = endpoint.path;
  endpoint.embed_path = std::string(params.base_path) + "/embeddings";
  if (!params.api_key.empty()) endpoint.authorization = "Bearer " + std::string(params.api_key);
  return endpoint;
}

// The pivot is this dialect's own request: it is written member by member with `model`
// replaced and, when streaming, stream_options.include_usage set (so the answer carries usage),
// in the pivot's order, as serializing a modified copy would write it, without the copy.
Result<std::string> OpenAiProvider::BuildRequest(const json::object& chat,
                                                 const UpstreamRequestOptions& options) const {
  return WriteRequest(chat, options, 0, {});
}

Result<std::string> OpenAiProvider::BuildRequestWithWindow(
    const json::object& chat, const UpstreamRequestOptions& options, size_t at,
    std::span<const TextMessage> window) const {
  return WriteRequest(chat, options, at, window);
}

std::unique_ptr<StreamDecoder> OpenAiProvider::NewDecoder() const {
  return std::make_unique<OpenAiStreamDecoder>();
}

Result<Response> OpenAiProvider::ParseResponse(std::string_view body) const {
  boost::system::error_code ec;
  // Read into a Response (strings only) and dropped: parsed in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Bad("The upstream answer is not a JSON object.");
  const json::object& completion = doc.as_object();
  // An error object under a 2xx status is still an error, never a 200 to the client.
  if (const json::value* error = completion.if_contains("error"); error && error->is_object()) {
    return ParseError(kStatusForErrorIn2xx, body);
  }
  Response response;
  response.id = StringOr(completion, "id");
  response.model = StringOr(completion, "model");
  const json::value* choices = completion.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->as_array().empty() ||
      !choices->as_array()[0].is_object()) {
    return Bad("The upstream answer has no choices.");
  }
  if (choices->as_array().size() > 1) return Bad("The upstream answered with several choices.");
  const json::object& choice = choices->as_array()[0].as_object();
  response.finish = ParseFinishReason(StringOr(choice, "finish_reason"));
  const json::value* message = choice.if_contains("message");
  if (message == nullptr || !message->is_object())
    return Bad("The upstream choice has no message.");
  const json::object& m = message->as_object();
  response.text = StringOr(m, "content");
  if (response.text.empty()) response.text = StringOr(m, "refusal");
  response.reasoning = StringOr(m, reasoning::kContent);
  if (response.reasoning.empty()) response.reasoning = StringOr(m, "reasoning");
  if (const json::value* calls = m.if_contains("tool_calls"); calls && calls->is_array()) {
    for (const json::value& call : calls->as_array()) {
      if (!call.is_object()) return Bad("The upstream answer has a malformed tool call.");
      const json::value* function = call.as_object().if_contains("function");
      if (function == nullptr || !function->is_object()) {
        return Bad("The upstream answer has a tool call without a function.");
      }
      response.tool_calls.push_back(ToolCall{StringOr(call.as_object(), "id"),
                                             StringOr(function->as_object(), "name"),
                                             StringOr(function->as_object(), "arguments")});
    }
  }
  if (const json::value* usage = completion.if_contains("usage"); usage && usage->is_object()) {
    const json::object& u = usage->as_object();
    response.usage.prompt_tokens = Count(u, "prompt_tokens");
    response.usage.completion_tokens = Count(u, "completion_tokens");
    if (const json::value* details = u.if_contains("prompt_tokens_details");
        details && details->is_object()) {
      response.usage.cached_tokens = Count(details->as_object(), "cached_tokens");
    }
    if (const json::value* details = u.if_contains("completion_tokens_details");
        details && details->is_object()) {
      response.usage.reasoning_tokens = Count(details->as_object(), "reasoning_tokens");
    }
  }
  return response;
}

Error OpenAiProvider::ParseError(int status, std::string_view body) const {
  return ParseErrorEnvelope(status, body);
}

Result<json::object> OpenAiProvider::ParseRequest(std::string_view body) const {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) {
    return Error{ErrorCode::kInvalidRequest,
                 "We could not parse the JSON body of your request: " + ec.message(), ""};
  }
  if (!doc.is_object()) {
    return Error{ErrorCode::kInvalidRequest, "The request body must be a JSON object.", ""};
  }
  return std::move(doc.as_object());
}

std::unique_ptr<StreamEncoder> OpenAiProvider::NewEncoder(const EncoderOptions& options) const {
  return std::make_unique<OpenAiStreamEncoder>(options);
}

std::string OpenAiProvider::RenderResponse(const Response& response, int64_t created) const {
  ScratchJson scratch;  // the answer is built here and serialized before it goes
  const json::storage_ptr sp = scratch.storage();
  json::object message({{"role", "assistant"}}, sp);
  if (response.text.empty()) {
    message["content"] = nullptr;
  } else {
    message["content"] = response.text;
  }
  if (!response.reasoning.empty()) message[reasoning::kContent] = response.reasoning;
  if (!response.tool_calls.empty()) {
    json::array calls(sp);
    for (const ToolCall& call : response.tool_calls) {
      calls.push_back(json::object(
          {{"id", call.id},
           {"type", "function"},
           {"function", json::object({{"name", call.name}, {"arguments", call.arguments}}, sp)}},
          sp));
    }
    message["tool_calls"] = std::move(calls);
  }
  message["refusal"] = nullptr;
  const TokenUsage& u = response.usage;
  const int64_t prompt = std::max<int64_t>(u.prompt_tokens, 0);
  const int64_t completion = std::max<int64_t>(u.completion_tokens, 0);
  json::object usage(
      {{"prompt_tokens", prompt},
       {"completion_tokens", completion},
       {"total_tokens", prompt + completion},
       {"prompt_tokens_details",
        json::object({{"cached_tokens", std::max<int64_t>(u.cached_tokens, 0)}}, sp)}},
      sp);
  if (u.reasoning_tokens >= 0) {
    usage["completion_tokens_details"] =
        json::object({{"reasoning_tokens", u.reasoning_tokens}}, sp);
  }
  json::object choice({{"index", 0},
                       {"message", std::move(message)},
                       {"logprobs", nullptr},
                       {"finish_reason", FinishReasonName(response.finish)}},
                      sp);
  json::object completion_object({{"id", response.id},
                                  {"object", "chat.completion"},
                                  {"created", created},
                                  {"model", response.model},
                                  {"choices", json::array({std::move(choice)}, sp)},
                                  {"usage", std::move(usage)}},
                                 sp);
  return json::serialize(completion_object);
}

ErrorReply OpenAiProvider::RenderError(const Error& error) const {
  std::string body = R"({"error":)" + ErrorObject(error) + "}";
  return ErrorReply{HttpStatus(error.code), std::move(body)};
}

}  // namespace turnpike::providers::openai
