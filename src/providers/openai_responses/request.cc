// Responses request -> pivot: the request-level fields, tools, tool_choice, text and reasoning
// (the input items are in request_input.cc). One DOM walk per request.
#include "providers/openai_responses/request.h"

#include <boost/json/parse.hpp>

#include "common/error.h"
#include "providers/openai_responses/request_input.h"
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

class Translation {
 public:
  Translation(const json::object& request, json::storage_ptr sp)
      : in_(request), out_(std::move(sp)) {}

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
    Result<json::array> messages = TranslateMessages(in_, out_.storage());
    if (!messages.ok()) return messages.error();
    out_["messages"] = std::move(messages.value());
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
      // encrypted_content is what the gateway shows anyway (an issuer's signature, when there
      // is one); nothing else can be included.
      size_t i = 0;
      for (const json::value& entry : include.as_array()) {
        if (entry != "reasoning.encrypted_content") {
          return Unsupported(At("include", i), "only reasoning.encrypted_content can be included.");
        }
        ++i;
      }
    }
    if (Present(in_, "truncation") && in_.at("truncation") != "disabled") {
      return Unsupported("truncation", "only 'disabled' is supported.");
    }
    return Ok{};
  }

  Status Tools() {
    if (!Present(in_, "tools")) return Ok{};
    const json::value& tools = in_.at("tools");
    if (!tools.is_array()) return WrongType("tools", "an array");
    // Built in the pivot's storage (an agent turn's arena), so that they move into it.
    const json::storage_ptr& sp = out_.storage();
    json::array list(sp);
    list.reserve(tools.as_array().size());
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
      Result<json::string_view> name = StringField(t, "name", at);
      if (!name.ok()) return name.error();
      json::object function({{"name", name.value()}}, sp);
      if (Present(t, "description")) function["description"] = t.at("description");
      if (Present(t, "parameters")) {
        if (!t.at("parameters").is_object()) return WrongType(at + ".parameters", "an object");
        function["parameters"] = t.at("parameters");
      }
      if (Present(t, "strict")) function["strict"] = t.at("strict");
      list.push_back(json::object({{"type", "function"}, {"function", std::move(function)}}, sp));
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
    Result<json::string_view> name = StringField(f, "name", "text.format");
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
};

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
  return Translation(doc.as_object(), {}).Run();
}

Result<json::object> ParseResponsesDocument(const json::object& document, json::storage_ptr sp) {
  return Translation(document, std::move(sp)).Run();
}

}  // namespace turnpike::providers::openai_responses
