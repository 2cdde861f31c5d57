// ScanPlain, the guard's fast path (url_scan.h): most deltas hold nothing that can start a URL,
// and only the bytes that could make one definite need a look.
#include <algorithm>
#include <array>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The first anchor at or after `i`, or text.size(). Sixteen bytes a step where SSE2 is there
// (x86-64 always): a clean 64-byte delta is four compares instead of 64 lookups.
size_t NextAnchor(std::string_view text, size_t i, TextForm form) {
  const size_t n = text.size();
#if defined(__SSE2__)
  constexpr size_t kStep = 16;
  const __m128i colon = _mm_set1_epi8(':');
  const __m128i dot = _mm_set1_epi8('.');
  const __m128i paren = _mm_set1_epi8('(');
  const __m128i backslash = _mm_set1_epi8(form == TextForm::kEscaped ? '\\' : ':');
  for (; i + kStep <= n; i += kStep) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, colon), _mm_cmpeq_epi8(bytes, dot)),
                     _mm_or_si128(_mm_cmpeq_epi8(bytes, paren), _mm_cmpeq_epi8(bytes, backslash)));
    const int mask = _mm_movemask_epi8(hits);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  const std::array<bool, 256>& anchors = form == TextForm::kEscaped ? kEscapedAnchors : kRawAnchors;
  while (i < n && !anchors[static_cast<uint8_t>(text[i])]) ++i;
  return i;
}

}  // namespace

UrlScanner::Result UrlScanner::Scan(std::string_view text, size_t from, bool final,
                                    ScanOutput& out) {
  size_t at = from;
  size_t handover_from = from;  // Run hands back no earlier than this
  for (;;) {
    if (plain() && at >= handover_from) {
      const PlainScan plain = ScanPlain(text, at, prev_, form_);
      out.Copy(text.substr(at, plain.release_end - at));
      prev_ = plain.prev;
      at = plain.release_end;
      if (plain.bail == PlainScan::npos) {
        if (!final) return {at, at == text.size() ? Stop::kEnd : Stop::kNeedMore};
        handover_from = PlainScan::npos;  // Run resolves the tail
      } else {
        handover_from = plain.bail + 1;  // past what ScanPlain bailed on
      }
    }
    const Result result = Run(text, at, final, handover_from, out);
    if (result.stop != Stop::kHandover) return result;
    at = result.pos;
  }
}

PlainScan ScanPlain(std::string_view text, size_t from, uint8_t prev, TextForm form) {
  const size_t n = text.size();
  size_t escape_end = 0;  // the end of the last escape sequence, and its character
  uint8_t escape_ch = 0;
  PlainScan scan;
  // The character before text[at], for `at` at or after the last escape (or `from`).
  const auto before = [&](size_t at) {
    if (at == from) return prev;
    return at == escape_end ? escape_ch : ClassOfByte(text[at - 1]);
  };
  for (size_t i = from;; ++i) {
    i = NextAnchor(text, i, form);
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
      // No URL can be open before its anchor's lookback (`https` is the longest), and those
      // bytes hold no escape: what lies before them is released.
      scan.bail = i;
      scan.release_end = std::max({from, escape_end, i - std::min(i, kHttps.size())});
      scan.prev = before(scan.release_end);
      return scan;
    }
  }
  const size_t floor = std::max(from, escape_end);  // text[floor, n) is single-byte units
  size_t hold = 0;
  // Only a tail ending in a letter of `https` or `w` can be held.
  const uint8_t last = n > floor ? ToLower(static_cast<uint8_t>(text[n - 1])) : 0;
  const bool could_hold = last == 'h' || last == 't' || last == 'p' || last == 's' || last == 'w';
  for (size_t len = std::min(kHttps.size(), n - floor); could_hold && len > 0 && hold == 0; --len) {
    if (EndsWithWord(text, n, kHttps.substr(0, len))) hold = len;
  }
  if (could_hold && hold == 0) {
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
