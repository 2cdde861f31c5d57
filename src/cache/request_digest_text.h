// Character helpers of the request digest's two scanners (request_digest.cc, the general one,
// and request_digest_small.cc, small bodies' one pass): one definition of the canonical name
// order and of valid UTF-8, so that the two cannot drift apart. Internal to src/cache/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace turnpike::cache::digest_text {

[[gnu::always_inline]] inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// An escape whose canonical form is itself.
[[gnu::always_inline]] inline bool IsVerbatimEscape(char kind) {
  return kind == '"' || kind == '\\' || kind == 'n' || kind == 't' || kind == 'r' || kind == 'b' ||
         kind == 'f';
}

[[gnu::always_inline]] inline bool BytesEqual(const char* a, const char* b, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// A name length's bit in a mask of lengths: lengths of 63 and more share the last one.
[[gnu::always_inline]] inline uint64_t LengthBit(size_t length) {
  return uint64_t{1} << std::min<size_t>(length, 63);
}

inline uint64_t LengthMask(std::span<const std::string_view> names) {
  uint64_t mask = 0;
  for (std::string_view name : names) mask |= LengthBit(name.size());
  return mask;
}

// Three-way comparison of two names (bytes in the canonical text) in the canonical order: the
// shorter first, then byte by byte (request_digest.h).
[[gnu::always_inline]] inline int CompareNames(const char* x, size_t x_size, const char* y,
                                               size_t y_size) {
  if (x_size != y_size) return x_size < y_size ? -1 : 1;
  for (size_t i = 0; i < x_size; ++i) {
    if (x[i] != y[i]) {
      return static_cast<unsigned char>(x[i]) < static_cast<unsigned char>(y[i]) ? -1 : 1;
    }
  }
  return 0;
}

// The length of the UTF-8 sequence at `p` (its lead byte >= 0x80), `available` bytes readable
// from there; 0 if it is invalid: Unicode's table 3-7, so no overlong forms, no surrogates,
// nothing above U+10FFFF, and no sequence cut short.
inline size_t Utf8Length(const char* p, size_t available) {
  const auto lead = static_cast<unsigned char>(*p);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (available < length) return 0;
  const auto second = static_cast<unsigned char>(p[1]);
  if (second < low || second > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((static_cast<unsigned char>(p[i]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

}  // namespace turnpike::cache::digest_text
