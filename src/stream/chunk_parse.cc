#include "stream/chunk_parse.h"

namespace turnpike::stream {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::INCORRECT_TYPE;
using simdjson::SUCCESS;

error_code ExpectNull(od::value value) {
  bool is_null = false;
  if (error_code e = value.is_null().get(is_null)) return e;
  return is_null ? SUCCESS : INCORRECT_TYPE;
}

// A string, or null (leaves `out` empty). Anything else is an error.
error_code ReadOptionalString(od::value value, std::string_view& out) {
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  if (type == od::json_type::null) return ExpectNull(value);
  return value.get_string().get(out);
}

// An integer, or null (leaves `out` unchanged). Anything else is an error.
error_code ReadOptionalInt(od::value value, int64_t& out) {
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  if (type == od::json_type::null) return ExpectNull(value);
  return value.get_int64().get(out);
}

// Visits each member of an object (null counts as empty); `on_member(key, value)` returns an
// error_code to stop.
template <typename F>
error_code ForEachMember(od::value value, F&& on_member) {
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  if (type == od::json_type::null) return ExpectNull(value);
  od::object object;
  if (error_code e = value.get_object().get(object)) return e;
  for (auto field : object) {
    // Raw (escaped) keys: providers never escape these names, and comparing in place avoids
    // unescaping every key into the parser's string buffer.
    od::raw_json_string key;
    if (error_code e = field.key().get(key)) return e;
    od::value member;
    if (error_code e = field.value().get(member)) return e;
    if (error_code e = on_member(key, member)) return e;
  }
  return SUCCESS;
}

// Visits each element of an array (null counts as empty) with its position.
template <typename F>
error_code ForEachElement(od::value value, F&& on_element) {
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  if (type == od::json_type::null) return ExpectNull(value);
  od::array array;
  if (error_code e = value.get_array().get(array)) return e;
  int64_t position = 0;
  for (auto element : array) {
    od::value item;
    if (error_code e = element.get(item)) return e;
    if (error_code e = on_element(position++, item)) return e;
  }
  return SUCCESS;
}

error_code ReadUsage(od::value value, Usage& usage) {
  return ForEachMember(value, [&](od::raw_json_string key, od::value member) -> error_code {
    if (key == "prompt_tokens") return ReadOptionalInt(member, usage.prompt_tokens);
    if (key == "completion_tokens") return ReadOptionalInt(member, usage.completion_tokens);
    if (key == "total_tokens") return ReadOptionalInt(member, usage.total_tokens);
    if (key == "completion_tokens_details") {
      return ForEachMember(member, [&](od::raw_json_string detail, od::value count) -> error_code {
        return detail == "reasoning_tokens" ? ReadOptionalInt(count, usage.reasoning_tokens)
                                            : SUCCESS;
      });
    }
    if (key != "prompt_tokens_details") return SUCCESS;
    return ForEachMember(member, [&](od::raw_json_string detail, od::value count) -> error_code {
      return detail == "cached_tokens" ? ReadOptionalInt(count, usage.cached_tokens) : SUCCESS;
    });
  });
}

error_code ReadToolCall(od::value value, ToolCallDelta& call) {
  return ForEachMember(value, [&](od::raw_json_string key, od::value member) -> error_code {
    if (key == "index") return ReadOptionalInt(member, call.index);
    if (key == "id") return ReadOptionalString(member, call.id);
    if (key == "type") return ReadOptionalString(member, call.type);
    if (key != "function") return SUCCESS;
    return ForEachMember(member, [&](od::raw_json_string field, od::value text) -> error_code {
      if (field == "name") return ReadOptionalString(text, call.name);
      if (field == "arguments") return ReadOptionalString(text, call.arguments);
      return SUCCESS;
    });
  });
}

error_code ReadDelta(od::value value, size_t slot, ParsedChunk& out) {
  return ForEachMember(value, [&](od::raw_json_string key, od::value member) -> error_code {
    ChoiceDelta& choice = out.choices[slot];  // re-fetched: tool calls do not touch `choices`
    if (key == "content") return ReadOptionalString(member, choice.content);
    if (key == "role") return ReadOptionalString(member, choice.role);
    if (key != "tool_calls") return SUCCESS;
    return ForEachElement(member, [&](int64_t position, od::value call) -> error_code {
      ToolCallDelta& tool_call = out.tool_calls.emplace_back();
      tool_call.choice_slot = slot;
      tool_call.index = position;
      return ReadToolCall(call, tool_call);
    });
  });
}

error_code ReadChoices(od::value value, ParsedChunk& out) {
  return ForEachElement(value, [&](int64_t position, od::value choice) -> error_code {
    const size_t slot = out.choices.size();
    out.choices.emplace_back().index = position;
    return ForEachMember(choice, [&](od::raw_json_string key, od::value member) -> error_code {
      if (key == "index") return ReadOptionalInt(member, out.choices[slot].index);
      if (key == "delta") return ReadDelta(member, slot, out);
      if (key == "finish_reason")
        return ReadOptionalString(member, out.choices[slot].finish_reason);
      return SUCCESS;
    });
  });
}

// `{"error": {"message": ...}}` or `{"error": "message"}`.
error_code ReadError(od::value value, ParsedChunk& out) {
  out.is_error = true;
  od::json_type type;
  if (error_code e = value.type().get(type)) return e;
  if (type == od::json_type::string) return value.get_string().get(out.error_message);
  return ForEachMember(value, [&](od::raw_json_string key, od::value member) -> error_code {
    return key == "message" ? ReadOptionalString(member, out.error_message) : SUCCESS;
  });
}

error_code ReadChunk(simdjson::ondemand::document& doc, ParsedChunk& out) {
  od::value root;
  if (error_code e = doc.get_value().get(root)) return e;
  od::json_type type;
  if (error_code e = root.type().get(type)) return e;
  if (type != od::json_type::object) return INCORRECT_TYPE;
  error_code e = ForEachMember(root, [&](od::raw_json_string key, od::value member) -> error_code {
    if (key == "choices") return ReadChoices(member, out);
    if (key == "usage") {
      od::json_type usage_type;
      if (error_code e = member.type().get(usage_type)) return e;
      out.has_usage = usage_type == od::json_type::object;
      return ReadUsage(member, out.usage);
    }
    if (key == "id") return ReadOptionalString(member, out.id);
    if (key == "model") return ReadOptionalString(member, out.model);
    if (key == "error") return ReadError(member, out);
    return SUCCESS;
  });
  if (e) return e;
  // Anything after the root object (e.g. two objects in one payload) is malformed.
  const char* trailing = nullptr;
  return doc.current_location().get(trailing) == simdjson::OUT_OF_BOUNDS
             ? SUCCESS
             : simdjson::TRAILING_CONTENT;
}

}  // namespace

void ParsedChunk::Clear() {
  id = model = error_message = {};
  is_error = has_usage = plain = false;
  usage = Usage{};
  choices.clear();
  tool_calls.clear();
}

bool ParseChunk(simdjson::ondemand::document& doc, ParsedChunk& out) {
  return ReadChunk(doc, out) == SUCCESS;
}

Usage ParseBodyUsage(simdjson::ondemand::document& doc) {
  od::value root;
  if (doc.get_value().get(root)) return Usage{};
  Usage usage;
  // A repeated "usage" counts as its last copy, as JSON.parse reads a repeated key.
  error_code e = ForEachMember(root, [&](od::raw_json_string key, od::value member) -> error_code {
    if (!(key == "usage")) return SUCCESS;
    usage = Usage{};
    return ReadUsage(member, usage);
  });
  return e ? Usage{} : usage;
}

}  // namespace turnpike::stream
