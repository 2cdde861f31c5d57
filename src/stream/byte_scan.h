// Byte scanning helpers shared by the hot-path parsers (SSE framing, JSON range scanning, JSON
// string bodies). Inline on purpose: the scanners call them in their per-byte loops.
//
// Pure functions over caller-owned memory; thread-safe; never read outside [begin, end).
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::stream {

// Returns the first position in [begin, end) holding `a` or `b`, or `end` if there is none.
// Scans 16 bytes per step with SSE2 (x86-64 baseline), byte by byte elsewhere.
inline const char* FindEither(const char* begin, const char* end, char a, char b) {
#if defined(__SSE2__)
  constexpr long kLanes = 16;
  const __m128i va = _mm_set1_epi8(a);
  const __m128i vb = _mm_set1_epi8(b);
  while (end - begin >= kLanes) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin));
    const int mask =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(bytes, va), _mm_cmpeq_epi8(bytes, vb)));
    if (mask != 0) return begin + __builtin_ctz(static_cast<unsigned>(mask));
    begin += kLanes;
  }
#endif
  for (; begin < end; ++begin) {
    if (*begin == a || *begin == b) return begin;
  }
  return end;
}

// Returns the first position in [begin, end) that ends a plain run of JSON string bytes: a
// quote, a backslash, a control character (< 0x20) or a non-ASCII byte (>= 0x80), or `end`.
// Same stepping as FindEither.
inline const char* FindStringSpecial(const char* begin, const char* end) {
#if defined(__SSE2__)
  constexpr long kLanes = 16;
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - begin >= kLanes) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin));
    // Signed compare: bytes >= 0x80 are negative, so one compare finds both < 0x20 and >= 0x80.
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                     _mm_cmplt_epi8(bytes, space));
    const int mask = _mm_movemask_epi8(special);
    if (mask != 0) return begin + __builtin_ctz(static_cast<unsigned>(mask));
    begin += kLanes;
  }
#endif
  for (; begin < end; ++begin) {
    const auto c = static_cast<unsigned char>(*begin);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return begin;
  }
  return end;
}

// The value of the hex digit `c`, or -1.
inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits at `p` (bounds checked by the caller), or -1.
inline int32_t Hex4(const char* p) {
  int32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = HexValue(p[i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// The length of the UTF-8 sequence of 2 to 4 bytes at `p` (RFC 3629: no overlongs, no
// surrogates, <= U+10FFFF), or 0 when it is not one.
inline int Utf8SequenceLength(const char* p, const char* end) {
  const auto byte = [p](long i) { return static_cast<unsigned char>(p[i]); };
  const auto cont = [&](long i) { return (byte(i) & 0xC0) == 0x80; };
  const unsigned char lead = byte(0);
  const long left = end - p;
  if (lead >= 0xC2 && lead <= 0xDF) return left >= 2 && cont(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (left < 3 || !cont(1) || !cont(2)) return 0;
    if (lead == 0xE0 && byte(1) < 0xA0) return 0;  // overlong
    if (lead == 0xED && byte(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (left < 4 || !cont(1) || !cont(2) || !cont(3)) return 0;
    if (lead == 0xF0 && byte(1) < 0x90) return 0;  // overlong
    if (lead == 0xF4 && byte(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace turnpike::stream
