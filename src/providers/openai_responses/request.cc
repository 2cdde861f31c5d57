// Responses request -> pivot. One DOM walk per request.
#include "providers/openai_responses/request.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/error.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

// Top-level fields handled below; anything else present and not null is refused by name.
constexpr std::string_view kHandled[] = {
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "max_output_tokens",
    "text",
    "stream",
    "parallel_tool_calls",
    "metadata",
    "user",
    "store",
    "previous_response_id",
    "reasoning",
    "include",
    "truncation",
    "background",
    "stream_options",
    "service_tier",
    "prompt_cache_key",
    "safety_identifier",
};

// Forwarded as they are: the chat completions API has the same fields with the same meaning.
constexpr std::string_view kSameInChat[] = {"service_tier", "prompt_cache_key",
                                            "safety_identifier"};

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

Error Unsupported(const std::string& param, std::string_view why) {
  return Invalid("'" + param + "' is not supported here: " + std::string(why), param);
}

// Fields an item may carry that change nothing for the model: output items passed back as
// input carry their id and status.
bool Inert(std::string_view key) { return key == "type" || key == "id" || key == "status"; }

Status CheckFields(const json::object& object, std::initializer_list<std::string_view> known,
                   const std::string& param) {
  for (const auto& [key, value] : object) {
    if (Inert(key) || value.is_null()) continue;
    bool ok = false;
    for (std::string_view name : known) ok = ok || key == name;
    if (!ok) {
      return Unsupported(param + "." + std::string(key),
                         "the gateway cannot carry it to the model's provider.");
    }
  }
  return Ok{};
}

Result<json::string> StringField(const json::object& object, std::string_view key,
                                 const std::string& param) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_string()) {
    return WrongType(param + "." + std::string(key), "a string");
  }
  return value->as_string();
}

class Translation {
 public:
  explicit Translation(const json::object& request) : in_(request) {}

  Result<json::object> Run() {
    if (std::optional<std::string> field = request::FirstUnhandled(in_, kHandled)) {
      return Unsupported(*field, "the gateway cannot carry it to the model's provider.");
    }
    if (Status s = Stateless(); !s.ok()) return s.error();
    const json::value* model = in_.if_contains("model");
    if (model == nullptr || !model->is_string() || model->as_string().empty()) {
      return WrongType("model", "a non-empty string");
    }
    out_["model"] = *model;
    if (Status s = Instructions(); !s.ok()) return s.error();
    if (Status s = Input(); !s.ok()) return s.error();
    out_["messages"] = std::move(messages_);
    if (Present(in_, "max_output_tokens")) {
      const json::value& max = in_.at("max_output_tokens");
      if (!max.is_int64() || max.as_int64() < 1) {
        return WrongType("max_output_tokens", "a positive integer");
      }
      out_["max_completion_tokens"] = max;
    }
    for (std::string_view key : {"temperature", "top_p"}) {
      if (!Present(in_, key)) continue;
      if (!in_.at(key).is_number()) return WrongType(std::string(key), "a number");
      out_[key] = in_.at(key);
    }
    if (Present(in_, "parallel_tool_calls")) {
      if (!in_.at("parallel_tool_calls").is_bool()) {
        return WrongType("parallel_tool_calls", "a boolean");
      }
      out_["parallel_tool_calls"] = in_.at("parallel_tool_calls");
    }
    if (Present(in_, "user")) {
      if (!in_.at("user").is_string()) return WrongType("user", "a string");
      out_["user"] = in_.at("user");
    }
    for (std::string_view key : kSameInChat) {
      if (Present(in_, key)) out_[key] = in_.at(key);
    }
    if (Status s = Tools(); !s.ok()) return s.error();
    if (Status s = ToolChoice(); !s.ok()) return s.error();
    if (Status s = Text(); !s.ok()) return s.error();
    if (Status s = Reasoning(); !s.ok()) return s.error();
    if (Present(in_, "metadata") && !in_.at("metadata").is_object()) {
      // Labels for a stored response; with nothing stored they are only echoed back.
      return WrongType("metadata", "an object");
    }
    if (Present(in_, "stream")) {
      if (!in_.at("stream").is_bool()) return WrongType("stream", "a boolean");
      if (in_.at("stream") == true) {
        out_["stream"] = true;
        out_["stream_options"] = json::object{{"include_usage", true}};
      }
    }
    if (Present(in_, "stream_options") && !in_.at("stream_options").is_object()) {
      return WrongType("stream_options", "an object");
    }
    return std::move(out_);
  }

 private:
  // The stateful and server-side features this gateway does not have.
  Status Stateless() {
    if (const json::value* store = in_.if_contains("store"); store && *store == true) {
      return Invalid(
          "'store' must be false: this gateway serves the stateless Responses API and stores "
          "no responses.",
          "store");
    }
    if (Present(in_, "store") && !in_.at("store").is_bool()) return WrongType("store", "a boolean");
    if (Present(in_, "previous_response_id")) {
      return Invalid(
          "'previous_response_id' is not supported: this gateway serves the stateless Responses "
          "API; send the whole conversation in 'input'.",
          "previous_response_id");
    }
    if (const json::value* background = in_.if_contains("background");
        background && *background == true) {
      return Unsupported("background", "responses are not run in the background.");
    }
    if (Present(in_, "include")) {
      const json::value& include = in_.at("include");
      if (!include.is_array()) return WrongType("include", "an array");
      if (!include.as_array().empty()) {
        return Unsupported("include[0]", "no additional output data can be included.");
      }
    }
    if (Present(in_, "truncation") && in_.at("truncation") != "disabled") {
      return Unsupported("truncation", "only 'disabled' is supported.");
    }
    return Ok{};
  }

  Status Instructions() {
    if (!Present(in_, "instructions")) return Ok{};
    const json::value& instructions = in_.at("instructions");
    if (!instructions.is_string()) return WrongType("instructions", "a string");
    messages_.push_back(json::object{{"role", "system"}, {"content", instructions}});
    return Ok{};
  }

  Status Input() {
    const json::value* input = in_.if_contains("input");
    if (input == nullptr || input->is_null()) return WrongType("input", "a string or an array");
    if (input->is_string()) {
      messages_.push_back(json::object{{"role", "user"}, {"content", *input}});
      return Ok{};
    }
    if (!input->is_array()) return WrongType("input", "a string or an array");
    size_t i = 0;
    for (const json::value& item : input->as_array()) {
      const std::string param = At("input", i++);
      if (!item.is_object()) return WrongType(param, "an object");
      const json::object& o = item.as_object();
      const json::value* type = o.if_contains("type");
      Status s = Ok{};
      if (type == nullptr || type->is_null() || *type == "message") {
        s = Message(o, param);
      } else if (*type == "function_call") {
        s = FunctionCall(o, param);
      } else if (*type == "function_call_output") {
        s = FunctionCallOutput(o, param);
      } else {
        s = Unsupported(param + ".type",
                        "only message, function_call and function_call_output items are "
                        "supported.");
      }
      if (!s.ok()) return s;
    }
    if (messages_.empty()) return Invalid("'input' must not be empty.", "input");
    return Ok{};
  }

  Status Message(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"role", "content"}, param); !s.ok()) return s;
    const json::value* role = item.if_contains("role");
    if (role == nullptr || !role->is_string() ||
        (*role != "user" && *role != "system" && *role != "developer" && *role != "assistant")) {
      return Invalid("'" + param + ".role' must be one of user, system, developer, assistant.",
                     param + ".role");
    }
    const json::value* content = item.if_contains("content");
    if (content == nullptr || (!content->is_string() && !content->is_array())) {
      return WrongType(param + ".content", "a string or an array");
    }
    const bool user = *role == "user";
    // OpenAI-compatible servers and other dialects know `system`; `developer` means the same.
    const std::string_view chat_role =
        *role == "developer" ? std::string_view("system") : std::string_view(role->as_string());
    if (content->is_string()) {
      messages_.push_back(json::object{{"role", chat_role}, {"content", *content}});
      last_assistant_ = *role == "assistant";
      return Ok{};
    }
    json::array parts;
    json::string text;  // system and assistant content: the text parts, joined
    size_t i = 0;
    for (const json::value& part : content->as_array()) {
      const std::string at = At(param + ".content", i++);
      if (!part.is_object()) return WrongType(at, "an object");
      const json::object& p = part.as_object();
      const json::value* type = p.if_contains("type");
      const bool text_type = type && (*type == "input_text" || *type == "output_text");
      if (text_type) {
        if (Status s = CheckFields(p, {"text", "annotations", "logprobs"}, at); !s.ok()) return s;
        Result<json::string> piece = StringField(p, "text", at);
        if (!piece.ok()) return piece.error();
        if (user) {
          parts.push_back(json::object{{"type", "text"}, {"text", piece.value()}});
        } else {
          text.append(piece.value());
        }
      } else if (type && *type == "input_image" && user) {
        if (Status s = CheckFields(p, {"image_url", "detail"}, at); !s.ok()) return s;
        Result<json::string> url = StringField(p, "image_url", at);
        if (!url.ok()) return url.error();
        json::object image{{"url", url.value()}};
        if (Present(p, "detail")) image["detail"] = p.at("detail");
        parts.push_back(json::object{{"type", "image_url"}, {"image_url", std::move(image)}});
      } else {
        return Unsupported(at + ".type", user ? "user content may be input_text or input_image."
                                              : "this role's content may only be text.");
      }
    }
    if (user) {
      messages_.push_back(json::object{{"role", "user"}, {"content", std::move(parts)}});
    } else {
      messages_.push_back(json::object{{"role", chat_role}, {"content", std::move(text)}});
    }
    last_assistant_ = *role == "assistant";
    return Ok{};
  }

  // Consecutive function calls (and the assistant text just before them) are one chat
  // assistant turn.
  Status FunctionCall(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"call_id", "name", "arguments"}, param); !s.ok()) return s;
    Result<json::string> call_id = StringField(item, "call_id", param);
    if (!call_id.ok()) return call_id.error();
    Result<json::string> name = StringField(item, "name", param);
    if (!name.ok()) return name.error();
    Result<json::string> arguments = StringField(item, "arguments", param);
    if (!arguments.ok()) return arguments.error();
    json::object call{
        {"id", call_id.value()},
        {"type", "function"},
        {"function", json::object{{"name", name.value()}, {"arguments", arguments.value()}}}};
    if (!last_assistant_) {
      messages_.push_back(json::object{{"role", "assistant"}, {"content", nullptr}});
      last_assistant_ = true;
    }
    json::object& assistant = messages_.back().as_object();
    json::value& calls = assistant["tool_calls"];
    if (!calls.is_array()) calls.emplace_array();
    calls.as_array().push_back(std::move(call));
    if (assistant["content"] == "") assistant["content"] = nullptr;
    return Ok{};
  }

  Status FunctionCallOutput(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"call_id", "output"}, param); !s.ok()) return s;
    Result<json::string> call_id = StringField(item, "call_id", param);
    if (!call_id.ok()) return call_id.error();
    const json::value* output = item.if_contains("output");
    json::string text;
    if (output != nullptr && output->is_string()) {
      text = output->as_string();
    } else if (output != nullptr && output->is_array()) {
      size_t i = 0;
      for (const json::value& part : output->as_array()) {
        const std::string at = At(param + ".output", i++);
        if (!part.is_object() || !part.as_object().if_contains("type") ||
            part.at("type") != "input_text") {
          return Unsupported(at + ".type", "a function call's output may only be text.");
        }
        Result<json::string> piece = StringField(part.as_object(), "text", at);
        if (!piece.ok()) return piece.error();
        text.append(piece.value());
      }
    } else {
      return WrongType(param + ".output", "a string or an array");
    }
    messages_.push_back(
        json::object{{"role", "tool"}, {"tool_call_id", call_id.value()}, {"content", text}});
    last_assistant_ = false;
    return Ok{};
  }

  Status Tools() {
    if (!Present(in_, "tools")) return Ok{};
    const json::value& tools = in_.at("tools");
    if (!tools.is_array()) return WrongType("tools", "an array");
    json::array list;
    size_t i = 0;
    for (const json::value& tool : tools.as_array()) {
      const std::string at = At("tools", i++);
      if (!tool.is_object()) return WrongType(at, "an object");
      const json::object& t = tool.as_object();
      if (!t.if_contains("type") || t.at("type") != "function") {
        return Unsupported(at + ".type",
                           "only function tools are supported (built-in tools run on OpenAI's "
                           "servers).");
      }
      if (Status s = CheckFields(t, {"name", "description", "parameters", "strict"}, at); !s.ok()) {
        return s;
      }
      Result<json::string> name = StringField(t, "name", at);
      if (!name.ok()) return name.error();
      json::object function{{"name", name.value()}};
      if (Present(t, "description")) function["description"] = t.at("description");
      if (Present(t, "parameters")) {
        if (!t.at("parameters").is_object()) return WrongType(at + ".parameters", "an object");
        function["parameters"] = t.at("parameters");
      }
      if (Present(t, "strict")) function["strict"] = t.at("strict");
      list.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
    }
    if (!list.empty()) out_["tools"] = std::move(list);
    return Ok{};
  }

  Status ToolChoice() {
    if (!Present(in_, "tool_choice")) return Ok{};
    const json::value& choice = in_.at("tool_choice");
    if (choice == "none" || choice == "auto" || choice == "required") {
      out_["tool_choice"] = choice;
      return Ok{};
    }
    if (choice.is_object()) {
      const json::object& c = choice.as_object();
      if (c.if_contains("type") && c.at("type") == "function" && c.if_contains("name") &&
          c.at("name").is_string()) {
        out_["tool_choice"] =
            json::object{{"type", "function"}, {"function", json::object{{"name", c.at("name")}}}};
        return Ok{};
      }
    }
    return Unsupported("tool_choice",
                       "it may be none, auto, required or {\"type\":\"function\",\"name\":..}.");
  }

  Status Text() {
    if (!Present(in_, "text")) return Ok{};
    const json::value& text = in_.at("text");
    if (!text.is_object()) return WrongType("text", "an object");
    if (Status s = CheckFields(text.as_object(), {"format", "verbosity"}, "text"); !s.ok()) {
      return s;
    }
    if (Present(text.as_object(), "verbosity")) out_["verbosity"] = text.at("verbosity");
    if (!Present(text.as_object(), "format")) return Ok{};
    const json::value& format = text.at("format");
    const json::value* type = format.is_object() ? format.as_object().if_contains("type") : nullptr;
    if (type == nullptr) return WrongType("text.format", "an object with a type");
    if (*type == "text") return Ok{};
    if (*type == "json_object") {
      out_["response_format"] = json::object{{"type", "json_object"}};
      return Ok{};
    }
    if (*type != "json_schema") {
      return Unsupported("text.format.type", "it may be text, json_object or json_schema.");
    }
    const json::object& f = format.as_object();
    if (Status s = CheckFields(f, {"name", "schema", "description", "strict"}, "text.format");
        !s.ok()) {
      return s;
    }
    Result<json::string> name = StringField(f, "name", "text.format");
    if (!name.ok()) return name.error();
    const json::value* schema = f.if_contains("schema");
    if (schema == nullptr || !schema->is_object()) {
      return WrongType("text.format.schema", "an object");
    }
    json::object json_schema{{"name", name.value()}, {"schema", *schema}};
    if (Present(f, "description")) json_schema["description"] = f.at("description");
    if (Present(f, "strict")) json_schema["strict"] = f.at("strict");
    out_["response_format"] =
        json::object{{"type", "json_schema"}, {"json_schema", std::move(json_schema)}};
    return Ok{};
  }

  Status Reasoning() {
    if (!Present(in_, "reasoning")) return Ok{};
    const json::value& reasoning = in_.at("reasoning");
    if (!reasoning.is_object()) return WrongType("reasoning", "an object");
    for (const auto& [key, value] : reasoning.as_object()) {
      if (value.is_null()) continue;
      if (key != "effort") {
        return Unsupported("reasoning." + std::string(key),
                           "a chat completions model cannot express it.");
      }
      out_["reasoning_effort"] = value;
    }
    return Ok{};
  }

  const json::object& in_;
  json::object out_;
  json::array messages_;
  bool last_assistant_ = false;  // the last pivot message is an assistant turn from `input`
};

// A copy of `value`, or `fallback` when absent or null.
json::value Or(const json::object& request, std::string_view key, json::value fallback) {
  const json::value* value = request.if_contains(key);
  return value != nullptr && !value->is_null() ? *value : fallback;
}

}  // namespace

Result<json::object> ParseResponsesRequest(std::string_view body) {
  boost::system::error_code ec;
  // Translation reads `doc` into a new DOM (out_), so doc can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec) {
    return Invalid("We could not parse the JSON body of your request: " + ec.message(), "");
  }
  if (!doc.is_object()) return Invalid("The request body must be a JSON object.", "");
  return Translation(doc.as_object()).Run();
}

std::string EchoFields(std::string_view body) {
  boost::system::error_code ec;
  // Everything read from `doc` is serialized before it goes: it can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  const json::object empty;
  const json::object& request = !ec && doc.is_object() ? doc.as_object() : empty;
  json::object reasoning{{"effort", nullptr}, {"summary", nullptr}};
  if (const json::value* effort = request.if_contains("reasoning");
      effort && effort->is_object() && effort->as_object().if_contains("effort")) {
    reasoning["effort"] = effort->at("effort");
  }
  json::object text = Or(request, "text", json::object{}).as_object();
  if (!text.contains("format")) text["format"] = json::object{{"type", "text"}};
  json::object echo{{"instructions", Or(request, "instructions", nullptr)},
                    {"max_output_tokens", Or(request, "max_output_tokens", nullptr)},
                    {"metadata", Or(request, "metadata", json::object{})},
                    {"parallel_tool_calls", Or(request, "parallel_tool_calls", true)},
                    {"previous_response_id", nullptr},
                    {"reasoning", std::move(reasoning)},
                    {"store", false},
                    {"temperature", Or(request, "temperature", 1.0)},
                    {"text", std::move(text)},
                    {"tool_choice", Or(request, "tool_choice", "auto")},
                    {"tools", Or(request, "tools", json::array{})},
                    {"top_p", Or(request, "top_p", 1.0)},
                    {"truncation", "disabled"},
                    {"user", Or(request, "user", nullptr)}};
  std::string members = json::serialize(echo);
  return members.substr(1, members.size() - 2);
}

std::string ClientParam(std::string_view pivot_param) {
  struct Rename {
    std::string_view from, to;
  };
  static constexpr Rename kRenames[] = {
      {"max_completion_tokens", "max_output_tokens"},
      {"max_tokens", "max_output_tokens"},
      {"response_format.json_schema", "text.format"},
      {"response_format", "text.format"},
      {"reasoning_effort", "reasoning.effort"},
      {"verbosity", "text.verbosity"},
      {"messages", "input"},
  };
  for (const Rename& rename : kRenames) {
    if (pivot_param.starts_with(rename.from)) {
      const std::string_view rest = pivot_param.substr(rename.from.size());
      // Message indexes do not map one to one (instructions, merged function calls).
      if (rename.from == "messages") return std::string(rename.to);
      if (rest.empty() || rest.front() == '.' || rest.front() == '[') {
        return std::string(rename.to) + std::string(rest);
      }
    }
  }
  // tools[i].function.x -> tools[i].x
  if (pivot_param.starts_with("tools[")) {
    const size_t function = pivot_param.find("].function");
    if (function != std::string_view::npos) {
      return std::string(pivot_param.substr(0, function + 1)) +
             std::string(pivot_param.substr(function + 10));
    }
  }
  return std::string(pivot_param);
}

}  // namespace turnpike::providers::openai_responses
