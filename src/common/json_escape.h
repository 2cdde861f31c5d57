// Escaping text for a JSON string, for code that writes JSON by appending to a string (the
// per-chunk encoders, the mock provider, the upstream body splice, reports). Escapes what JSON
// requires: quote, backslash and control characters (\n \r \t by name, others as \u00XX);
// other bytes, UTF-8 included, are copied as they are. Runs that need no escape are copied at
// once.
#pragma once

#include <string>
#include <string_view>

namespace turnpike {

// Appends `text` escaped (without quotes).
void AppendJsonEscaped(std::string& out, std::string_view text);

// Appends `text` as a quoted JSON string.
inline void AppendJsonQuoted(std::string& out, std::string_view text) {
  out.push_back('"');
  AppendJsonEscaped(out, text);
  out.push_back('"');
}

}  // namespace turnpike
