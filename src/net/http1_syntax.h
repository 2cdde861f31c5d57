// The HTTP/1.1 grammar both of our parsers share (request_parser.h for clients' requests,
// response_parser.h for upstream responses): character classes of RFC 9110, field lines,
// comma-separated lists, decimal lengths, and the chunked framing's size lines and data ends of
// RFC 9112 (with Beast's error codes). No state, no I/O.
#pragma once

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::net::http1 {

// A chunk-size line (with its extensions) longer than this is bad_chunk.
inline constexpr size_t kMaxChunkLine = 4096;
// Hex digits of a chunk size: 15 keep it below 2^60.
inline constexpr size_t kMaxChunkDigits = 15;
// Decimal digits of a Content-Length: 18 keep it below 10^18 < 2^63.
inline constexpr size_t kMaxLengthDigits = 18;

// RFC 9110 5.6.2: tchar.
inline bool IsTokenChar(unsigned char c) {
  static constexpr auto kTable = [] {
    struct Table {
      bool yes[256] = {};
    } t;
    for (int c = '0'; c <= '9'; ++c) t.yes[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t.yes[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t.yes[c] = true;
    for (unsigned char c : std::string_view("!#$%&'*+-.^_`|~")) t.yes[c] = true;
    return t;
  }();
  return kTable.yes[c];
}

inline bool IsToken(std::string_view text) {
  for (char c : text) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  }
  return !text.empty();
}

// A field value's byte: VCHAR, SP, HTAB or obs-text (RFC 9110 5.5).
inline bool IsValueChar(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7F); }
inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// The value of the hex digit `c`, or -1. A table: a chunk-size line is read per chunk, and the
// branches cost about 15 instructions a digit (callgrind).
inline int HexDigit(char c) {
  static constexpr auto kTable = [] {
    struct Table {
      signed char value[256] = {};
    } t;
    for (int c = 0; c < 256; ++c) t.value[c] = -1;
    for (int c = '0'; c <= '9'; ++c) t.value[c] = static_cast<signed char>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) t.value[c] = static_cast<signed char>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) t.value[c] = static_cast<signed char>(c - 'A' + 10);
    return t;
  }();
  return kTable.value[static_cast<unsigned char>(c)];
}

// The first byte of [p, end) that is not a value character (a control other than HTAB, or DEL),
// or `end`; with `space_too`, a space or HTAB also ends the run (a request target's bytes).
// Sixteen bytes at a time where SSE2 is there: a field value or a target is tens of bytes, and a
// byte at a time cost ~15 instructions each (callgrind).
template <bool space_too = false>
inline const char* SkipValueChars(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i below_space = _mm_set1_epi8(0x1F);
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7F);
  const __m128i space = _mm_set1_epi8(' ');
  for (; end - p >= 16; p += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // b <= 0x1F (unsigned): min(b, 0x1F) == b.
    __m128i stop = _mm_cmpeq_epi8(_mm_min_epu8(b, below_space), b);
    if constexpr (space_too) {
      stop = _mm_or_si128(stop, _mm_cmpeq_epi8(b, space));
    } else {
      stop = _mm_andnot_si128(_mm_cmpeq_epi8(b, tab), stop);
    }
    stop = _mm_or_si128(stop, _mm_cmpeq_epi8(b, del));
    if (const int mask = _mm_movemask_epi8(stop); mask != 0) return p + __builtin_ctz(mask);
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == 0x7F || (c < 0x20 && (space_too || c != '\t')) || (space_too && c == ' ')) break;
  }
  return p;
}

// A token name equals `lower` (lower-case, of the same length) whatever its case. Exact for
// tokens: no token byte other than an upper-case letter maps to another token byte by setting
// 0x20. Eight bytes at a time.
inline bool TokenEqualsLower(std::string_view name, std::string_view lower) {
  constexpr uint64_t kCaseBits = 0x2020202020202020;
  size_t i = 0;
  for (; i + 8 <= name.size(); i += 8) {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, name.data() + i, 8);
    std::memcpy(&b, lower.data() + i, 8);
    if ((a | kCaseBits) != b) return false;
  }
  for (; i < name.size(); ++i) {
    if (static_cast<char>(name[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

// The end of the line that starts at `p` (its '\n'), or nullptr if [p, end) has none.
inline const char* LineEnd(const char* p, const char* end) {
  if (p == end) return nullptr;  // an empty input's pointer may be null: not for memchr
  return static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
}

// The comma-separated elements of a field value, blanks around each trimmed; empty elements
// are skipped (RFC 9110 5.6.1).
template <typename F>
void ForEachElement(std::string_view value, F&& on_element) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view element = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    while (!element.empty() && IsBlank(element.front())) element.remove_prefix(1);
    while (!element.empty() && IsBlank(element.back())) element.remove_suffix(1);
    if (!element.empty()) on_element(element);
  }
}

// From `p`, the first byte that is not a letter, a digit or '-' (what nearly every field name
// is made of), looking at sixteen bytes at a time while [p, readable) holds them (bytes past the
// line may be read, never past `readable`); at most `end`, whose byte must stop the run.
inline const char* SkipNameChars(const char* p, const char* end, const char* readable) {
#if defined(__SSE2__)
  for (; readable - p >= 16 && p < end; p += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i lower = _mm_or_si128(b, _mm_set1_epi8(0x20));
    // Signed compares: bytes from 0x80 are negative, outside every range.
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                         _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1)));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(b, _mm_set1_epi8('9' + 1)));
    const __m128i dash = _mm_cmpeq_epi8(b, _mm_set1_epi8('-'));
    const int ok = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), dash));
    if (ok != 0xFFFF) return p + __builtin_ctz(~ok);
  }
#endif
  (void)readable;
  return p < end ? p : end;
}

// A field line [begin, end) without its CRLF: "name: value", a token name and optional blanks
// around a value of value characters. False when it is not one. The input may be read up to
// `readable` (at least `end`; null: `end`), see SkipNameChars.
inline bool SplitField(const char* begin, const char* end, std::string_view& name,
                       std::string_view& value, const char* readable = nullptr) {
  const char* p = SkipNameChars(begin, end, readable != nullptr ? readable : end);
  while (p < end && IsTokenChar(static_cast<unsigned char>(*p))) ++p;
  if (p == begin || p == end || *p != ':') return false;
  name = std::string_view(begin, static_cast<size_t>(p - begin));
  ++p;
  while (p < end && IsBlank(*p)) ++p;
  const char* value_end = end;
  while (value_end > p && IsBlank(value_end[-1])) --value_end;
  if (SkipValueChars(p, value_end) != value_end) return false;
  value = std::string_view(p, static_cast<size_t>(value_end - p));
  return true;
}

// A Content-Length value: digits only, at most kMaxLengthDigits of them.
inline bool ParseLength(std::string_view text, uint64_t& length) {
  if (text.empty() || text.size() > kMaxLengthDigits) return false;
  length = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    length = length * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

// Chunk extensions [p, end) (RFC 9112 7.1.1): *( BWS ";" BWS name [ BWS "=" BWS value ] ), a
// token name, a token or quoted-string value; no blanks after the last of them (as Beast).
inline bool ValidChunkExtensions(const char* p, const char* end) {
  auto blanks = [&p, end] {
    while (p < end && IsBlank(*p)) ++p;
  };
  auto token = [&p, end] {
    const char* start = p;
    while (p < end && IsTokenChar(static_cast<unsigned char>(*p))) ++p;
    return p > start;
  };
  auto quoted = [&p, end] {  // at the opening quote
    for (++p; p < end; ++p) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') {
        ++p;
        return true;
      }
      if (c == '\\') {  // quoted-pair: HTAB, SP, VCHAR or obs-text
        if (++p == end || !IsValueChar(static_cast<unsigned char>(*p))) return false;
      } else if (!IsValueChar(c)) {
        return false;
      }
    }
    return false;
  };
  while (p < end) {
    blanks();
    if (p == end || *p != ';') return false;
    ++p;
    blanks();
    if (!token()) return false;
    const char* after_name = p;
    blanks();
    if (p == end || *p != '=') {
      p = after_name;  // its blanks must lead to the next ';'
      continue;
    }
    ++p;
    blanks();
    if (!(p < end && *p == '"' ? quoted() : token())) return false;
  }
  return true;
}

// A chunk-size line [begin, end) without its CRLF: hex digits (at most kMaxChunkDigits), then
// the extensions (checked, then skipped: nothing here reads them).
inline bool ParseChunkSize(const char* begin, const char* end, uint64_t& size) {
  const char* q = begin;
  size = 0;
  for (int digit; q < end && (digit = HexDigit(*q)) >= 0; ++q) {
    if (static_cast<size_t>(q - begin) == kMaxChunkDigits) return false;
    size = size * 16 + static_cast<uint64_t>(digit);
  }
  return q > begin && (q == end || ValidChunkExtensions(q, end));
}

// The CRLF that ends a chunk's data, at `p`: moves past it; else need_more or bad_chunk.
inline boost::beast::error_code TakeChunkEnd(const char*& p, const char* end) {
  namespace bhttp = boost::beast::http;
  if (end - p < 2) {
    return p < end && *p != '\r' ? bhttp::error::bad_chunk : bhttp::error::need_more;
  }
  if (p[0] != '\r' || p[1] != '\n') return bhttp::error::bad_chunk;
  p += 2;
  return {};
}

// The usual chunk-size line at `p`, hex digits then CRLF: true, its size, and `p` past the CRLF
// (what TakeChunkSize reads from such a line). False, nothing moved, for any other line.
inline bool TakeUsualChunkSize(const char*& p, const char* end, uint64_t& size) {
  const char* q = p;
  uint64_t value = 0;
  for (int digit;
       q < end && static_cast<size_t>(q - p) < kMaxChunkDigits && (digit = HexDigit(*q)) >= 0;
       ++q) {
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  if (q == p || end - q < 2 || q[0] != '\r' || q[1] != '\n') return false;
  size = value;
  p = q + 2;
  return true;
}

// A chunk-size line at `p` (at most kMaxChunkLine bytes): its size, and `p` past its CRLF; else
// need_more or bad_chunk.
inline boost::beast::error_code TakeChunkSize(const char*& p, const char* end, uint64_t& size) {
  namespace bhttp = boost::beast::http;
  if (TakeUsualChunkSize(p, end, size)) return {};
  const char* nl = LineEnd(p, end);
  if (nl == nullptr) {
    return static_cast<size_t>(end - p) > kMaxChunkLine ? bhttp::error::bad_chunk
                                                        : bhttp::error::need_more;
  }
  if (nl == p || nl[-1] != '\r' || static_cast<size_t>(nl - p) > kMaxChunkLine ||
      !ParseChunkSize(p, nl - 1, size)) {
    return bhttp::error::bad_chunk;
  }
  p = nl + 1;
  return {};
}

}  // namespace turnpike::net::http1
