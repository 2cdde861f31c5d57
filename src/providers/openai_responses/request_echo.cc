// The Responses request seen from the answer: the request fields a response echoes, and the
// client's names for pivot fields in errors.
#include <boost/json/serialize.hpp>

#include "providers/openai_responses/request.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

// A copy of `value`, or `fallback` when absent or null.
json::value Or(const json::object& request, std::string_view key, json::value fallback) {
  const json::value* value = request.if_contains(key);
  return value != nullptr && !value->is_null() ? *value : fallback;
}

}  // namespace

std::string EchoFields(std::string_view body) {
  boost::system::error_code ec;
  // Everything read from `doc` is serialized before it goes: it can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  const json::object empty;
  return EchoMembers(EchoObject(!ec && doc.is_object() ? doc.as_object() : empty));
}

json::object EchoObject(const json::object& request) {
  json::object reasoning{{"effort", nullptr}, {"summary", nullptr}};
  if (const json::value* effort = request.if_contains("reasoning");
      effort && effort->is_object() && effort->as_object().if_contains("effort")) {
    reasoning["effort"] = effort->at("effort");
  }
  // A `text` that is not an object (the request parser refuses one; the mock provider does
  // not parse it first) echoes as if absent, rather than throw.
  const json::value text_in = Or(request, "text", json::object{});
  json::object text = text_in.is_object() ? text_in.as_object() : json::object{};
  if (!text.contains("format")) text["format"] = json::object{{"type", "text"}};
  return json::object{{"instructions", Or(request, "instructions", nullptr)},
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
}

std::string EchoMembers(const json::object& echo) {
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
