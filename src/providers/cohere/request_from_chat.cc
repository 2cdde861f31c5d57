// OpenAI chat request (the pivot) -> Cohere v2 Chat request.
#include <boost/json/serialize.hpp>

#include "providers/cohere/requests.h"
#include "providers/reasoning.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

// Top-level fields that have a Cohere equivalent, or (stream_options, user) whose meaning is
// kept without one: Cohere always reports usage at message-end, and `user` only identifies the
// end user without changing the answer. Anything else present and not null is refused, so that
// nothing the client asked for is dropped silently.
constexpr std::string_view kHandled[] = {"model",
                                         "messages",
                                         "max_tokens",
                                         "max_completion_tokens",
                                         "temperature",
                                         "top_p",
                                         "stop",
                                         "stream",
                                         "tools",
                                         "tool_choice",
                                         "n",
                                         "parallel_tool_calls",
                                         "seed",
                                         "frequency_penalty",
                                         "presence_penalty",
                                         "response_format",
                                         "logprobs",
                                         "stream_options",
                                         "user",
                                         "reasoning_effort"};

// Sampling fields that pass under the same name, or under Cohere's (top_p -> p).
struct Renamed {
  std::string_view from, to;
};
constexpr Renamed kNumbers[] = {{"temperature", "temperature"},
                                {"top_p", "p"},
                                {"frequency_penalty", "frequency_penalty"},
                                {"presence_penalty", "presence_penalty"}};

class Translation {
 public:
  // The request is built in the caller's scratch storage (`sp`, providers/scratch_json.h) and
  // serialized before it goes: its objects, arrays and strings cost no allocation of their own.
  Translation(const json::object& chat, json::storage_ptr sp)
      : chat_(chat), sp_(std::move(sp)), out_(sp_) {}

  Result<json::object> Run(const UpstreamRequestOptions& options) {
    if (std::optional<std::string> field = request::FirstUnhandled(chat_, kHandled)) {
      return Unsupported(*field);
    }
    out_["model"] = options.upstream_model;
    for (auto step : {&Translation::Messages, &Translation::Limits, &Translation::Sampling,
                      &Translation::Tools, &Translation::Format, &Translation::Thinking}) {
      if (Status s = (this->*step)(); !s.ok()) return s.error();
    }
    if (const json::value* stream = chat_.if_contains("stream"); stream && !stream->is_null()) {
      if (!stream->is_bool()) return WrongType("stream", "a boolean");
      if (stream->as_bool()) out_["stream"] = true;
    }
    if (Present(chat_, "user") && !chat_.at("user").is_string()) {
      return WrongType("user", "a string");
    }
    return std::move(out_);
  }

 private:
  Status Messages() {
    json::array converted(sp_);
    Status read = request::ForEachMessage(
        chat_, [this, &converted](const json::object& message, const std::string& param) -> Status {
          Result<json::object> m = MessageFromChat(message, param, sp_);
          if (!m.ok()) return m.error();
          converted.push_back(std::move(m.value()));
          return Ok{};
        });
    if (!read.ok()) return read;
    out_["messages"] = std::move(converted);
    return Ok{};
  }

  // reasoning_effort -> thinking {type: enabled, token_budget} by the table of reasoning.h;
  // "none" -> {type: disabled} (Cohere's reasoning models think by default).
  Status Thinking() {
    Result<std::optional<reasoning::Effort>> effort = reasoning::ReadEffort(chat_);
    if (!effort.ok()) return effort.error();
    if (!effort->has_value()) return Ok{};
    if (**effort == reasoning::Effort::kNone) {
      out_["thinking"] = json::object({{"type", "disabled"}}, sp_);
      return Ok{};
    }
    out_["thinking"] =
        json::object({{"type", "enabled"}, {"token_budget", reasoning::BudgetFor(**effort)}}, sp_);
    return Ok{};
  }

  Status Limits() {
    Result<std::optional<int64_t>> limit = request::MaxOutputTokens(chat_);
    if (!limit.ok()) return limit.error();
    if (*limit) out_["max_tokens"] = **limit;
    return request::OneChoice(chat_, "Cohere returns one choice per request; 'n' must be 1.");
  }

  Status Sampling() {
    for (const Renamed& field : kNumbers) {
      if (!Present(chat_, field.from)) continue;
      const json::value& value = chat_.at(field.from);
      if (!value.is_number()) return WrongType(std::string(field.from), "a number");
      out_[field.to] = value;
    }
    if (Present(chat_, "seed")) {
      if (!chat_.at("seed").is_int64()) return WrongType("seed", "an integer");
      out_["seed"] = chat_.at("seed");
    }
    Result<std::optional<json::array>> stop = request::StopSequences(chat_);
    if (!stop.ok()) return stop.error();
    if (*stop) out_["stop_sequences"] = std::move(**stop);
    // Cohere's logprobs have another shape, which the answer's translation does not carry.
    if (Present(chat_, "logprobs") && chat_.at("logprobs") != false) return Unsupported("logprobs");
    return Ok{};
  }

  Status Tools() {
    Result<std::vector<request::FunctionTool>> tools = request::ReadFunctionTools(chat_, "Cohere");
    if (!tools.ok()) return tools.error();
    json::array list(sp_);
    // Cohere's strict_tools covers every tool, so they must all agree.
    for (const request::FunctionTool& tool : tools.value()) {
      if (tool.strict != tools.value().front().strict) {
        return Invalid("Cohere's strict mode applies to all tools or none.",
                       tool.param + ".function.strict");
      }
      json::object converted({{"name", *tool.name}}, sp_);
      if (tool.description != nullptr) converted["description"] = *tool.description;
      if (tool.parameters != nullptr) {
        converted["parameters"] = *tool.parameters;
      } else {
        converted["parameters"] =
            json::object({{"type", "object"}, {"properties", json::object(sp_)}}, sp_);
      }
      list.push_back(json::object({{"type", "function"}, {"function", std::move(converted)}}, sp_));
    }
    if (!list.empty()) out_["tools"] = std::move(list);
    if (!tools.value().empty() && tools.value().front().strict) out_["strict_tools"] = true;
    if (Present(chat_, "tool_choice")) {
      // Cohere's tool_choice is REQUIRED or NONE; its default is OpenAI's auto. It cannot
      // force one named function.
      const json::value& value = chat_.at("tool_choice");
      if (value == "required") {
        out_["tool_choice"] = "REQUIRED";
      } else if (value == "none") {
        out_["tool_choice"] = "NONE";
      } else if (value != "auto") {
        return Invalid(
            "Cohere can require a tool call but not a specific function: tool_choice "
            "must be auto, required or none.",
            "tool_choice");
      }
    }
    if (Present(chat_, "parallel_tool_calls")) {
      const json::value& parallel = chat_.at("parallel_tool_calls");
      if (!parallel.is_bool()) return WrongType("parallel_tool_calls", "a boolean");
      if (!parallel.as_bool()) {
        return Invalid("Cohere cannot disable parallel tool calls.", "parallel_tool_calls");
      }
    }
    return Ok{};
  }

  Status Format() {
    if (!Present(chat_, "response_format")) return Ok{};
    const json::value& format = chat_.at("response_format");
    const json::value* type = format.is_object() ? format.as_object().if_contains("type") : nullptr;
    if (type == nullptr || !type->is_string()) return WrongType("response_format.type", "a string");
    if (*type == "text") return Ok{};
    if (*type == "json_object") {
      out_["response_format"] = json::object({{"type", "json_object"}}, sp_);
      return Ok{};
    }
    if (*type != "json_schema") return Unsupported("response_format.type");
    const json::value* spec = format.as_object().if_contains("json_schema");
    const json::value* schema =
        spec && spec->is_object() ? spec->as_object().if_contains("schema") : nullptr;
    if (schema == nullptr || !schema->is_object()) {
      return WrongType("response_format.json_schema.schema", "an object");
    }
    out_["response_format"] =
        json::object({{"type", "json_object"}, {"json_schema", *schema}}, sp_);
    return Ok{};
  }

  const json::object& chat_;
  json::storage_ptr sp_;
  json::object out_;
};

}  // namespace

Result<std::string> BuildChatRequest(const json::object& chat,
                                     const UpstreamRequestOptions& options) {
  ScratchJson scratch;
  Result<json::object> out = Translation(chat, scratch.storage()).Run(options);
  if (!out.ok()) return out.error();
  return json::serialize(out.value());
}

}  // namespace turnpike::providers::cohere
