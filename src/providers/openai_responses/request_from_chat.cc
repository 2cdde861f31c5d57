// Pivot (chat completions request) -> Responses API request.
#include <boost/json/serialize.hpp>
#include <string_view>

#include "providers/openai_responses/upstream_request.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

// Top-level pivot fields the Responses API can express. Anything else present and not null is
// refused by name (stop, logprobs, seed, penalties, logit_bias, audio, ...: the Responses API has
// no such parameter), so nothing the client asked for is dropped silently.
constexpr std::string_view kHandled[] = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
    "verbosity",
    "user",
    "service_tier",
    "prompt_cache_key",
    "safety_identifier",
    "metadata",
    "store",
    "n",
    "logprobs",
};

// Forwarded as they are: the Responses API has the same fields with the same meaning.
constexpr std::string_view kSame[] = {"temperature",         "top_p",
                                      "parallel_tool_calls", "user",
                                      "service_tier",        "prompt_cache_key",
                                      "safety_identifier",   "metadata"};

// Fields of a pivot message the Responses API can express; `name` and `refusal` cannot be.
constexpr std::string_view kMessageFields[] = {"role", "content", "tool_calls", "tool_call_id"};

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

constexpr std::string_view kName = "the OpenAI Responses API";

Error Unsupported(const std::string& param) { return request::UnsupportedBy(param, kName); }

class Translation {
 public:
  // The request is built in the caller's scratch storage (`sp`, providers/scratch_json.h) and
  // serialized before it goes: its objects, arrays and strings cost no allocation of their own.
  Translation(const json::object& chat, json::storage_ptr sp)
      : chat_(chat), sp_(std::move(sp)), input_(sp_) {}

  Result<json::object> Run(const UpstreamRequestOptions& options) {
    if (std::optional<std::string> field = request::FirstUnhandled(chat_, kHandled)) {
      return Unsupported(*field);
    }
    json::object out(sp_);
    out["model"] = options.upstream_model;
    if (Status s = Messages(); !s.ok()) return s.error();
    out["input"] = std::move(input_);
    if (Status s = Settings(out); !s.ok()) return s.error();
    if (Status s = Tools(out); !s.ok()) return s.error();
    if (Status s = Format(out); !s.ok()) return s.error();
    // The gateway stores nothing and serves the stateless form: the upstream must not either
    // (the Responses API stores by default).
    out["store"] = false;
    if (Present(chat_, "stream")) {
      if (!chat_.at("stream").is_bool()) return WrongType("stream", "a boolean");
      if (chat_.at("stream").as_bool()) out["stream"] = true;
    }
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
    for (const auto& [key, value] : message) {
      if (value.is_null()) continue;
      bool known = false;
      for (std::string_view name : kMessageFields) known = known || key == name;
      if (!known) return Unsupported(param + "." + std::string(key));
    }
    const json::value* role = message.if_contains("role");
    if (role == nullptr || !role->is_string()) return WrongType(param + ".role", "a string");
    const json::value* content = message.if_contains("content");
    if (*role == "tool") return ToolResult(message, content, param);
    if (Present(message, "tool_call_id")) return Unsupported(param + ".tool_call_id");
    if (*role == "assistant") return Assistant(message, content, param);
    if (Present(message, "tool_calls")) return Unsupported(param + ".tool_calls");
    if (*role != "system" && *role != "developer" && *role != "user") {
      return Unsupported(param + ".role");
    }
    json::object item({{"type", "message"}, {"role", *role}}, sp_);
    if (content != nullptr && content->is_string()) {
      item["content"] = *content;
      input_.push_back(std::move(item));
      return Ok{};
    }
    if (content == nullptr || !content->is_array()) {
      return WrongType(param + ".content", "a string or an array");
    }
    json::array parts(sp_);
    size_t i = 0;
    for (const json::value& part : content->as_array()) {
      const std::string at = At(param + ".content", i++);
      if (!part.is_object()) return WrongType(at, "an object");
      const json::object& p = part.as_object();
      const json::value* type = p.if_contains("type");
      if (type && *type == "text") {
        const json::value* text = p.if_contains("text");
        if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
        parts.push_back(json::object({{"type", "input_text"}, {"text", *text}}, sp_));
      } else if (type && *type == "image_url" && *role == "user") {
        Result<json::object> image = Image(p, at, sp_);
        if (!image.ok()) return image.error();
        parts.push_back(std::move(image.value()));
      } else {
        return Unsupported(at + ".type");
      }
    }
    item["content"] = std::move(parts);
    input_.push_back(std::move(item));
    return Ok{};
  }

  // {"type":"input_image","image_url":<data or http URL>,"detail":..}; the Responses API takes
  // both URL forms and every detail level.
  static Result<json::object> Image(const json::object& part, const std::string& param,
                                    const json::storage_ptr& sp) {
    const json::value* image = part.if_contains("image_url");
    if (image == nullptr || !image->is_object()) {
      return WrongType(param + ".image_url", "an object");
    }
    const json::value* url = image->as_object().if_contains("url");
    if (url == nullptr || !url->is_string()) return WrongType(param + ".image_url.url", "a string");
    json::object out({{"type", "input_image"}, {"image_url", *url}, {"detail", "auto"}}, sp);
    if (Present(image->as_object(), "detail")) {
      const json::value& detail = image->as_object().at("detail");
      if (detail != "auto" && detail != "low" && detail != "high") {
        return Invalid("'" + param + ".image_url.detail' must be auto, low or high.",
                       param + ".image_url.detail");
      }
      out["detail"] = detail;
    }
    return out;
  }

  // Text becomes one message item with output_text parts; each tool call a function_call item.
  Status Assistant(const json::object& message, const json::value* content,
                   const std::string& param) {
    json::array parts(sp_);
    if (content != nullptr && content->is_string()) {
      if (!content->as_string().empty()) parts.push_back(OutputText(*content));
    } else if (content != nullptr && content->is_array()) {
      size_t i = 0;
      for (const json::value& part : content->as_array()) {
        const std::string at = At(param + ".content", i++);
        const json::value* type = part.is_object() ? part.as_object().if_contains("type") : nullptr;
        const json::value* text = part.is_object() ? part.as_object().if_contains("text") : nullptr;
        if (type == nullptr || *type != "text") return Unsupported(at + ".type");
        if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
        parts.push_back(OutputText(*text));
      }
    } else if (content != nullptr && !content->is_null()) {
      return WrongType(param + ".content", "a string or an array");
    }
    if (!parts.empty()) {
      input_.push_back(json::object(
          {{"type", "message"}, {"role", "assistant"}, {"content", std::move(parts)}}, sp_));
    }
    if (!Present(message, "tool_calls")) return Ok{};
    const json::value& calls = message.at("tool_calls");
    if (!calls.is_array()) return WrongType(param + ".tool_calls", "an array");
    size_t i = 0;
    for (const json::value& call : calls.as_array()) {
      const std::string at = At(param + ".tool_calls", i++);
      const json::object* c = call.is_object() ? &call.as_object() : nullptr;
      const json::value* id = c ? c->if_contains("id") : nullptr;
      const json::value* function = c ? c->if_contains("function") : nullptr;
      if (id == nullptr || !id->is_string()) return WrongType(at + ".id", "a string");
      if (function == nullptr || !function->is_object()) {
        return WrongType(at + ".function", "an object");
      }
      const json::value* name = function->as_object().if_contains("name");
      const json::value* arguments = function->as_object().if_contains("arguments");
      if (name == nullptr || !name->is_string()) {
        return WrongType(at + ".function.name", "a string");
      }
      if (arguments == nullptr || !arguments->is_string()) {
        return WrongType(at + ".function.arguments", "a string");
      }
      input_.push_back(json::object(
          {{"type", "function_call"}, {"call_id", *id}, {"name", *name}, {"arguments", *arguments}},
          sp_));
    }
    return Ok{};
  }

  json::object OutputText(const json::value& text) const {
    return json::object(
        {{"type", "output_text"}, {"text", text}, {"annotations", json::array(sp_)}}, sp_);
  }

  Status ToolResult(const json::object& message, const json::value* content,
                    const std::string& param) {
    const json::value* id = message.if_contains("tool_call_id");
    if (id == nullptr || !id->is_string()) return WrongType(param + ".tool_call_id", "a string");
    json::object item({{"type", "function_call_output"}, {"call_id", *id}}, sp_);
    if (content != nullptr && content->is_string()) {
      item["output"] = *content;
    } else if (content != nullptr && content->is_array()) {
      json::array parts(sp_);
      size_t i = 0;
      for (const json::value& part : content->as_array()) {
        const std::string at = At(param + ".content", i++);
        const json::value* type = part.is_object() ? part.as_object().if_contains("type") : nullptr;
        const json::value* text = part.is_object() ? part.as_object().if_contains("text") : nullptr;
        if (type == nullptr || *type != "text") return Unsupported(at + ".type");
        if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
        parts.push_back(json::object({{"type", "input_text"}, {"text", *text}}, sp_));
      }
      item["output"] = std::move(parts);
    } else {
      return WrongType(param + ".content", "a string or an array");
    }
    input_.push_back(std::move(item));
    return Ok{};
  }

  Status Settings(json::object& out) {
    for (std::string_view key : kSame) {
      if (Present(chat_, key)) out[key] = chat_.at(key);
    }
    // max_completion_tokens wins over the older max_tokens.
    Result<std::optional<int64_t>> limit = request::MaxOutputTokens(chat_);
    if (!limit.ok()) return limit.error();
    if (*limit) out["max_output_tokens"] = **limit;
    if (Status one = request::OneChoice(
            chat_, "The Responses API returns one answer per request; 'n' must be 1.");
        !one.ok()) {
      return one;
    }
    if (Present(chat_, "logprobs") && chat_.at("logprobs") != false) return Unsupported("logprobs");
    if (const json::value* store = chat_.if_contains("store"); store && *store == true) {
      return Invalid("'store' must be false: this gateway stores nothing, upstream neither.",
                     "store");
    }
    if (Present(chat_, "stream_options")) {
      // Usage always ends a Responses stream: include_usage needs nothing upstream.
      const json::value& options = chat_.at("stream_options");
      if (!options.is_object()) return WrongType("stream_options", "an object");
      for (const auto& [key, value] : options.as_object()) {
        if (key != "include_usage" && !value.is_null()) {
          return Unsupported("stream_options." + std::string(key));
        }
      }
    }
    if (Present(chat_, "reasoning_effort")) {
      out["reasoning"] = json::object({{"effort", chat_.at("reasoning_effort")}}, sp_);
    }
    return Ok{};
  }

  Status Tools(json::object& out) {
    Result<std::vector<request::FunctionTool>> tools = request::ReadFunctionTools(chat_, kName);
    if (!tools.ok()) return tools.error();
    json::array list(sp_);
    for (const request::FunctionTool& tool : tools.value()) {
      json::object converted({{"type", "function"}, {"name", *tool.name}}, sp_);
      if (tool.description != nullptr) converted["description"] = *tool.description;
      // Chat: no parameters means none taken; the Responses API wants the schema said.
      if (tool.parameters != nullptr) {
        converted["parameters"] = *tool.parameters;
      } else {
        converted["parameters"] =
            json::object({{"type", "object"}, {"properties", json::object(sp_)}}, sp_);
      }
      // The Responses API's strict defaults to true, chat's to false: always say which.
      converted["strict"] = tool.strict;
      list.push_back(std::move(converted));
    }
    if (!list.empty()) out["tools"] = std::move(list);
    if (!Present(chat_, "tool_choice")) return Ok{};
    const json::value& choice = chat_.at("tool_choice");
    if (choice == "none" || choice == "auto" || choice == "required") {
      out["tool_choice"] = choice;
      return Ok{};
    }
    const json::value* function = choice.is_object() && choice.as_object().if_contains("type") &&
                                          choice.at("type") == "function"
                                      ? choice.as_object().if_contains("function")
                                      : nullptr;
    const json::value* name =
        function && function->is_object() ? function->as_object().if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string()) return Unsupported("tool_choice");
    out["tool_choice"] = json::object({{"type", "function"}, {"name", *name}}, sp_);
    return Ok{};
  }

  // response_format and verbosity -> text.format and text.verbosity.
  Status Format(json::object& out) {
    json::object text(sp_);
    if (Present(chat_, "verbosity")) text["verbosity"] = chat_.at("verbosity");
    if (Present(chat_, "response_format")) {
      const json::value& format = chat_.at("response_format");
      const json::value* type =
          format.is_object() ? format.as_object().if_contains("type") : nullptr;
      if (type == nullptr || !type->is_string()) {
        return WrongType("response_format.type", "a string");
      }
      if (*type == "json_object") {
        text["format"] = json::object({{"type", "json_object"}}, sp_);
      } else if (*type == "json_schema") {
        const json::value* spec = format.as_object().if_contains("json_schema");
        if (spec == nullptr || !spec->is_object()) {
          return WrongType("response_format.json_schema", "an object");
        }
        const json::object& s = spec->as_object();
        const json::value* name = s.if_contains("name");
        if (name == nullptr || !name->is_string()) {
          return WrongType("response_format.json_schema.name", "a string");
        }
        json::object flat({{"type", "json_schema"}, {"name", *name}}, sp_);
        for (std::string_view key : {"schema", "description", "strict"}) {
          if (Present(s, key)) flat[key] = s.at(key);
        }
        text["format"] = std::move(flat);
      } else if (*type != "text") {
        return Unsupported("response_format.type");
      }
    }
    if (!text.empty()) out["text"] = std::move(text);
    return Ok{};
  }

  const json::object& chat_;
  json::storage_ptr sp_;
  json::array input_;
};

}  // namespace

Result<std::string> BuildResponsesRequest(const json::object& chat,
                                          const UpstreamRequestOptions& options) {
  ScratchJson scratch;
  Result<json::object> out = Translation(chat, scratch.storage()).Run(options);
  if (!out.ok()) return out.error();
  return json::serialize(out.value());
}

}  // namespace turnpike::providers::openai_responses
