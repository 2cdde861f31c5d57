// Writing JSON by appending to a string (no DOM on the per-chunk path), and reading string
// tokens without unescaping them, for every dialect's encoders and decoders.
//
// Stateless functions over caller-owned memory; thread-safe.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/json_escape.h"

namespace turnpike::providers {

// Escaping text is common/json_escape.h's (AppendJsonEscaped, AppendJsonQuoted).

// Appends `escaped` (already in escaped form) between quotes.
inline void AppendQuotedEscaped(std::string& out, std::string_view escaped) {
  out.push_back('"');
  out.append(escaped);
  out.push_back('"');
}

void AppendInt(std::string& out, int64_t value);

// Reads a JSON string value as its escaped content (the bytes between the quotes), after
// checking that it is a well-formed string (escapes included). null reads as empty.
simdjson::error_code ReadEscaped(simdjson::ondemand::value value, std::string_view& out);

// Reads an integer; null leaves `out` unchanged.
simdjson::error_code ReadInt(simdjson::ondemand::value value, int64_t& out);

// Visits each member of an object (null counts as empty): on_member(raw key, value) returns
// an error_code to stop. Keys are compared escaped (providers never escape these names).
template <typename F>
simdjson::error_code ForEachMember(simdjson::ondemand::value value, F&& on_member) {
  namespace od = simdjson::ondemand;
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) return simdjson::SUCCESS;
  od::object object;
  if (auto e = value.get_object().get(object)) return e;
  for (auto field : object) {
    od::raw_json_string key;
    if (auto e = field.key().get(key)) return e;
    od::value member;
    if (auto e = field.value().get(member)) return e;
    if (auto e = on_member(key, member)) return e;
  }
  return simdjson::SUCCESS;
}

// Visits each element of an array (null counts as empty) with its position.
template <typename F>
simdjson::error_code ForEachElement(simdjson::ondemand::value value, F&& on_element) {
  namespace od = simdjson::ondemand;
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) return simdjson::SUCCESS;
  od::array array;
  if (auto e = value.get_array().get(array)) return e;
  int64_t position = 0;
  for (auto element : array) {
    od::value item;
    if (auto e = element.get(item)) return e;
    if (auto e = on_element(position++, item)) return e;
  }
  return simdjson::SUCCESS;
}

}  // namespace turnpike::providers
