// Lower-case hex of a byte string (ids, digests, tokens shown to people). Not for the request
// path's hot spots, which write their digits in place (cache/key.cc, http/exchange.cc).
#pragma once

#include <cstddef>
#include <string>

namespace turnpike {

inline std::string Hex(const unsigned char* bytes, size_t n) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace turnpike
