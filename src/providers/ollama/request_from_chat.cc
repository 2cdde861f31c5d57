// OpenAI chat request -> Ollama /api/chat request.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string_view>

#include "providers/ollama/requests.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::ollama {
namespace {

namespace json = boost::json;

// Text parts of one message are joined with this into Ollama's single `content` string.
constexpr std::string_view kPartSeparator = "\n";

// Top-level fields that have an Ollama equivalent (stream_options: Ollama always reports the
// counts in its final line, so the gateway can honour include_usage itself). Anything else
// present and not null is refused, so that nothing the client asked for is dropped silently.
constexpr std::string_view kHandled[] = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "response_format",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "n",
    "reasoning_effort",
};

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

constexpr std::string_view kName = "Ollama";  // in errors: "... provider (Ollama)."

Error Unsupported(const std::string& param) { return request::UnsupportedBy(param, kName); }

// An OpenAI image_url part -> the base64 payload Ollama's `images` takes.
Result<std::string> ImageData(const json::object& part, const std::string& param) {
  Result<std::string_view> url = request::ImageUrlOf(
      part, param, "Ollama chooses image resolution itself; 'detail' must be 'auto'.");
  if (!url.ok()) return url.error();
  const std::optional<request::DataUrl> data = request::ParseBase64DataUrl(url.value());
  if (!data) {
    return Invalid("Ollama takes images inline only: use a base64 data URL.",
                   param + ".image_url.url");
  }
  return std::string(data->data);
}

// Message content (a string or an array of parts) -> Ollama's content string, and, when
// `images` is given, image parts -> base64 strings.
Status ReadContent(const json::value* content, const std::string& param, std::string& text,
                   json::array* images) {
  if (content == nullptr || content->is_null()) return Ok{};
  if (content->is_string()) {
    text = content->as_string();
    return Ok{};
  }
  if (!content->is_array()) return WrongType(param, "a string or an array");
  bool first = true;
  size_t i = 0;
  for (const json::value& part : content->as_array()) {
    const std::string at = At(param, i++);
    if (!part.is_object()) return WrongType(at, "an object");
    const json::value* type = part.as_object().if_contains("type");
    if (type && *type == "text") {
      const json::value* piece = part.as_object().if_contains("text");
      if (piece == nullptr || !piece->is_string()) return WrongType(at + ".text", "a string");
      if (!first) text.append(kPartSeparator);
      text.append(piece->as_string());
      first = false;
    } else if (type && *type == "image_url" && images != nullptr) {
      Result<std::string> data = ImageData(part.as_object(), at);
      if (!data.ok()) return data.error();
      images->emplace_back(data.value());
    } else {
      return Unsupported(at + ".type");
    }
  }
  return Ok{};
}

class Translation {
 public:
  // The request is built in the caller's scratch storage (`sp`, providers/scratch_json.h) and
  // serialized before it goes: its objects, arrays and strings cost no allocation of their own.
  Translation(const json::object& chat, json::storage_ptr sp)
      : chat_(chat), sp_(std::move(sp)), messages_(sp_) {}

  Result<json::object> Run(const UpstreamRequestOptions& options) {
    if (std::optional<std::string> field = request::FirstUnhandled(chat_, kHandled)) {
      return Unsupported(*field);
    }
    json::object out(sp_);
    out["model"] = options.upstream_model;
    if (Status s = Messages(); !s.ok()) return s.error();
    out["messages"] = std::move(messages_);
    if (Status s = Tools(out); !s.ok()) return s.error();
    if (Status s = Format(out); !s.ok()) return s.error();
    json::object settings(sp_);
    if (Status s = Options(settings); !s.ok()) return s.error();
    if (!settings.empty()) out["options"] = std::move(settings);
    // Ollama streams unless told not to: always say which.
    bool stream = false;
    if (Present(chat_, "stream")) {
      if (!chat_.at("stream").is_bool()) return WrongType("stream", "a boolean");
      stream = chat_.at("stream").as_bool();
    }
    out["stream"] = stream;
    // Ollama's `think` is a boolean for every thinking model (only some, such as gpt-oss, also
    // take a level), so any effort but "none" is `true`.
    Result<std::optional<reasoning::Effort>> effort = reasoning::ReadEffort(chat_);
    if (!effort.ok()) return effort.error();
    if (effort->has_value()) out["think"] = **effort != reasoning::Effort::kNone;
    return out;
  }

 private:
  Status Messages() {
    Status read = request::ForEachMessage(
        chat_, [this](const json::object& message, const std::string& param) {
          return Message(message, param);
        });
    if (!read.ok()) return read;
    return Ok{};
  }

  Status Message(const json::object& message, const std::string& param) {
    const json::value* role_value = message.if_contains("role");
    if (role_value == nullptr || !role_value->is_string()) {
      return WrongType(param + ".role", "a string");
    }
    const std::string_view role = role_value->as_string();
    if (Present(message, "name")) return Unsupported(param + ".name");
    const json::value* content = message.if_contains("content");
    json::object out(sp_);
    std::string text;
    if (role == "system" || role == "developer") {
      if (Status s = ReadContent(content, param + ".content", text, nullptr); !s.ok()) return s;
      out["role"] = "system";
    } else if (role == "user") {
      json::array images(sp_);
      if (Status s = ReadContent(content, param + ".content", text, &images); !s.ok()) return s;
      out["role"] = "user";
      if (!images.empty()) out["images"] = std::move(images);
    } else if (role == "assistant") {
      if (Present(message, "refusal")) return Unsupported(param + ".refusal");
      if (Present(message, "audio")) return Unsupported(param + ".audio");
      if (Status s = ReadContent(content, param + ".content", text, nullptr); !s.ok()) return s;
      out["role"] = "assistant";
      if (Present(message, "tool_calls")) {
        json::array calls(sp_);
        if (Status s = ToolCalls(message.at("tool_calls"), param + ".tool_calls", calls); !s.ok()) {
          return s;
        }
        if (!calls.empty()) out["tool_calls"] = std::move(calls);
      }
    } else if (role == "tool") {
      const json::value* id = message.if_contains("tool_call_id");
      if (id == nullptr || !id->is_string()) return WrongType(param + ".tool_call_id", "a string");
      const json::string* name = CallName(id->as_string());
      if (name == nullptr) {
        return Invalid("No earlier assistant tool call has this id; Ollama needs the tool's name.",
                       param + ".tool_call_id");
      }
      if (Status s = ReadContent(content, param + ".content", text, nullptr); !s.ok()) return s;
      out["role"] = "tool";
      out["tool_name"] = *name;
    } else {
      return Unsupported(param + ".role");
    }
    out["content"] = text;
    messages_.push_back(std::move(out));
    return Ok{};
  }

  // The name of the nearest earlier call with this id (ids may repeat across turns).
  const json::string* CallName(std::string_view id) const {
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (it->first == id) return &it->second;
    }
    return nullptr;
  }

  Status ToolCalls(const json::value& calls, const std::string& param, json::array& out) {
    if (!calls.is_array()) return WrongType(param, "an array");
    size_t i = 0;
    for (const json::value& call : calls.as_array()) {
      const std::string at = At(param, i++);
      if (!call.is_object()) return WrongType(at, "an object");
      const json::object& fields = call.as_object();
      const json::value* type = fields.if_contains("type");
      if (type && !type->is_null() && *type != "function") return Unsupported(at + ".type");
      const json::value* id = fields.if_contains("id");
      const json::value* function = fields.if_contains("function");
      if (id == nullptr || !id->is_string()) return WrongType(at + ".id", "a string");
      if (function == nullptr || !function->is_object()) {
        return WrongType(at + ".function", "an object");
      }
      const json::value* name = function->as_object().if_contains("name");
      const json::value* arguments = function->as_object().if_contains("arguments");
      if (name == nullptr || !name->is_string())
        return WrongType(at + ".function.name", "a string");
      if (arguments == nullptr || !arguments->is_string()) {
        return WrongType(at + ".function.arguments", "a string");
      }
      boost::system::error_code ec;
      json::value parsed = json::parse(arguments->as_string(), ec, sp_);
      if (ec || !parsed.is_object()) {
        return Invalid("Tool call arguments must be a JSON object.", at + ".function.arguments");
      }
      calls_.emplace_back(std::string(id->as_string()), name->as_string());
      out.push_back(json::object(
          {{"function", json::object({{"name", *name}, {"arguments", std::move(parsed)}}, sp_)}},
          sp_));
    }
    return Ok{};
  }

  Status Tools(json::object& out) {
    bool offered = true;
    if (Present(chat_, "tool_choice")) {
      const json::value& choice = chat_.at("tool_choice");
      // Ollama has no tool_choice: "auto" is its behaviour, "none" is offering no tools.
      if (choice == "none") {
        offered = false;
      } else if (choice != "auto") {
        return Invalid("Ollama lets the model choose: 'tool_choice' must be 'auto' or 'none'.",
                       "tool_choice");
      }
    }
    if (Present(chat_, "parallel_tool_calls")) {
      const json::value& parallel = chat_.at("parallel_tool_calls");
      if (!parallel.is_bool()) return WrongType("parallel_tool_calls", "a boolean");
      if (!parallel.as_bool()) {
        return Invalid("Ollama cannot limit the model to one tool call.", "parallel_tool_calls");
      }
    }
    Result<std::vector<request::FunctionTool>> tools = request::ReadFunctionTools(chat_, kName);
    if (!tools.ok()) return tools.error();
    json::array list(sp_);
    for (const request::FunctionTool& tool : tools.value()) {
      if (tool.strict) return Unsupported(tool.param + ".function.strict");
      json::object converted({{"name", *tool.name}}, sp_);
      if (tool.description != nullptr) converted["description"] = *tool.description;
      if (tool.parameters != nullptr) converted["parameters"] = *tool.parameters;
      list.push_back(json::object({{"type", "function"}, {"function", std::move(converted)}}, sp_));
    }
    if (offered && !list.empty()) out["tools"] = std::move(list);
    return Ok{};
  }

  Status Format(json::object& out) {
    if (!Present(chat_, "response_format")) return Ok{};
    const json::value& format = chat_.at("response_format");
    const json::value* type = format.is_object() ? format.as_object().if_contains("type") : nullptr;
    if (type == nullptr || !type->is_string()) return WrongType("response_format.type", "a string");
    if (*type == "text") return Ok{};
    if (*type == "json_object") {
      out["format"] = "json";
      return Ok{};
    }
    if (*type != "json_schema") return Unsupported("response_format.type");
    const json::value* spec = format.as_object().if_contains("json_schema");
    const json::value* schema =
        spec && spec->is_object() ? spec->as_object().if_contains("schema") : nullptr;
    if (schema == nullptr || !schema->is_object()) {
      return WrongType("response_format.json_schema.schema", "an object");
    }
    out["format"] = *schema;
    return Ok{};
  }

  Status Options(json::object& settings) {
    for (std::string_view key : {"temperature", "top_p", "frequency_penalty", "presence_penalty"}) {
      if (!Present(chat_, key)) continue;
      if (!chat_.at(key).is_number()) return WrongType(std::string(key), "a number");
      settings[key] = chat_.at(key);
    }
    if (Present(chat_, "seed")) {
      if (!chat_.at("seed").is_int64()) return WrongType("seed", "an integer");
      settings["seed"] = chat_.at("seed");
    }
    Result<std::optional<json::array>> stop = request::StopSequences(chat_);
    if (!stop.ok()) return stop.error();
    if (*stop) settings["stop"] = std::move(**stop);
    // max_completion_tokens wins over the older max_tokens; without either, the model's own
    // num_predict applies (Ollama needs no limit).
    Result<std::optional<int64_t>> limit = request::MaxOutputTokens(chat_);
    if (!limit.ok()) return limit.error();
    if (*limit) settings["num_predict"] = **limit;
    return request::OneChoice(chat_, "Ollama returns one choice per request; 'n' must be 1.");
  }

  const json::object& chat_;
  json::storage_ptr sp_;
  json::array messages_;
  std::vector<std::pair<std::string, json::string>> calls_;  // (id, name) of earlier calls
};

}  // namespace

Result<std::string> BuildChatRequest(const json::object& chat,
                                     const UpstreamRequestOptions& options) {
  ScratchJson scratch;
  Result<json::object> out = Translation(chat, scratch.storage()).Run(options);
  if (!out.ok()) return out.error();
  return json::serialize(out.value());
}

}  // namespace turnpike::providers::ollama
