// The guard reads text one logical character ("unit") at a time, in either of the two forms
// answer text takes: escaped (the bytes between the quotes of a JSON string token, as in a
// providers::StreamEvent) or raw (providers::Response::text). A unit is one byte of raw text,
// or one escape sequence (`\n`, `\/`, `\u00e9`) of escaped text. Every character that can make
// a URL is ASCII, so a unit's class is its ASCII character or kNonAscii; bytes of a UTF-8
// sequence are units of their own (kNonAscii), and an escaped code unit at or above 0x80 is one
// kNonAscii unit. HostBuilder turns the units of a host back into its UTF-8 bytes.
//
// Pure functions and a value type: no allocation but HostBuilder's string; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace turnpike::guard {

enum class TextForm : uint8_t {
  kEscaped,  // JSON-escaped (StreamEvent::text)
  kRaw,      // unescaped (providers::Response::text)
};

inline constexpr uint8_t kNonAscii = 0x80;   // a byte >= 0x80, or an escaped code unit >= 0x80
inline constexpr uint8_t kBadEscape = 0x01;  // a malformed escape: a control character

struct Unit {
  uint8_t len = 0;    // bytes of text; 0: incomplete, more text is needed to read it
  uint8_t ch = 0;     // the ASCII character, or kNonAscii
  bool wide = false;  // `code` is a \uXXXX UTF-16 code unit, not a byte
  uint16_t code = 0;  // the byte (raw, or an unescaped one) or the UTF-16 code unit
};

// The character a one-letter escape stands for (`n` -> '\n'), or kBadEscape.
constexpr uint8_t EscapedChar(char letter) {
  switch (letter) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case '/':
      return '/';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return kBadEscape;
  }
}

constexpr int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The escape sequence at text[at] (a '\\'): see DecodeUnit.
Unit DecodeEscape(std::string_view text, size_t at, bool final);

// The unit at text[at] (at < text.size()). An escape cut by the end of `text` is incomplete
// (len 0) unless `final`, when it is one kBadEscape unit to the end. A malformed escape is a
// two-byte kBadEscape unit, decided from the bytes present (so the same wherever text is cut).
inline Unit DecodeUnit(std::string_view text, size_t at, TextForm form, bool final) {
  const auto byte = static_cast<uint8_t>(text[at]);
  if (form == TextForm::kRaw || byte != '\\') [[likely]] {
    return {1, byte < 0x80 ? byte : kNonAscii, false, byte};
  }
  return DecodeEscape(text, at, final);
}

// The bytes at the end of a delta that cut a character: an incomplete UTF-8 sequence, or
// (escaped) a `\uD800`-`\uDBFF` high surrogate whose low half may come next. A guard holds
// them back so that no output cuts a character, even where the input did.
size_t CutCharacterTail(std::string_view text, TextForm form);

constexpr bool IsAlpha(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
constexpr bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
constexpr bool IsAlnum(uint8_t c) { return IsAlpha(c) || IsDigit(c); }
constexpr uint8_t ToLower(uint8_t c) { return c >= 'A' && c <= 'Z' ? c | 0x20 : c; }
// A word character: a `www.` host starts only after one that is not.
constexpr bool IsWordChar(uint8_t c) { return IsAlnum(c) || c == '_' || c == kNonAscii; }
// A character of a host name's label.
constexpr bool IsLabelChar(uint8_t c) { return IsWordChar(c) || c == '-'; }

// The UTF-8 bytes of a host read unit by unit: ASCII lowercased, escaped code units encoded
// (a surrogate pair combined; a lone surrogate becomes U+FFFD).
class HostBuilder {
 public:
  void Add(const Unit& unit);
  // The host; the builder is empty afterwards.
  std::string Take();
  bool empty() const { return text_.empty() && high_ == 0; }

 private:
  void AppendCodePoint(uint32_t code_point);

  std::string text_;
  uint16_t high_ = 0;  // a high surrogate waiting for its low half
};

}  // namespace turnpike::guard
