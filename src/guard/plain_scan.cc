// ScanPlain, the guard's fast path (url_scan.h): most deltas hold nothing that can start a URL,
// and only the bytes that could make one definite need a look.
#include <algorithm>
#include <array>

#include "guard/url_scan.h"

namespace turnpike::guard {
namespace {

constexpr std::string_view kHttps = "https";

uint8_t ClassOfByte(char byte) {
  const auto b = static_cast<uint8_t>(byte);
  return b < 0x80 ? b : kNonAscii;
}

// Whether text[...at) ends with `word` (lowercase ASCII), ignoring case.
bool EndsWithWord(std::string_view text, size_t at, std::string_view word) {
  if (at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (ToLower(static_cast<uint8_t>(text[at - word.size() + i])) != word[i]) return false;
  }
  return true;
}

constexpr std::array<bool, 256> Anchors(TextForm form) {
  std::array<bool, 256> anchors{};
  anchors[':'] = anchors['.'] = anchors['('] = true;
  anchors['\\'] = form == TextForm::kEscaped;
  return anchors;
}
constexpr std::array<bool, 256> kEscapedAnchors = Anchors(TextForm::kEscaped);
constexpr std::array<bool, 256> kRawAnchors = Anchors(TextForm::kRaw);

}  // namespace

PlainScan ScanPlain(std::string_view text, size_t from, uint8_t prev, TextForm form) {
  const std::array<bool, 256>& anchors = form == TextForm::kEscaped ? kEscapedAnchors : kRawAnchors;
  const size_t n = text.size();
  size_t escape_end = 0;  // the end of the last escape sequence, and its character
  uint8_t escape_ch = 0;
  PlainScan scan;
  for (size_t i = from;; ++i) {
    while (i < n && !anchors[static_cast<uint8_t>(text[i])]) ++i;
    if (i == n) break;
    bool bail = false;
    switch (text[i]) {
      case ':':
        bail = EndsWithWord(text, i, "http") || EndsWithWord(text, i, kHttps);
        break;
      case '.':
        bail = EndsWithWord(text, i, "www");
        break;
      case '(':
        bail = (i > from ? static_cast<uint8_t>(text[i - 1]) : prev) == ']';
        break;
      default: {  // '\\'
        const Unit u = DecodeUnit(text, i, form, false);
        // An escaped ASCII character could be part of anything: the scanner reads it.
        bail = u.len == 0 || (u.wide && u.code < 0x80);
        if (bail) break;
        i += u.len - 1;
        escape_end = i + 1;
        escape_ch = u.ch;
      }
    }
    if (bail) {
      scan.bail = i;
      return scan;
    }
  }
  const size_t floor = std::max(from, escape_end);  // text[floor, n) is single-byte units
  const auto before = [&](size_t at) {
    if (at == from) return prev;
    return at == escape_end ? escape_ch : ClassOfByte(text[at - 1]);
  };
  size_t hold = 0;
  for (size_t len = std::min(kHttps.size(), n - floor); len > 0 && hold == 0; --len) {
    if (EndsWithWord(text, n, kHttps.substr(0, len))) hold = len;
  }
  if (hold == 0) {
    size_t run = 0;  // trailing w's, up to one more than `www`
    while (run <= 3 && n - run > floor && ToLower(static_cast<uint8_t>(text[n - run - 1])) == 'w') {
      ++run;
    }
    if (run > 0 && run <= 3 && !IsWordChar(before(n - run))) hold = run;
  }
  scan.release_end = n - hold;
  scan.prev = before(scan.release_end);
  return scan;
}

}  // namespace turnpike::guard
