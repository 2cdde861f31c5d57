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

// "key":value, the request's value (serialized) or `fallback` (JSON text) when absent or null.
void AppendMember(std::string& out, std::string_view key, const json::object& request,
                  std::string_view fallback) {
  out.append(out.empty() ? "\"" : ",\"").append(key).append("\":");
  const json::value* value = request.if_contains(key);
  if (value == nullptr || value->is_null()) {
    out.append(fallback);
  } else {
    out.append(json::serialize(*value));
  }
}

}  // namespace

std::string EchoFields(std::string_view body) {
  boost::system::error_code ec;
  // Everything read from `doc` is serialized before it goes: it can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  const json::object empty;
  const json::object& request = !ec && doc.is_object() ? doc.as_object() : empty;
  // EchoMembers(EchoObject(request)), written directly: a request sets few of these, and the
  // defaults are constant text (the object and its serialization were most of a plain
  // Responses call's cost on the worker beyond the chat path's).
  static const std::string kOne = json::serialize(json::value(1.0));
  std::string out;
  constexpr size_t kDefaultsSize = 320;
  out.reserve(kDefaultsSize);
  AppendMember(out, "instructions", request, "null");
  AppendMember(out, "max_output_tokens", request, "null");
  AppendMember(out, "metadata", request, "{}");
  AppendMember(out, "parallel_tool_calls", request, "true");
  out.append(",\"previous_response_id\":null,\"reasoning\":{\"effort\":");
  const json::value* reasoning = request.if_contains("reasoning");
  const json::value* effort = reasoning != nullptr && reasoning->is_object()
                                  ? reasoning->as_object().if_contains("effort")
                                  : nullptr;
  out.append(effort != nullptr ? json::serialize(*effort) : std::string("null"));
  out.append(",\"summary\":null},\"store\":false");
  AppendMember(out, "temperature", request, kOne);
  out.append(",\"text\":");
  const json::value* text = request.if_contains("text");
  if (text == nullptr || !text->is_object() || text->as_object().empty()) {
    out.append("{\"format\":{\"type\":\"text\"}}");
  } else if (text->as_object().contains("format")) {
    out.append(json::serialize(*text));
  } else {
    std::string members = json::serialize(*text);
    members.pop_back();  // its closing brace: the default format goes last
    out.append(members).append(",\"format\":{\"type\":\"text\"}}");
  }
  AppendMember(out, "tool_choice", request, "\"auto\"");
  AppendMember(out, "tools", request, "[]");
  AppendMember(out, "top_p", request, kOne);
  out.append(",\"truncation\":\"disabled\"");
  AppendMember(out, "user", request, "null");
  return out;
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
