// Finding URLs in answer text, restartably, for the output guard (output_guard.h) and for
// collecting a context's hosts (hosts.h).
//
// What is a URL (a match starts at its first character; its host decides its fate):
//   scheme    `http:` or `https:` in any case, anywhere (also inside a word), then any number
//             of '/' or '\' (browsers read `https:evil.com` and `https:\\evil.com` as
//             `https://evil.com`), then an authority with a non-empty host
//   www       `www.` in any case at a word boundary (not after a letter, digit, '_' or non-ASCII
//             character), followed by a label character; the authority starts at the first `w`
//   Markdown  a link target, right after `](` (spaces and one '<' may come between): two or more
//             '/' or '\' then an authority (protocol-relative), or an authority whose host is a
//             dotted host (hosts.h), unless it begins with a scheme name and ':' (`mailto:`,
//             `evil.com:8080` is read by browsers as the scheme `evil.com:`); http(s) targets
//             are scheme URLs. Relative targets (`/docs`, `#top`, `docs/intro`) have no host;
//             one whose first segment looks like a host is taken for one (`](intro.md)`:
//             `.md` is a top-level domain), and replaced unless allowed.
// Bare words (`example.com` in prose) are not URLs. Not recognized either: other schemes
// (`ftp://`), a protocol-relative `//host` outside a Markdown target (an HTML attribute), a
// Markdown reference definition without a scheme (`[id]: //host`).
//
// The authority is the longest run of RFC 3986 authority characters (letters, digits,
// "-._~%!$&'()*+,;=:@[]" and non-ASCII); trailing ".,;:!'*()_~" (and ']' unless the run has a
// '[') are the sentence's, not the URL's. The host is what follows the run's last '@', up to a ':'
// (a port), or an IPv6 literal `[...]`, normalized (hosts.h). A run longer than kMaxUrlUnits
// units from the match's start cannot be read: the URL is replaced whatever its host.
//
// A replaced URL is swallowed to its end: after the authority, its path, query and fragment up
// to whitespace, a control character, one of `<>"`^{}|[]`, or a ')' with no '(' open in the
// URL (the one closing a Markdown target); trailing ".,:;!?'*_~" before that end are the
// sentence's. The marker is
// inserted once, where the URL began. Text after a kept URL's authority (its path) is scanned
// like any text, so a URL in a kept URL's query is judged on its own.
//
// UrlScanner runs over text that arrives in pieces: Run() decides as far as the text allows and
// says where it stopped; the caller passes the rest again with more text appended. Its decisions
// depend only on the logical text, never on where it was cut, and it never emits a byte it might
// later need to drop. ScanPlain() is the fast path: it releases text in which nothing can start
// a URL and says where the scanner must take over; Scan() runs the two together.
//
// Single-threaded; the judge is borrowed and must outlive the scanner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "guard/text_units.h"

namespace turnpike::guard {

inline constexpr size_t kMaxUrlUnits = 256;

// Decides each URL found. `readable` false: the authority was longer than kMaxUrlUnits (the
// URL is replaced whatever Keep returns; host is empty).
class HostJudge {
 public:
  virtual ~HostJudge() = default;
  // true keeps the URL; false replaces it with the marker.
  virtual bool Keep(std::string_view host, bool readable) = 0;
};

// A scan's output: ranges of the scanned text, kept as one view while they are contiguous,
// copied into its own buffer once they are not (a marker inserted, a URL dropped).
class ScanOutput {
 public:
  void Clear();
  void Copy(std::string_view range);   // a range of the scanned text
  void Insert(std::string_view text);  // bytes of its own (the marker)
  // Valid until the next Clear/Copy/Insert, and while the scanned text is.
  std::string_view view() const { return copied_ ? std::string_view(buffer_) : view_; }

 private:
  std::string_view view_;
  bool copied_ = false;
  std::string buffer_;
};

class UrlScanner {
 public:
  enum class Stop : uint8_t {
    kEnd,       // all of the text is decided
    kNeedMore,  // text[pos...] is undecided: pass it again with more text (or final)
    kHandover,  // plain() at pos >= handover_from: ScanPlain may go on from pos
  };
  struct Result {
    size_t pos;
    Stop stop;
  };

  // `marker` in the scanned text's form.
  UrlScanner(TextForm form, HostJudge& judge, std::string_view marker)
      : form_(form), judge_(judge), marker_(marker) {}

  // Scans text[from...), which continues the text scanned before (from is where the last call
  // stopped, or a ScanPlain's release_end), appending what is decided to `out`. `final`: the
  // text ends here (every URL is decided).
  Result Run(std::string_view text, size_t from, bool final, size_t handover_from, ScanOutput& out);

  // Run with the fast path: ScanPlain wherever the scanner is plain(), Run around what it
  // bails on, handing back past it. Decides exactly as Run alone; stops at kEnd or kNeedMore.
  Result Scan(std::string_view text, size_t from, bool final, ScanOutput& out);

  // Between URLs, no Markdown target open: ScanPlain's preconditions.
  bool plain() const { return mode_ == Mode::kText && target_ == 0; }
  uint8_t prev() const { return prev_; }
  void set_prev(uint8_t prev) { prev_ = prev; }
  // A new text: at a word boundary, no URL open.
  void Reset();

 private:
  enum class Mode : uint8_t { kText, kSwallow };
  enum class Form : uint8_t { kScheme, kWww, kSlashes, kTarget };
  struct Found;

  Found TryUrl(std::string_view text, size_t at, const Unit& unit, bool final) const;
  // The authority run from `at`; `units` were read since the match began (the cap counts them).
  Found Authority(std::string_view text, size_t at, size_t units, Form form, bool final) const;
  // In kSwallow: drops the URL's unit at `at`, or ends the URL. Returns the next position, or
  // npos when the text ran out before that was decided.
  size_t SwallowStep(std::string_view text, size_t at, const Unit& unit, bool final);
  void Advance(const Unit& unit);

  const TextForm form_;
  HostJudge& judge_;
  const std::string_view marker_;

  Mode mode_ = Mode::kText;
  uint8_t prev_ = ' ';  // the last unit's character before the next one to scan
  uint8_t target_ = 0;  // 1: right after "](" (or spaces after it); 2: after "](<"
  uint32_t depth_ = 0;  // kSwallow: '(' opened inside the URL and not yet closed
};

// ScanPlain's verdict on text[from...) for a scanner that is plain() with prev `prev`.
struct PlainScan {
  static constexpr size_t npos = std::string_view::npos;
  size_t release_end = 0;  // text[from, release_end) is plain text; the rest may start a URL
  size_t bail = npos;      // set: text at `bail` needs UrlScanner, run from release_end
  uint8_t prev = ' ';      // the last released unit's character (prev when none)
};

// The fast path: looks only for the bytes where a URL can become definite (':' after http(s),
// '.' after www, '(' after ']') and for escapes (`\uXXXX` of an ASCII character); holds back
// only a tail that is a prefix of `https` or a `www` at a word boundary. Conservative: it bails
// on anything the scanner must judge, and then the scanner decides as if ScanPlain never ran.
PlainScan ScanPlain(std::string_view text, size_t from, uint8_t prev, TextForm form);

}  // namespace turnpike::guard
