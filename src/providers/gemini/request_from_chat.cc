// OpenAI chat request (the pivot) -> Gemini generateContent request.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <optional>

#include "providers/gemini/requests.h"
#include "providers/gemini/thought_signature.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

constexpr std::string_view kUserRole = "user";
constexpr std::string_view kModelRole = "model";

// Top-level fields that have a Gemini equivalent (or, for stream and stream_options, whose
// meaning the gateway keeps: streaming is the URL, and Gemini always reports usage). Anything
// else present and not null is refused, so that nothing the client asked for is dropped.
constexpr std::string_view kHandled[] = {
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
    "n",
    "response_format",
    "parallel_tool_calls",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "reasoning_effort",
};

// OpenAI input_audio formats and the MIME types Gemini documents for them.
struct AudioFormat {
  std::string_view format, mime_type;
};
constexpr AudioFormat kAudioFormats[] = {{"wav", "audio/wav"}, {"mp3", "audio/mp3"}};

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

constexpr std::string_view kName = "Gemini";  // in errors: "... provider (Gemini)."

Error Unsupported(const std::string& param) { return request::UnsupportedBy(param, kName); }

// An id with the thought-signature separator whose signature segment is not base64url.
Error MalformedId(const std::string& param) {
  return Invalid(
      "This tool call id carries a Gemini thought signature after '_ts_' that is not valid "
      "base64url: send the id back exactly as the gateway returned it.",
      param);
}

// The request is built in the caller's scratch storage (`sp`, providers/scratch_json.h) and
// serialized before it goes, so its objects, arrays and strings cost no allocation of their own.

// An OpenAI image_url part -> an inlineData part. Gemini reads images inline or from its own
// Files API, never from an arbitrary URL, so only data URLs can be expressed.
Result<json::object> ImagePart(const json::object& part, const std::string& param,
                               const json::storage_ptr& sp) {
  Result<std::string_view> url = request::ImageUrlOf(
      part, param,
      "Gemini sets image resolution per request, not per image; 'detail' must be 'auto'.");
  if (!url.ok()) return url.error();
  if (!request::IsDataUrl(url.value())) {
    return Invalid(
        "Gemini cannot fetch images by URL: send the image inline as a base64 data "
        "URL (data:<type>;base64,<data>).",
        param + ".image_url");
  }
  const std::optional<request::DataUrl> data = request::ParseBase64DataUrl(url.value());
  if (!data) return Invalid("An image data URL must be base64 encoded.", param + ".image_url.url");
  json::object inline_data({{"mimeType", data->media_type}, {"data", data->data}}, sp);
  return json::object({{"inlineData", std::move(inline_data)}}, sp);
}

// An OpenAI input_audio part ({"data": base64, "format": "wav"|"mp3"}) -> an inlineData part.
Result<json::object> AudioPart(const json::object& part, const std::string& param,
                               const json::storage_ptr& sp) {
  const json::value* audio = part.if_contains("input_audio");
  if (audio == nullptr || !audio->is_object()) {
    return WrongType(param + ".input_audio", "an object");
  }
  const json::value* data = audio->as_object().if_contains("data");
  const json::value* format = audio->as_object().if_contains("format");
  if (data == nullptr || !data->is_string()) {
    return WrongType(param + ".input_audio.data", "a string");
  }
  for (const AudioFormat& known : kAudioFormats) {
    if (format != nullptr && format->is_string() && format->as_string() == known.format) {
      json::object inline_data({{"mimeType", known.mime_type}, {"data", *data}}, sp);
      return json::object({{"inlineData", std::move(inline_data)}}, sp);
    }
  }
  return Invalid("Audio format must be 'wav' or 'mp3'.", param + ".input_audio.format");
}

enum class Media : uint8_t { kTextOnly, kAny };

// Message content (a string or an array of parts) -> Gemini parts.
Status AppendParts(const json::value& content, const std::string& param, Media media,
                   json::array& parts) {
  const json::storage_ptr& sp = parts.storage();
  if (content.is_null()) return Ok{};
  if (content.is_string()) {
    if (!content.as_string().empty()) parts.push_back(json::object({{"text", content}}, sp));
    return Ok{};
  }
  if (!content.is_array()) return WrongType(param, "a string or an array");
  size_t i = 0;
  for (const json::value& part : content.as_array()) {
    const std::string at = At(param, i++);
    if (!part.is_object()) return WrongType(at, "an object");
    const json::object& fields = part.as_object();
    const json::value* type = fields.if_contains("type");
    std::optional<Result<json::object>> converted;
    if (type && *type == "text") {
      const json::value* text = fields.if_contains("text");
      if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
      converted = json::object({{"text", *text}}, sp);
    } else if (type && *type == "image_url" && media == Media::kAny) {
      converted = ImagePart(fields, at, sp);
    } else if (type && *type == "input_audio" && media == Media::kAny) {
      converted = AudioPart(fields, at, sp);
    }
    if (!converted) return Unsupported(at + ".type");
    if (!converted->ok()) return converted->error();
    parts.push_back(std::move(converted->value()));
  }
  return Ok{};
}

// The text of content that must be text only (a tool result), concatenated.
Result<std::string> TextOf(const json::value& content, const std::string& param,
                           const json::storage_ptr& sp) {
  json::array parts(sp);
  if (Status s = AppendParts(content, param, Media::kTextOnly, parts); !s.ok()) return s.error();
  std::string text;
  for (const json::value& part : parts) text += part.at("text").as_string();
  return text;
}

class Translation {
 public:
  Translation(const json::object& chat, json::storage_ptr sp)
      : chat_(chat), sp_(std::move(sp)), system_(sp_), contents_(sp_) {}

  Result<json::object> Run() {
    if (std::optional<std::string> field = request::FirstUnhandled(chat_, kHandled)) {
      return Unsupported(*field);
    }
    json::object out(sp_);
    if (Status s = Messages(); !s.ok()) return s.error();
    out["contents"] = std::move(contents_);
    if (!system_.empty()) {
      out["systemInstruction"] = json::object({{"parts", std::move(system_)}}, sp_);
    }
    if (Status s = Tools(out); !s.ok()) return s.error();
    json::object config(sp_);
    if (Status s = Generation(config); !s.ok()) return s.error();
    if (Status s = ResponseFormat(config); !s.ok()) return s.error();
    if (Status s = Thinking(config); !s.ok()) return s.error();
    if (!config.empty()) out["generationConfig"] = std::move(config);
    return out;
  }

 private:
  // Appends parts to the conversation: consecutive messages with the same Gemini role share
  // one Content (tool results and the user text after them go in one user turn).
  void Append(std::string_view role, json::array parts) {
    if (parts.empty()) return;
    if (!contents_.empty() && contents_.back().as_object().at("role").as_string() == role) {
      json::array& last = contents_.back().as_object()["parts"].as_array();
      for (json::value& part : parts) last.push_back(std::move(part));
      return;
    }
    contents_.push_back(json::object({{"role", role}, {"parts", std::move(parts)}}, sp_));
  }

  Status Messages() {
    Status read = request::ForEachMessage(
        chat_, [this](const json::object& message, const std::string& param) {
          return Message(message, param);
        });
    if (!read.ok()) return read;
    if (contents_.empty()) {
      return Invalid("Gemini needs at least one user or assistant message with content.",
                     "messages");
    }
    return Ok{};
  }

  Status Message(const json::object& message, const std::string& param) {
    const json::value* role_value = message.if_contains("role");
    if (role_value == nullptr || !role_value->is_string()) {
      return WrongType(param + ".role", "a string");
    }
    const std::string_view role = role_value->as_string();
    if (Present(message, "name")) return Unsupported(param + ".name");
    const json::value null_content;
    const json::value* content = message.if_contains("content");
    if (content == nullptr) content = &null_content;
    if (role == "system" || role == "developer") {
      // One systemInstruction: only system messages before the conversation fit in it.
      if (!contents_.empty()) {
        return Invalid("Gemini accepts system messages only before the conversation.",
                       param + ".role");
      }
      return AppendParts(*content, param + ".content", Media::kTextOnly, system_);
    }
    if (role == "user") {
      json::array parts(sp_);
      if (Status s = AppendParts(*content, param + ".content", Media::kAny, parts); !s.ok()) {
        return s;
      }
      Append(kUserRole, std::move(parts));
      return Ok{};
    }
    if (role == "assistant") return Assistant(message, *content, param);
    if (role == "tool") return ToolResult(message, *content, param);
    return Unsupported(param + ".role");
  }

  Status Assistant(const json::object& message, const json::value& content,
                   const std::string& param) {
    if (Present(message, "refusal")) return Unsupported(param + ".refusal");
    if (Present(message, "audio")) return Unsupported(param + ".audio");
    json::array parts(sp_);
    if (Status s = AppendParts(content, param + ".content", Media::kTextOnly, parts); !s.ok()) {
      return s;
    }
    const json::value* calls = message.if_contains("tool_calls");
    if (calls != nullptr && !calls->is_null()) {
      if (!calls->is_array()) return WrongType(param + ".tool_calls", "an array");
      size_t j = 0;
      for (const json::value& call : calls->as_array()) {
        Result<json::object> part = FunctionCall(call, At(param + ".tool_calls", j++));
        if (!part.ok()) return part.error();
        parts.push_back(std::move(part.value()));
      }
    }
    Append(kModelRole, std::move(parts));
    return Ok{};
  }

  // An OpenAI tool call -> a functionCall part, with the thoughtSignature its id carries
  // (thought_signature.h); remembers its plain id for the result's name.
  Result<json::object> FunctionCall(const json::value& call, const std::string& param) {
    if (!call.is_object()) return WrongType(param, "an object");
    const json::object& fields = call.as_object();
    const json::value* type = fields.if_contains("type");
    if (type && *type != "function") return Unsupported(param + ".type");
    const json::value* id = fields.if_contains("id");
    const json::value* function = fields.if_contains("function");
    if (id == nullptr || !id->is_string()) return WrongType(param + ".id", "a string");
    if (function == nullptr || !function->is_object()) {
      return WrongType(param + ".function", "an object");
    }
    const json::value* name = function->as_object().if_contains("name");
    const json::value* arguments = function->as_object().if_contains("arguments");
    if (name == nullptr || !name->is_string())
      return WrongType(param + ".function.name", "a string");
    if (arguments == nullptr || !arguments->is_string()) {
      return WrongType(param + ".function.arguments", "a string");
    }
    std::optional<CallId> split = SplitCallId(id->as_string());
    if (!split) return MalformedId(param + ".id");
    boost::system::error_code ec;
    json::value args = json::parse(arguments->as_string(), ec, sp_);
    if (ec || !args.is_object()) {
      return Invalid("Tool call arguments must be a JSON object.", param + ".function.arguments");
    }
    call_names_[std::string(split->plain)] = std::string(name->as_string());
    json::object function_call({{"name", *name}, {"args", std::move(args)}}, sp_);
    json::object part({{"functionCall", std::move(function_call)}}, sp_);
    if (!split->signature.empty()) part["thoughtSignature"] = split->signature;
    return part;
  }

  // An OpenAI tool message -> a functionResponse part named after the call it answers. The
  // response must be an object: a result that is a JSON object is sent as is, anything else
  // as {"content": <the text>}.
  Status ToolResult(const json::object& message, const json::value& content,
                    const std::string& param) {
    const json::value* id = message.if_contains("tool_call_id");
    if (id == nullptr || !id->is_string()) return WrongType(param + ".tool_call_id", "a string");
    std::optional<CallId> split = SplitCallId(id->as_string());
    if (!split) return MalformedId(param + ".tool_call_id");
    auto call = call_names_.find(std::string(split->plain));
    if (call == call_names_.end()) {
      return Invalid(
          "Gemini names a function result after its call: no earlier assistant "
          "message has a tool call with this id.",
          param + ".tool_call_id");
    }
    Result<std::string> text = TextOf(content, param + ".content", sp_);
    if (!text.ok()) return text.error();
    boost::system::error_code ec;
    json::value response = json::parse(text.value(), ec, sp_);
    if (ec || !response.is_object()) response = json::object({{"content", text.value()}}, sp_);
    json::object function_response({{"name", call->second}, {"response", std::move(response)}},
                                   sp_);
    json::array parts(sp_);
    parts.push_back(json::object({{"functionResponse", std::move(function_response)}}, sp_));
    Append(kUserRole, std::move(parts));
    return Ok{};
  }

  Status Tools(json::object& out) {
    Result<std::vector<request::FunctionTool>> tools = request::ReadFunctionTools(chat_, kName);
    if (!tools.ok()) return tools.error();
    json::array declarations(sp_);
    for (const request::FunctionTool& tool : tools.value()) {
      if (tool.strict) return Unsupported(tool.param + ".function.strict");
      json::object declaration({{"name", *tool.name}}, sp_);
      if (tool.description != nullptr) declaration["description"] = *tool.description;
      // JSON Schema as the client wrote it: `parameters` takes only Gemini's OpenAPI subset
      // (no additionalProperties, $ref...), parametersJsonSchema takes JSON Schema.
      if (tool.parameters != nullptr) declaration["parametersJsonSchema"] = *tool.parameters;
      declarations.push_back(std::move(declaration));
    }
    if (!declarations.empty()) {
      out["tools"] = json::array(
          {json::object({{"functionDeclarations", std::move(declarations)}}, sp_)}, sp_);
    }
    if (Present(chat_, "parallel_tool_calls")) {
      const json::value& parallel = chat_.at("parallel_tool_calls");
      if (!parallel.is_bool()) return WrongType("parallel_tool_calls", "a boolean");
      // Gemini decides by itself how many calls to make: it cannot be limited to one.
      if (!parallel.as_bool()) return Unsupported("parallel_tool_calls");
    }
    if (!Present(chat_, "tool_choice")) return Ok{};
    const json::value& choice = chat_.at("tool_choice");
    json::object config(sp_);
    if (choice == "none") {
      config["mode"] = "NONE";
    } else if (choice == "auto") {
      config["mode"] = "AUTO";
    } else if (choice == "required") {
      config["mode"] = "ANY";
    } else if (choice.is_object() && choice.as_object().if_contains("function") &&
               choice.at("function").is_object() &&
               choice.at("function").as_object().if_contains("name") &&
               choice.at("function").at("name").is_string()) {
      config["mode"] = "ANY";
      config["allowedFunctionNames"] = json::array({choice.at("function").at("name")}, sp_);
    } else {
      return Unsupported("tool_choice");
    }
    out["toolConfig"] = json::object({{"functionCallingConfig", std::move(config)}}, sp_);
    return Ok{};
  }

  // reasoning_effort -> thinkingConfig: the budget of reasoning.h's table, thoughts included
  // (so the client sees the reasoning); "none" turns thinking off (budget 0; Gemini 2.5 Pro
  // cannot, and says so with a 400).
  Status Thinking(json::object& config) {
    Result<std::optional<reasoning::Effort>> effort = reasoning::ReadEffort(chat_);
    if (!effort.ok()) return effort.error();
    if (!effort->has_value()) return Ok{};
    const int64_t budget = reasoning::BudgetFor(**effort);
    json::object thinking({{"thinkingBudget", budget}}, sp_);
    if (budget > 0) thinking["includeThoughts"] = true;
    config["thinkingConfig"] = std::move(thinking);
    return Ok{};
  }

  Status Generation(json::object& config) {
    struct Number {
      std::string_view from, to;
    };
    for (const Number& field : {Number{"temperature", "temperature"}, Number{"top_p", "topP"},
                                Number{"presence_penalty", "presencePenalty"},
                                Number{"frequency_penalty", "frequencyPenalty"}}) {
      if (!Present(chat_, field.from)) continue;
      if (!chat_.at(field.from).is_number()) return WrongType(std::string(field.from), "a number");
      config[field.to] = chat_.at(field.from);
    }
    if (Present(chat_, "seed")) {
      if (!chat_.at("seed").is_int64()) return WrongType("seed", "an integer");
      config["seed"] = chat_.at("seed");
    }
    Result<std::optional<int64_t>> limit = request::MaxOutputTokens(chat_);
    if (!limit.ok()) return limit.error();
    if (*limit) config["maxOutputTokens"] = **limit;
    if (Status one = request::OneChoice(
            chat_, "Only one choice can be streamed through the gateway; 'n' must be 1.");
        !one.ok()) {
      return one;
    }
    if (Present(chat_, "n")) config["candidateCount"] = 1;
    Result<std::optional<json::array>> stop = request::StopSequences(chat_);
    if (!stop.ok()) return stop.error();
    if (*stop) config["stopSequences"] = std::move(**stop);
    return Ok{};
  }

  // text -> nothing; json_object -> JSON mode; json_schema -> JSON mode with the schema, as
  // JSON Schema (responseJsonSchema; responseSchema takes only the OpenAPI subset).
  Status ResponseFormat(json::object& config) {
    if (!Present(chat_, "response_format")) return Ok{};
    const json::value& format = chat_.at("response_format");
    const json::value* type = format.is_object() ? format.as_object().if_contains("type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      return WrongType("response_format.type", "a string");
    }
    if (*type == "text") return Ok{};
    if (*type == "json_object") {
      config["responseMimeType"] = "application/json";
      return Ok{};
    }
    if (*type != "json_schema") return Unsupported("response_format.type");
    const json::value* spec = format.as_object().if_contains("json_schema");
    if (spec == nullptr || !spec->is_object()) {
      return WrongType("response_format.json_schema", "an object");
    }
    config["responseMimeType"] = "application/json";
    if (const json::value* schema = spec->as_object().if_contains("schema");
        schema && !schema->is_null()) {
      config["responseJsonSchema"] = *schema;
    }
    return Ok{};
  }

  const json::object& chat_;
  json::storage_ptr sp_;
  json::array system_;
  json::array contents_;
  std::map<std::string, std::string> call_names_;  // plain tool call id -> function name
};

}  // namespace

Result<std::string> BuildGenerateContentRequest(const json::object& chat,
                                                const UpstreamRequestOptions&) {
  ScratchJson scratch;
  Result<json::object> out = Translation(chat, scratch.storage()).Run();
  if (!out.ok()) return out.error();
  return json::serialize(out.value());
}

}  // namespace turnpike::providers::gemini
