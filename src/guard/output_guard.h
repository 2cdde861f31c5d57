// The output guard: URLs in an agent's answer whose host is neither in the agent's allowlist nor
// named in the turn's context are replaced by a marker, as the answer streams.
//
// What a URL is and how its end is found: url_scan.h. The allowlist and context rules: hosts.h.
// Each replaced URL becomes the marker once (default `[link removed]`), and is counted in the
// turn's GuardReport with its host, for the response's metadata and the call log.
//
// Streaming (the rule of the hot path: hold back only the shortest tail that could still become
// a forbidden pattern): Push() releases at once every byte that cannot be part of a URL, and
// holds back only a tail that could still start or be one: a prefix of `https:` (`see htt`), a
// `w`, `ww` or `www` at a word boundary, a URL whose authority has not ended yet
// (`https://exa`), trailing punctuation of a replaced URL, or a character cut by the end of the
// delta (an escape sequence, a UTF-8 sequence, a surrogate pair's first half). A URL is released
// the moment its authority ends and its host is allowed (the rest of it streams on as text);
// `[docs](` is released whole, only the target is held. Nothing released is ever retracted, the
// output never cuts a character (even where the input did), and it is the same however the text
// was cut into deltas. Finish() ends the text (the next non-text event, the
// answer's end) and resolves what is held.
//
// Cost: a delta in which nothing can start a URL is scanned once for the bytes that could make
// one definite (':', '.', '(', '\'), 16 bytes a step, and released as the same view without a
// copy (~15 ns for 64 bytes: bench/guard_bench.cc); the full scanner runs only around a
// candidate. Held text is bounded: a URL longer than kMaxUrlUnits units is replaced without
// reading its host.
//
// Ownership: GuardConfig is an agent's, immutable, shared by its turns (any thread, read-only).
// An OutputGuard belongs to one answer's text on the call's worker thread; it borrows the
// config, the turn's context hosts and the turn's report, which must outlive it. Errors: none;
// malformed escapes pass through as they came.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "guard/hosts.h"
#include "guard/text_units.h"
#include "guard/url_scan.h"

namespace turnpike::guard {

inline constexpr std::string_view kDefaultMarker = "[link removed]";

class GuardConfig {
 public:
  explicit GuardConfig(HostSet allowlist, std::string_view marker = kDefaultMarker);

  const HostSet& allowlist() const { return allowlist_; }
  // The marker in the given text form.
  std::string_view marker(TextForm form) const {
    return form == TextForm::kEscaped ? escaped_marker_ : marker_;
  }

 private:
  HostSet allowlist_;
  std::string marker_;
  std::string escaped_marker_;
};

// What a turn's guards replaced. One per turn; its guards add to it.
struct GuardReport {
  static constexpr size_t kMaxHosts = 16;

  int64_t replacements = 0;        // URLs replaced
  std::vector<std::string> hosts;  // distinct replaced hosts, first kMaxHosts, in order seen

  void Add(std::string_view host);  // one replacement (host empty: not readable)
};

class OutputGuard final : private HostJudge {
 public:
  OutputGuard(const GuardConfig& config, const HostSet& context, GuardReport& report,
              TextForm form = TextForm::kEscaped);

  // The next delta of the text. Returns what may be released now, possibly empty: `delta`
  // itself (or a part of it) when nothing changed, else the guard's own buffer; valid until the
  // next call on this guard, and while `delta` is.
  std::string_view Push(std::string_view delta);
  // The text ends: returns the held tail, resolved (same lifetime). The guard is then ready for
  // a new text.
  std::string_view Finish();
  // A whole text at once (Push then Finish).
  std::string_view Whole(std::string_view text);
  // Drops anything held and starts a new text.
  void Reset();

  // Bytes held back now (input bytes, in the guard's form).
  size_t held() const { return pending_.size(); }

 private:
  bool Keep(std::string_view host, bool readable) override;
  std::string_view Run(std::string_view text, bool final);

  const GuardConfig& config_;
  const HostSet& context_;
  GuardReport& report_;
  const TextForm form_;
  UrlScanner scanner_;
  std::string pending_;  // held input: the start of what is undecided
  std::string joined_;   // pending_ and a delta, when something was held
  ScanOutput out_;
};

}  // namespace turnpike::guard
