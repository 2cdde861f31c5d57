// Cohere v2 Chat request -> OpenAI chat request (the pivot), for Cohere clients. The two are
// close: roles, tools and tool calls have the same shape; content blocks, tool_choice,
// response_format and the sampling names differ.
#include <boost/json/serialize.hpp>

#include "providers/cohere/client_requests.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

using request::At;
using request::Invalid;
using request::Present;

constexpr std::string_view kHandled[] = {
    "model",           "messages",    "stream", "tools", "tool_choice",       "max_tokens",
    "stop_sequences",  "temperature", "seed",   "p",     "frequency_penalty", "presence_penalty",
    "response_format", "thinking",
};

Error Unsupported(const std::string& param) {
  return Invalid("invalid request: this field cannot be translated for the model's provider",
                 param);
}

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("invalid request: '" + param + "' must be " + std::string(expected), param);
}

class Translation {
 public:
  explicit Translation(const json::object& in) : in_(in) {}

  Result<json::object> Run() {
    if (std::optional<std::string> field = request::FirstUnhandled(in_, kHandled)) {
      return Unsupported(*field);
    }
    const json::value* model = in_.if_contains("model");
    if (model == nullptr || !model->is_string()) return WrongType("model", "a string");
    out_["model"] = *model;
    if (Status s = Messages(); !s.ok()) return s.error();
    for (auto [key, to] :
         {std::pair<std::string_view, std::string_view>{"temperature", "temperature"},
          {"p", "top_p"},
          {"seed", "seed"},
          {"frequency_penalty", "frequency_penalty"},
          {"presence_penalty", "presence_penalty"}}) {
      if (!Present(in_, key)) continue;
      if (!in_.at(key).is_number()) return WrongType(std::string(key), "a number");
      out_[to] = in_.at(key);
    }
    if (Present(in_, "max_tokens")) {
      const json::value& max = in_.at("max_tokens");
      if (!max.is_int64() || max.as_int64() < 1) {
        return WrongType("max_tokens", "a positive integer");
      }
      out_["max_completion_tokens"] = max;
    }
    if (Present(in_, "stop_sequences")) {
      const json::value& stops = in_.at("stop_sequences");
      if (!stops.is_array()) return WrongType("stop_sequences", "an array of strings");
      for (const json::value& stop : stops.as_array()) {
        if (!stop.is_string()) return WrongType("stop_sequences", "an array of strings");
      }
      out_["stop"] = stops;
    }
    if (Status s = Tools(); !s.ok()) return s.error();
    if (Status s = Format(); !s.ok()) return s.error();
    if (Status s = Thinking(); !s.ok()) return s.error();
    if (const json::value* stream = in_.if_contains("stream"); stream && *stream == true) {
      out_["stream"] = true;
      out_["stream_options"] = json::object{{"include_usage", true}};
    }
    out_["messages"] = std::move(messages_);
    return std::move(out_);
  }

 private:
  // Content as a string, or blocks: text (and images for user messages); a tool result's
  // document blocks are sent as their JSON.
  Result<json::value> Content(const json::value& content, const std::string& param,
                              std::string_view role) {
    if (content.is_string()) return content;
    if (!content.is_array()) return WrongType(param, "a string or an array");
    json::array parts;
    size_t j = 0;
    for (const json::value& value : content.as_array()) {
      const std::string at = At(param, j++);
      if (!value.is_object()) return WrongType(at, "an object");
      const json::object& block = value.as_object();
      const json::value* type = block.if_contains("type");
      if (type == nullptr || !type->is_string()) return WrongType(at + ".type", "a string");
      if (*type == "text") {
        const json::value* text = block.if_contains("text");
        if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
        parts.push_back(json::object{{"type", "text"}, {"text", *text}});
      } else if (*type == "image_url" && role == "user") {
        const json::value* image = block.if_contains("image_url");
        if (image == nullptr || !image->is_object()) {
          return WrongType(at + ".image_url", "an object");
        }
        parts.push_back(json::object{{"type", "image_url"}, {"image_url", *image}});
      } else if (*type == "document" && role == "tool") {
        const json::value* document = block.if_contains("document");
        if (document == nullptr) return WrongType(at + ".document", "an object");
        parts.push_back(json::object{{"type", "text"}, {"text", json::serialize(*document)}});
      } else if (*type == "thinking" && role == "assistant") {
        const json::value* thinking = block.if_contains("thinking");
        if (thinking == nullptr || !thinking->is_string()) {
          return WrongType(at + ".thinking", "a string");
        }
        thinking_.append(thinking->as_string());
      } else {
        return Unsupported(at + ".type");
      }
    }
    // An assistant's or a tool's content is text only in the pivot: joined.
    if (role == "user") return json::value(std::move(parts));
    std::string text;
    for (const json::value& part : parts) text += part.at("text").as_string();
    return json::value(text);
  }

  Status Messages() {
    const json::value* messages = in_.if_contains("messages");
    if (messages == nullptr || !messages->is_array() || messages->as_array().empty()) {
      return WrongType("messages", "a non-empty array");
    }
    size_t i = 0;
    for (const json::value& value : messages->as_array()) {
      const std::string param = At("messages", i++);
      if (!value.is_object()) return WrongType(param, "an object");
      const json::object& m = value.as_object();
      const json::value* role = m.if_contains("role");
      if (role == nullptr || !role->is_string()) return WrongType(param + ".role", "a string");
      const std::string_view r = role->as_string();
      if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
        return WrongType(param + ".role", "one of system, user, assistant, tool");
      }
      json::object out{{"role", r}};
      thinking_.clear();
      for (const auto& [key, field] : m) {
        if (field.is_null() || key == "role") continue;
        if (key == "content") {
          Result<json::value> content = Content(field, param + ".content", r);
          if (!content.ok()) return content.error();
          out["content"] = std::move(content.value());
        } else if (key == "tool_calls" && r == "assistant") {
          if (!field.is_array()) return WrongType(param + ".tool_calls", "an array");
          out["tool_calls"] = field;
        } else if (key == "tool_call_id" && r == "tool") {
          if (!field.is_string()) return WrongType(param + ".tool_call_id", "a string");
          out["tool_call_id"] = field;
        } else if (key == "tool_plan" && r == "assistant") {
          continue;  // the model's own plan text, not part of the conversation for others
        } else {
          return Unsupported(param + "." + std::string(key));
        }
      }
      if (!out.contains("content")) {
        if (r != "assistant") return WrongType(param + ".content", "a string or an array");
        out["content"] = nullptr;
      }
      if (!thinking_.empty()) out[reasoning::kContent] = thinking_;
      messages_.push_back(std::move(out));
    }
    return Ok{};
  }

  Status Tools() {
    if (Present(in_, "tools")) {
      if (!in_.at("tools").is_array()) return WrongType("tools", "an array");
      out_["tools"] = in_.at("tools");  // Cohere's v2 tools are OpenAI's function tools
    }
    if (!Present(in_, "tool_choice")) return Ok{};
    const json::value& choice = in_.at("tool_choice");
    if (choice == "REQUIRED") {
      out_["tool_choice"] = "required";
    } else if (choice == "NONE") {
      out_["tool_choice"] = "none";
    } else {
      return WrongType("tool_choice", "REQUIRED or NONE");
    }
    return Ok{};
  }

  Status Format() {
    if (!Present(in_, "response_format")) return Ok{};
    const json::value& format = in_.at("response_format");
    if (!format.is_object()) return WrongType("response_format", "an object");
    const json::value* type = format.as_object().if_contains("type");
    if (type != nullptr && *type == "text") return Ok{};
    if (type == nullptr || *type != "json_object") {
      return WrongType("response_format.type", "text or json_object");
    }
    const json::value* schema = format.as_object().if_contains("json_schema");
    if (schema == nullptr || schema->is_null()) {
      out_["response_format"] = json::object{{"type", "json_object"}};
    } else {
      out_["response_format"] =
          json::object{{"type", "json_schema"},
                       {"json_schema", json::object{{"name", "response"}, {"schema", *schema}}}};
    }
    return Ok{};
  }

  // thinking {type: enabled | disabled, token_budget} -> reasoning_effort (reasoning.h's
  // table): disabled -> none; enabled without a budget -> medium (the model decides; the
  // effort an OpenAI model takes by default); a budget -> its effort.
  Status Thinking() {
    if (!Present(in_, "thinking")) return Ok{};
    const json::value& thinking = in_.at("thinking");
    if (!thinking.is_object()) return WrongType("thinking", "an object");
    const json::object& t = thinking.as_object();
    for (const auto& [key, value] : t) {
      if (!value.is_null() && key != "type" && key != "token_budget") {
        return Unsupported("thinking." + std::string(key));
      }
    }
    const json::value* type = t.if_contains("type");
    if (type == nullptr || (*type != "enabled" && *type != "disabled")) {
      return WrongType("thinking.type", "enabled or disabled");
    }
    reasoning::Effort effort = reasoning::Effort::kMedium;
    if (*type == "disabled") {
      effort = reasoning::Effort::kNone;
    } else if (Present(t, "token_budget")) {
      const json::value& budget = t.at("token_budget");
      if (!budget.is_int64() || budget.as_int64() < 1) {
        return WrongType("thinking.token_budget", "a positive integer");
      }
      effort = reasoning::EffortFor(budget.as_int64());
    }
    out_[reasoning::kEffort] = reasoning::EffortName(effort);
    return Ok{};
  }

  const json::object& in_;
  json::object out_;
  json::array messages_;
  std::string thinking_;  // the thinking blocks of the message being read
};

}  // namespace

Result<json::object> ParseChatRequest(std::string_view body) {
  boost::system::error_code ec;
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Invalid("invalid request: the body is not a JSON object", "");
  return Translation(doc.as_object()).Run();
}

Result<std::string> SpliceModel(std::string_view body, std::string_view upstream_model) {
  boost::system::error_code ec;
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) return Invalid("invalid request: the body is not a JSON object", "");
  doc.as_object()["model"] = upstream_model;
  return json::serialize(doc);
}

}  // namespace turnpike::providers::cohere
