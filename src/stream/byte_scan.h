// Byte scanning helpers shared by the hot-path parsers (SSE framing, JSON range scanning).
//
// Pure functions over caller-owned memory; thread-safe; never read outside [begin, end).
#pragma once

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

}  // namespace turnpike::stream
