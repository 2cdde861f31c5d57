#include "guard/url_scan.h"

#include <algorithm>
#include <array>

#include "guard/hosts.h"

namespace turnpike::guard {
namespace {

constexpr size_t npos = std::string_view::npos;
constexpr std::string_view kHttps = "https";
constexpr std::string_view kWww = "www.";

// What each character may be to the scanner (kNonAscii is one of them).
enum CharClass : uint8_t {
  kAuthority = 1,       // in an authority run (RFC 3986: userinfo, host, port)
  kAuthorityTrail = 2,  // ends a run but is the sentence's when nothing follows (']' aside)
  kPathEnd = 4,         // ends a swallowed URL (a ')' closing no '(' of the URL as well)
  kPathTrail = 8,       // the sentence's at a swallowed URL's end
};

constexpr std::array<uint8_t, 256> Classes() {
  std::array<uint8_t, 256> classes{};
  const auto mark = [&classes](std::string_view chars, CharClass c) {
    for (const char ch : chars) classes[static_cast<uint8_t>(ch)] |= c;
  };
  for (int c = 0; c < 256; ++c) {
    if (IsAlnum(static_cast<uint8_t>(c))) classes[c] |= kAuthority;
    if (c <= ' ' || c == 0x7f) classes[c] |= kPathEnd;  // whitespace and controls
  }
  classes[kNonAscii] |= kAuthority;
  mark("-._~%!$&'()*+,;=:@[]", kAuthority);
  mark(".,;:!'*()_~", kAuthorityTrail);  // `_` and `~` of Markdown emphasis
  mark("<>\"`^{}|[]", kPathEnd);
  mark(".,:;!?'*_~", kPathTrail);
  return classes;
}
constexpr std::array<uint8_t, 256> kClasses = Classes();

bool Is(uint8_t c, CharClass cls) { return (kClasses[c] & cls) != 0; }
bool IsAuthorityTrail(uint8_t c, bool bracketed) {
  return Is(c, kAuthorityTrail) || (c == ']' && !bracketed);
}

bool IsSlash(uint8_t c) { return c == '/' || c == '\\'; }
bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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
      Found found = Authority(text, q, units, Form::kScheme, final);
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
      Found found = Authority(text, at, 0, Form::kWww, final);
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
    return units < 2 ? Found{} : Authority(text, q, units, Form::kSlashes, final);
  }
  return Is(unit.ch, kAuthority) ? Authority(text, at, 0, Form::kTarget, final) : Found{};
}

UrlScanner::Found UrlScanner::Authority(std::string_view text, size_t at, size_t units, Form form,
                                        bool final) const {
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
    if (!Is(u.ch, kAuthority)) break;
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
  const auto ends = [this](uint8_t c) { return Is(c, kPathEnd) || (c == ')' && depth_ == 0); };
  if (ends(unit.ch)) {
    mode_ = Mode::kText;
    return at;
  }
  if (!Is(unit.ch, kPathTrail)) {
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
    if (!Is(u.ch, kPathTrail)) {
      if (!ends(u.ch)) return q;
      mode_ = Mode::kText;
      return at;
    }
    q += u.len;
  }
  return q;  // a run this long goes with the URL: what is held stays bounded
}

}  // namespace turnpike::guard
