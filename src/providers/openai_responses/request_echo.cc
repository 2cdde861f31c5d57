// The Responses request seen from the answer: the request fields a response echoes, and the
// client's names for pivot fields in errors.
#include <algorithm>
#include <boost/json/serialize.hpp>

#include "providers/openai_responses/request.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

// The caller's own value for `key`, if it has one.
const EchoMember* OwnMember(std::span<const EchoMember> own, std::string_view key) {
  for (const EchoMember& member : own) {
    if (member.key == key) return &member;
  }
  return nullptr;
}

// `"key":`, after a comma unless it is the first member.
void AppendKey(std::string& out, std::string_view key) {
  out.append(out.empty() ? "\"" : ",\"").append(key).append("\":");
}

// "key":value: the caller's own value, else the request's (serialized), else `fallback` (JSON
// text) when the request has none or null.
void AppendMember(std::string& out, std::string_view key, const json::object& request,
                  std::string_view fallback, std::span<const EchoMember> own) {
  AppendKey(out, key);
  if (const EchoMember* member = OwnMember(own, key)) {
    out.append(member->json);
    return;
  }
  const json::value* value = request.if_contains(key);
  if (value == nullptr || value->is_null()) {
    out.append(fallback);
  } else {
    out.append(json::serialize(*value));
  }
}

// "key":text, unless the caller has its own value for `key`.
void AppendFixed(std::string& out, std::string_view key, std::string_view text,
                 std::span<const EchoMember> own) {
  AppendKey(out, key);
  const EchoMember* member = OwnMember(own, key);
  out.append(member != nullptr ? member->json : text);
}

}  // namespace

std::string EchoFields(std::string_view body) {
  boost::system::error_code ec;
  // Everything read from `doc` is serialized before it goes: it can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  const json::object empty;
  const json::object& request = !ec && doc.is_object() ? doc.as_object() : empty;
  return EchoFields(request, {});
}

std::string EchoFieldsOf(const EncoderOptions& options) {
  if (!options.echo.empty()) return std::string(options.echo);
  if (options.client_document != nullptr) return EchoFields(*options.client_document, {});
  return EchoFields(options.client_body);
}

std::string EchoFields(const json::object& request, std::span<const EchoMember> own) {
  // Written directly, not as an object serialized: a request sets few of these, and the
  // defaults are constant text (the object and its serialization were most of a plain
  // Responses call's cost on the worker beyond the chat path's, and much of an agent turn's
  // start). Tests compare the text with the object's serialization.
  static const std::string kOne = json::serialize(json::value(1.0));
  std::string out;
  constexpr size_t kDefaultsSize = 320;
  out.reserve(kDefaultsSize);
  AppendMember(out, "instructions", request, "null", own);
  AppendMember(out, "max_output_tokens", request, "null", own);
  AppendMember(out, "metadata", request, "{}", own);
  AppendMember(out, "parallel_tool_calls", request, "true", own);
  AppendFixed(out, "previous_response_id", "null", own);
  AppendKey(out, "reasoning");
  if (const EchoMember* member = OwnMember(own, "reasoning")) {
    out.append(member->json);
  } else {
    out.append("{\"effort\":");
    const json::value* reasoning = request.if_contains("reasoning");
    const json::value* effort = reasoning != nullptr && reasoning->is_object()
                                    ? reasoning->as_object().if_contains("effort")
                                    : nullptr;
    out.append(effort != nullptr ? json::serialize(*effort) : std::string("null"));
    out.append(",\"summary\":null}");
  }
  AppendFixed(out, "store", "false", own);
  AppendMember(out, "temperature", request, kOne, own);
  AppendKey(out, "text");
  const json::value* text = request.if_contains("text");
  if (const EchoMember* member = OwnMember(own, "text")) {
    out.append(member->json);
  } else if (text == nullptr || !text->is_object() || text->as_object().empty()) {
    out.append("{\"format\":{\"type\":\"text\"}}");
  } else if (text->as_object().contains("format")) {
    out.append(json::serialize(*text));
  } else {
    std::string members = json::serialize(*text);
    members.pop_back();  // its closing brace: the default format goes last
    out.append(members).append(",\"format\":{\"type\":\"text\"}}");
  }
  AppendMember(out, "tool_choice", request, "\"auto\"", own);
  AppendMember(out, "tools", request, "[]", own);
  AppendMember(out, "top_p", request, kOne, own);
  AppendFixed(out, "truncation", "\"disabled\"", own);
  AppendMember(out, "user", request, "null", own);
  static constexpr std::string_view kEchoed[] = {"instructions",
                                                 "max_output_tokens",
                                                 "metadata",
                                                 "parallel_tool_calls",
                                                 "previous_response_id",
                                                 "reasoning",
                                                 "store",
                                                 "temperature",
                                                 "text",
                                                 "tool_choice",
                                                 "tools",
                                                 "top_p",
                                                 "truncation",
                                                 "user"};
  for (const EchoMember& member : own) {
    if (std::find(std::begin(kEchoed), std::end(kEchoed), member.key) != std::end(kEchoed)) {
      continue;
    }
    AppendKey(out, member.key);
    out.append(member.json);
  }
  return out;
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
