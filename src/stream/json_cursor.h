// A forward cursor over one JSON text, for the one-pass readers of stream/ (chunk_scan.h) and
// providers/ (the chat request's): each reader derives from it and reads the members it knows,
// skipping every other value with full checking.
//
// Contract shared by its readers: a function returns false to mean "not decided here" (the
// caller then asks simdjson, which has the final say); the position is then meaningless. It
// returns true only for input that is valid JSON (RFC 8259: grammar, UTF-8, escapes) as far as
// it has read; what it does not judge is said where it matters: SkipEscape checks an escape's
// grammar, not its surrogates (Unescape, through AppendDecodedStringBody, judges those as
// simdjson does), and nesting deeper than kMaxDepth or an integer longer than kMaxIntDigits is
// left to simdjson.
//
// Plain input (no backslash, no byte below 0x20, none above 0x7F) is found once, sixteen bytes
// at a time; a string in it then ends at its next quote and needs no checking.
//
// Not thread-safe; views point into the input or into `unescaped` (reserved once per input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "stream/byte_scan.h"
#include "stream/json_string.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::stream {

class JsonCursor {
 public:
  // simdjson's default is 1024; real chunks nest about 8 deep (logprobs a little more).
  static constexpr int kMaxDepth = 64;
  // Up to 18 decimal digits always fit an int64.
  static constexpr int kMaxIntDigits = 18;

  // `plain_from`: the bytes before it are known to be plain (a chunk's lead).
  JsonCursor(std::string_view json, std::string& unescaped, size_t plain_from = 0)
      : begin_(json.data()),
        p_(json.data()),
        end_(json.data() + json.size()),
        unescaped_(unescaped) {
    plain_ = IsPlain(p_ + plain_from, end_);
  }

  bool plain() const { return plain_; }

 protected:
  static bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool AboveSpace(char c) { return static_cast<unsigned char>(c) > ' '; }

  // The next byte that is not whitespace ('\0' at the end).
  char Peek() {
    if (p_ < end_ && AboveSpace(*p_)) return *p_;
    while (p_ < end_ && IsSpace(*p_)) ++p_;
    return p_ < end_ ? *p_ : '\0';
  }
  // Whitespace, then the end of the input.
  bool AtEnd() { return Peek() == '\0' && p_ == end_; }
  static bool IsPlain(const char* begin, const char* end);
  bool Literal(std::string_view word);
  bool SkipUtf8();
  bool SkipEscape();
  // A string whose opening quote is at p_: `raw` is its bytes between the quotes.
  bool RawString(std::string_view& raw, bool& escaped) {
    escaped = false;
    if (!plain_) return CheckedString(raw, escaped);
    const char* begin = p_ + 1;
    const char* close = FindEither(begin, end_, '"', '"');
    if (close == end_) return false;
    raw = std::string_view(begin, static_cast<size_t>(close - begin));
    p_ = close + 1;
    return true;
  }
  bool CheckedString(std::string_view& raw, bool& escaped);
  bool Unescape(std::string_view raw, std::string_view& out);
  // A number by the JSON grammar.
  bool Number();
  // What SkipValue checks beyond the grammar: nothing. A reader stricter than the grammar passes
  // a checker of its own with the same three members.
  struct Grammar {
    static bool String(std::string_view, bool /*escaped*/) { return true; }
    static bool Key(std::string_view) { return true; }
    static bool Number(std::string_view) { return true; }
  };
  // Any value, by the grammar and `check` (each string with whether it has escapes, each key
  // raw, each number's token).
  template <typename Check = Grammar>
  bool SkipValue(int depth, Check&& check = Check{});
  bool OptionalString(std::string_view& out);
  // A string's escaped bytes, checked as ReadEscaped checks them (escapes decoded into
  // unescaped_, then dropped); null reads as empty.
  bool EscapedString(std::string_view& out);
  bool OptionalInt(int64_t& out);
  // Object members (null counts as empty): on_member(raw key) must read the value.
  template <typename F>
  bool Members(F&& on_member);
  // Members from the first key on (the '{' read, the object not empty).
  template <typename F>
  bool MembersFrom(F&& on_member);
  // The rest of an object after one of its members' values (a ',' and more members, or '}').
  template <typename F>
  bool MembersAfterValue(F&& on_member);
  // Array elements (null counts as empty): on_element(position) must read the element.
  template <typename F>
  bool Elements(F&& on_element);
  // The elements of an array whose '[' has been read.
  template <typename F>
  bool ElementsAfterOpen(F&& on_element);
  // After a member or an element: its container's `close` (read), or a comma (read), or neither.
  enum class Next { kClosed, kMore, kBad };
  Next AfterValue(char close);

  const char* const begin_;
  const char* p_;
  const char* const end_;
  std::string& unescaped_;
  bool plain_ = false;
};

inline bool JsonCursor::IsPlain(const char* begin, const char* end) {
  const char* p = begin;
#if defined(__SSE2__)
  constexpr long kLanes = 16;
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  __m128i special = _mm_setzero_si128();
  const auto check = [&](const char* at) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    special = _mm_or_si128(
        special, _mm_or_si128(_mm_cmpeq_epi8(bytes, backslash), _mm_cmplt_epi8(bytes, space)));
  };
  for (; end - p >= kLanes; p += kLanes) check(p);
  // The last few bytes as the last 16 (some checked twice), when there are 16.
  if (p != end && end - begin >= kLanes) {
    check(end - kLanes);
    p = end;
  }
  if (_mm_movemask_epi8(special) != 0) return false;
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\\' || c < 0x20 || c >= 0x80) return false;
  }
  return true;
}

inline bool JsonCursor::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0) {
    return false;
  }
  p_ += word.size();
  return true;
}

inline bool JsonCursor::SkipUtf8() {
  const int length = Utf8SequenceLength(p_, end_);
  p_ += length;
  return length != 0;
}

// An escape at p_ (the backslash): grammar only; Unescape judges surrogates.
inline bool JsonCursor::SkipEscape() {
  if (end_ - p_ < 2) return false;
  switch (p_[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      p_ += 2;
      return true;
    case 'u':
      if (end_ - p_ < 6 || Hex4(p_ + 2) < 0) return false;
      p_ += 6;
      return true;
    default:
      return false;
  }
}

inline bool JsonCursor::CheckedString(std::string_view& raw, bool& escaped) {
  const char* begin = ++p_;
  for (;;) {
    p_ = FindStringSpecial(p_, end_);
    if (p_ == end_) return false;
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      raw = std::string_view(begin, static_cast<size_t>(p_ - begin));
      ++p_;
      return true;
    }
    if (c == '\\') {
      escaped = true;
      if (!SkipEscape()) return false;
    } else if (c < 0x20 || !SkipUtf8()) {
      return false;
    }
  }
}

// Decodes an escaped string's raw bytes (already checked by RawString) into unescaped_.
inline bool JsonCursor::Unescape(std::string_view raw, std::string_view& out) {
  // Nothing decodes longer than its escaped form, so reserving the whole payload once keeps
  // every earlier view into unescaped_ valid.
  const size_t payload = static_cast<size_t>(end_ - raw.data());
  if (unescaped_.capacity() < unescaped_.size() + payload) {
    if (!unescaped_.empty()) return false;  // cannot happen: reserved at the first escape
    unescaped_.reserve(payload);
  }
  const size_t start = unescaped_.size();
  if (!AppendDecodedStringBody(raw, unescaped_)) return false;
  out = std::string_view(unescaped_.data() + start, unescaped_.size() - start);
  return true;
}

// A number at p_, by the JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
inline bool JsonCursor::Number() {
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ == end_ || !IsDigit(*p_)) return false;
  if (*p_ == '0') {
    ++p_;
  } else {
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
  }
  return true;
}

template <typename Check>
bool JsonCursor::SkipValue(int depth, Check&& check) {
  if (depth > kMaxDepth) return false;
  switch (Peek()) {
    case '"': {
      std::string_view raw;
      bool escaped;
      return RawString(raw, escaped) && check.String(raw, escaped);
    }
    case '{':
      return Members(
          [&](std::string_view key) { return check.Key(key) && SkipValue(depth + 1, check); });
    case '[':
      return Elements([&](int64_t) { return SkipValue(depth + 1, check); });
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default: {
      const char* start = p_;
      return Number() && check.Number(std::string_view(start, static_cast<size_t>(p_ - start)));
    }
  }
}

template <typename F>
bool JsonCursor::Members(F&& on_member) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '{') return false;
  ++p_;
  if (Peek() == '}') {
    ++p_;
    return true;
  }
  return MembersFrom(on_member);
}

inline JsonCursor::Next JsonCursor::AfterValue(char close) {
  const char next = Peek();
  if (next == close) {
    ++p_;
    return Next::kClosed;
  }
  if (next != ',') return Next::kBad;
  ++p_;
  return Next::kMore;
}

template <typename F>
bool JsonCursor::MembersFrom(F&& on_member) {
  for (;;) {
    if (Peek() != '"') return false;
    std::string_view key;
    bool escaped;
    // Keys are given raw (as ParseChunk compares them): an escaped key matches no known name.
    if (!RawString(key, escaped) || Peek() != ':') return false;
    ++p_;
    if (!on_member(key)) return false;
    const Next next = AfterValue('}');
    if (next != Next::kMore) return next == Next::kClosed;
  }
}

template <typename F>
bool JsonCursor::MembersAfterValue(F&& on_member) {
  const Next next = AfterValue('}');
  return next == Next::kMore ? MembersFrom(on_member) : next == Next::kClosed;
}

template <typename F>
bool JsonCursor::Elements(F&& on_element) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '[') return false;
  ++p_;
  return ElementsAfterOpen(on_element);
}

template <typename F>
bool JsonCursor::ElementsAfterOpen(F&& on_element) {
  if (Peek() == ']') {
    ++p_;
    return true;
  }
  for (int64_t position = 0;; ++position) {
    if (!on_element(position)) return false;
    const Next next = AfterValue(']');
    if (next != Next::kMore) return next == Next::kClosed;
  }
}

inline bool JsonCursor::OptionalString(std::string_view& out) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  if (first != '"') return false;
  std::string_view raw;
  bool escaped;
  if (!RawString(raw, escaped)) return false;
  if (!escaped) {
    out = raw;
    return true;
  }
  return Unescape(raw, out);
}

inline bool JsonCursor::EscapedString(std::string_view& out) {
  const char first = Peek();
  if (first == 'n') {
    out = {};
    return Literal("null");
  }
  if (first != '"') return false;
  bool escaped;
  if (!RawString(out, escaped)) return false;
  if (!escaped) return true;
  unescaped_.clear();
  std::string_view decoded;
  return Unescape(out, decoded);
}

inline bool JsonCursor::OptionalInt(int64_t& out) {
  const char first = Peek();
  if (first == 'n') return Literal("null");
  const bool negative = first == '-';
  if (negative) ++p_;
  if (p_ == end_ || !IsDigit(*p_)) return false;
  if (*p_ == '0' && p_ + 1 < end_ && IsDigit(p_[1])) return false;  // a leading zero
  int64_t value = 0;
  int digits = 0;
  for (; p_ < end_ && IsDigit(*p_); ++p_) {
    if (++digits > kMaxIntDigits) return false;
    value = value * 10 + (*p_ - '0');
  }
  if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;  // not an integer
  out = negative ? -value : value;
  return true;
}

}  // namespace turnpike::stream
