#include "guard/url_scan.h"

#include <algorithm>
#include <array>

#include "guard/hosts.h"

namespace turnpike::guard {
namespace {

constexpr size_t npos = std::string_view::npos;
constexpr std::string_view kHttps = "https";
constexpr std::string_view kWww = "www.";

bool IsAuthorityChar(uint8_t c) {
  if (IsAlnum(c) || c == kNonAscii) return true;
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '%':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
    case ':':
    case '@':
    case '[':
    case ']':
      return true;
    default:
      return false;
  }
}

// Ends an authority run, but is the sentence's when nothing of the authority follows.
bool IsAuthorityTrail(uint8_t c, bool bracketed) {
  switch (c) {
    case '.':
    case ',':
    case ';':
    case ':':
    case '!':
    case '\'':
    case '*':
    case '(':
    case ')':
      return true;
    case ']':
      return !bracketed;
    default:
      return false;
  }
}

// Ends a swallowed URL (a ')' with no '(' open in it as well).
bool IsPathEnd(uint8_t c) {
  if (c <= ' ' || c == 0x7f) return true;  // whitespace and controls; kNonAscii is not
  switch (c) {
    case '<':
    case '>':
    case '"':
    case '`':
    case '^':
    case '{':
    case '}':
    case '|':
    case '[':
    case ']':
      return true;
    default:
      return false;
  }
}

bool IsPathTrail(uint8_t c) {
  switch (c) {
    case '.':
    case ',':
    case ':':
    case ';':
    case '!':
    case '?':
    case '\'':
    case '*':
    case '_':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsSlash(uint8_t c) { return c == '/' || c == '\\'; }
bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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

void ScanOutput::Clear() {
  view_ = {};
  copied_ = false;
  buffer_.clear();
}

void ScanOutput::Copy(std::string_view range) {
  if (range.empty()) return;
  if (!copied_) {
    if (view_.empty()) {
      view_ = range;
      return;
    }
    if (view_.data() + view_.size() == range.data()) {
      view_ = std::string_view(view_.data(), view_.size() + range.size());
      return;
    }
    buffer_.assign(view_);
    copied_ = true;
  }
  buffer_.append(range);
}

void ScanOutput::Insert(std::string_view text) {
  if (!copied_) {
    buffer_.assign(view_);
    copied_ = true;
  }
  buffer_.append(text);
}

struct UrlScanner::Found {
  enum class Kind : uint8_t { kNone, kNeedMore, kUrl };
  Kind kind = Kind::kNone;
  size_t end = 0;        // kUrl: the end of the authority, trailing punctuation excluded
  bool readable = true;  // kUrl: false when longer than kMaxUrlUnits
  uint8_t last = 0;      // kUrl: the authority's last character
  std::string host;      // kUrl, readable: normalized

  static Found NeedMore() {
    Found found;
    found.kind = Kind::kNeedMore;
    return found;
  }
  static Found Unreadable(size_t end) {
    Found found;
    found.kind = Kind::kUrl;
    found.end = end;
    found.readable = false;
    return found;
  }
};

void UrlScanner::Reset() {
  mode_ = Mode::kText;
  prev_ = ' ';
  target_ = 0;
  depth_ = 0;
}

UrlScanner::Result UrlScanner::Run(std::string_view text, size_t from, bool final,
                                   size_t handover_from, ScanOutput& out) {
  size_t at = from;
  size_t emit = from;  // text[emit, at) is decided and kept, not yet copied to `out`
  while (at < text.size()) {
    const Unit unit = DecodeUnit(text, at, form_, final);
    if (unit.len == 0) break;
    if (mode_ == Mode::kSwallow) {
      const size_t next = SwallowStep(text, at, unit, final);
      if (next == npos) break;
      at = emit = next;
      continue;
    }
    if (target_ == 0 && at >= handover_from) {
      out.Copy(text.substr(emit, at - emit));
      return {at, Stop::kHandover};
    }
    Found found = TryUrl(text, at, unit, final);
    if (found.kind == Found::Kind::kNeedMore) break;
    if (found.kind == Found::Kind::kNone) {
      Advance(unit);
      at += unit.len;
      continue;
    }
    target_ = 0;
    const bool keep = judge_.Keep(found.host, found.readable) && found.readable;
    if (keep) {
      prev_ = found.last;
      at = found.end;
      continue;
    }
    out.Copy(text.substr(emit, at - emit));
    out.Insert(marker_);
    mode_ = Mode::kSwallow;
    depth_ = 0;
    at = emit = found.end;
  }
  out.Copy(text.substr(emit, at - emit));
  return {at, at == text.size() ? Stop::kEnd : Stop::kNeedMore};
}

void UrlScanner::Advance(const Unit& unit) {
  if (target_ != 0) {
    if (target_ == 1 && unit.ch == '<') {
      target_ = 2;
    } else if (target_ != 1 || !IsSpace(unit.ch)) {
      target_ = 0;
    }
  }
  if (unit.ch == '(' && prev_ == ']') target_ = 1;
  prev_ = unit.ch;
}

UrlScanner::Found UrlScanner::TryUrl(std::string_view text, size_t at, const Unit& unit,
                                     bool final) const {
  if (unit.ch == 'h' || unit.ch == 'H') {
    // http: or https:, then the slashes.
    size_t q = at;
    size_t units = 0;
    bool matched = false;
    for (size_t i = 0; !matched; ++i) {
      if (q == text.size()) return final ? Found{} : Found::NeedMore();
      const Unit u = DecodeUnit(text, q, form_, final);
      if (u.len == 0) return Found::NeedMore();
      const uint8_t c = ToLower(u.ch);
      if (i < 4 || (i == 4 && c == 's')) {
        if (c != kHttps[i]) break;
      } else if (c == ':') {
        matched = true;
      } else {
        break;
      }
      q += u.len;
      ++units;
    }
    while (matched) {
      if (q == text.size()) {
        if (!final) return Found::NeedMore();
        break;
      }
      const Unit u = DecodeUnit(text, q, form_, final);
      if (u.len == 0) return Found::NeedMore();
      if (!IsSlash(u.ch)) break;
      q += u.len;
      if (++units > kMaxUrlUnits) return Found::Unreadable(q);
    }
    if (matched) {
      Found found = Authority(text, at, q, units, Form::kScheme, final);
      if (found.kind != Found::Kind::kNone) return found;
    }
  }
  if ((unit.ch == 'w' || unit.ch == 'W') && !IsWordChar(prev_)) {
    // www. and a label character.
    size_t q = at;
    bool matched = true;
    for (size_t i = 0; matched && i <= kWww.size(); ++i) {
      if (q == text.size()) return final ? Found{} : Found::NeedMore();
      const Unit u = DecodeUnit(text, q, form_, final);
      if (u.len == 0) return Found::NeedMore();
      matched = i < kWww.size() ? ToLower(u.ch) == kWww[i] : IsLabelChar(u.ch);
      q += u.len;
    }
    if (matched) {
      Found found = Authority(text, at, at, 0, Form::kWww, final);
      if (found.kind != Found::Kind::kNone) return found;
    }
  }
  if (target_ == 0) return {};
  if (IsSlash(unit.ch)) {
    // A protocol-relative target: two or more slashes.
    size_t q = at;
    size_t units = 0;
    for (;;) {
      if (q == text.size()) {
        if (!final) return Found::NeedMore();
        break;
      }
      const Unit u = DecodeUnit(text, q, form_, final);
      if (u.len == 0) return Found::NeedMore();
      if (!IsSlash(u.ch)) break;
      q += u.len;
      if (++units > kMaxUrlUnits) return Found::Unreadable(q);
    }
    return units < 2 ? Found{} : Authority(text, at, q, units, Form::kSlashes, final);
  }
  return IsAuthorityChar(unit.ch) ? Authority(text, at, at, 0, Form::kTarget, final) : Found{};
}

UrlScanner::Found UrlScanner::Authority(std::string_view text, size_t start, size_t at,
                                        size_t units, Form form, bool final) const {
  size_t q = at;
  size_t solid_end = at;  // the end of the run without its trailing punctuation
  size_t host_from = at;  // after the last '@'
  bool bracketed = false;
  uint8_t last = 0;
  // kTarget: whether the run begins with a scheme name and ':' (`mailto:`, `evil.com:8080`).
  bool in_name = true;
  bool name_ok = true;
  size_t name_len = 0;
  bool scheme = false;
  for (;;) {
    if (q == text.size()) {
      if (!final) return Found::NeedMore();
      break;
    }
    const Unit u = DecodeUnit(text, q, form_, final);
    if (u.len == 0) return Found::NeedMore();
    if (!IsAuthorityChar(u.ch)) break;
    if (++units > kMaxUrlUnits) return Found::Unreadable(q);
    if (u.ch == '@') host_from = q + u.len;
    if (u.ch == '[') bracketed = true;
    if (in_name && u.ch == ':') {
      in_name = false;
      scheme = name_ok && name_len > 0;
    } else if (in_name) {
      name_ok =
          name_ok && (name_len == 0 ? IsAlpha(u.ch)
                                    : IsAlnum(u.ch) || u.ch == '+' || u.ch == '-' || u.ch == '.');
      ++name_len;
    }
    q += u.len;
    if (!IsAuthorityTrail(u.ch, bracketed)) {
      solid_end = q;
      last = u.ch;
    }
  }
  if (form == Form::kTarget && scheme) return {};
  HostBuilder builder;
  bool literal = false;  // an IPv6 literal
  for (size_t h = host_from; h < solid_end;) {
    const Unit u = DecodeUnit(text, h, form_, true);
    if (h == host_from && u.ch == '[') literal = true;
    if (!literal && u.ch == ':') break;
    builder.Add(u);
    h += u.len;
    if (literal && u.ch == ']') break;
  }
  std::string host = NormalizeHost(builder.Take());
  if (host.empty() || (form == Form::kTarget && !IsDottedHost(host))) return {};
  return {Found::Kind::kUrl, solid_end, true, last, std::move(host)};
}

size_t UrlScanner::SwallowStep(std::string_view text, size_t at, const Unit& unit, bool final) {
  const auto ends = [this](uint8_t c) { return IsPathEnd(c) || (c == ')' && depth_ == 0); };
  if (ends(unit.ch)) {
    mode_ = Mode::kText;
    return at;
  }
  if (!IsPathTrail(unit.ch)) {
    if (unit.ch == '(') ++depth_;
    if (unit.ch == ')') --depth_;
    return at + unit.len;
  }
  // Trailing punctuation is the URL's only when the URL goes on after it.
  size_t q = at;
  for (size_t units = 0; units <= kMaxUrlUnits; ++units) {
    if (q == text.size()) {
      if (!final) return npos;
      mode_ = Mode::kText;
      return at;
    }
    const Unit u = DecodeUnit(text, q, form_, final);
    if (u.len == 0) return npos;
    if (!IsPathTrail(u.ch)) {
      if (!ends(u.ch)) return q;
      mode_ = Mode::kText;
      return at;
    }
    q += u.len;
  }
  return q;  // a run this long goes with the URL: what is held stays bounded
}

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
