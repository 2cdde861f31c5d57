#include "guard/text_units.h"

namespace turnpike::guard {
namespace {
constexpr uint32_t kReplacement = 0xFFFD;
constexpr uint16_t kHighFirst = 0xD800, kLowFirst = 0xDC00, kLowEnd = 0xE000;
}  // namespace

Unit DecodeEscape(std::string_view text, size_t at, bool final) {
  const size_t left = text.size() - at;
  if (left < 2) return final ? Unit{static_cast<uint8_t>(left), kBadEscape, false, 0} : Unit{};
  if (text[at + 1] != 'u') {
    const uint8_t ch = EscapedChar(text[at + 1]);
    return {2, ch, false, ch};
  }
  constexpr size_t kUnicodeEscape = 6;  // \uXXXX
  uint16_t code = 0;
  for (size_t i = 2; i < kUnicodeEscape; ++i) {
    if (i == left) return final ? Unit{static_cast<uint8_t>(left), kBadEscape, false, 0} : Unit{};
    const int digit = HexValue(text[at + i]);
    if (digit < 0) return {2, kBadEscape, false, kBadEscape};
    code = static_cast<uint16_t>(code << 4 | digit);
  }
  return {kUnicodeEscape, code < 0x80 ? static_cast<uint8_t>(code) : kNonAscii, true, code};
}

void HostBuilder::Add(const Unit& unit) {
  const bool high = unit.wide && unit.code >= kHighFirst && unit.code < kLowFirst;
  const bool low = unit.wide && unit.code >= kLowFirst && unit.code < kLowEnd;
  if (high_ != 0 && low) {
    AppendCodePoint(0x10000 + ((high_ - kHighFirst) << 10) + (unit.code - kLowFirst));
    high_ = 0;
    return;
  }
  if (high_ != 0) AppendCodePoint(kReplacement);
  high_ = 0;
  if (high) {
    high_ = unit.code;
  } else if (low) {
    AppendCodePoint(kReplacement);
  } else if (unit.wide) {
    AppendCodePoint(unit.code < 0x80 ? ToLower(static_cast<uint8_t>(unit.code)) : unit.code);
  } else {
    // A raw byte (a UTF-8 sequence's bytes arrive one unit each) or an escaped ASCII character.
    text_.push_back(static_cast<char>(ToLower(static_cast<uint8_t>(unit.code))));
  }
}

std::string HostBuilder::Take() {
  if (high_ != 0) AppendCodePoint(kReplacement);
  high_ = 0;
  std::string text = std::move(text_);
  text_.clear();
  return text;
}

void HostBuilder::AppendCodePoint(uint32_t cp) {
  if (cp < 0x80) {
    text_.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    text_.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    text_.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    text_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    text_.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    text_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    text_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace turnpike::guard
