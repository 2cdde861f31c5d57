#include "guard/text_units.h"

#include <algorithm>

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

size_t CutCharacterTail(std::string_view text, TextForm form) {
  const size_t n = text.size();
  if (n == 0) return 0;
  if (static_cast<uint8_t>(text[n - 1]) >= 0x80) {
    // Back over continuation bytes to the lead byte; held if its sequence is not complete.
    constexpr size_t kLongest = 4;
    for (size_t back = 1; back <= std::min(n, kLongest); ++back) {
      const auto b = static_cast<uint8_t>(text[n - back]);
      if ((b & 0xC0) == 0x80) continue;
      const size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      return back < length ? back : 0;
    }
    return 0;
  }
  if (form != TextForm::kEscaped) return 0;
  // A backslash at `at` starts an escape if an even run of backslashes precedes it.
  const auto starts_escape = [text](size_t at) {
    if (text[at] != '\\') return false;
    size_t run = 0;
    while (run < at && text[at - 1 - run] == '\\') ++run;
    return run % 2 == 0;
  };
  constexpr size_t kEscape = 6;  // \uXXXX
  size_t end = n;                // where an escape cut by the end begins, or n
  for (size_t back = 1; back < kEscape && back <= n; ++back) {
    const size_t at = n - back;
    if (!starts_escape(at)) continue;
    bool cut = back == 1 || text[at + 1] == 'u';
    for (size_t i = at + 2; cut && i < n; ++i) cut = HexValue(text[i]) >= 0;
    if (cut) end = at;
    break;
  }
  // A high surrogate right before that waits for its low half.
  if (end >= kEscape && starts_escape(end - kEscape) && text[end - kEscape + 1] == 'u') {
    uint16_t code = 0;
    bool hex = true;
    for (size_t i = end - 4; i < end; ++i) {
      hex = hex && HexValue(text[i]) >= 0;
      code = static_cast<uint16_t>(code << 4 | std::max(HexValue(text[i]), 0));
    }
    if (hex && code >= kHighFirst && code < kLowFirst) end -= kEscape;
  }
  return n - end;
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
