// ASCII case folding for protocol text (HTTP field names, tokens): no locale, no table.
//
// Written here rather than taken from Beast: boost::beast::iequals (Boost 1.81) reads one byte
// past both strings when they differ only in case in their last byte (found by
// fuzz_http_response), which is out of bounds for a view that ends its allocation.
#pragma once

#include <cstddef>
#include <string_view>

namespace turnpike {

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

// Whether `a` and `b` are equal once ASCII letters are folded to lower case.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

}  // namespace turnpike
