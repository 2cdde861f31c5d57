#include "guard/output_guard.h"

#include <algorithm>
#include <utility>

#include "common/json_escape.h"

namespace turnpike::guard {

GuardConfig::GuardConfig(HostSet allowlist, std::string_view marker)
    : allowlist_(std::move(allowlist)), marker_(marker) {
  AppendJsonEscaped(escaped_marker_, marker_);
}

void GuardReport::Add(std::string_view host) {
  ++replacements;
  if (host.empty() || hosts.size() >= kMaxHosts) return;
  if (std::find(hosts.begin(), hosts.end(), host) != hosts.end()) return;
  hosts.emplace_back(host);
}

OutputGuard::OutputGuard(const GuardConfig& config, const HostSet& context, GuardReport& report,
                         TextForm form)
    : config_(config),
      context_(context),
      report_(report),
      form_(form),
      scanner_(form, *this, config.marker(form)) {}

bool OutputGuard::Keep(std::string_view host, bool readable) {
  if (readable && IsWellFormedHost(host) &&
      (config_.allowlist().ContainsDomainOf(host) || context_.Contains(host))) {
    return true;
  }
  report_.Add(host);
  return false;
}

std::string_view OutputGuard::Push(std::string_view delta) {
  std::string_view text = delta;
  if (!pending_.empty()) {
    joined_.assign(pending_);
    joined_.append(delta);
    text = joined_;
  }
  // A character the text cuts waits for the rest of it: the scanner decides the same wherever
  // the text is cut, so it is simply fed later.
  const std::string_view whole = text.substr(0, text.size() - CutCharacterTail(text, form_));
  if (pending_.empty() && scanner_.plain()) {
    // The common case, without Run's bookkeeping: the delta itself, less a tail to hold.
    const PlainScan plain = ScanPlain(whole, 0, scanner_.prev(), form_);
    if (plain.bail == PlainScan::npos) {
      scanner_.set_prev(plain.prev);
      pending_.assign(text.substr(plain.release_end));
      return whole.substr(0, plain.release_end);
    }
  }
  const std::string_view out = Run(whole, false);
  pending_.append(text.substr(whole.size()));
  return out;
}

std::string_view OutputGuard::Finish() {
  if (pending_.empty()) {
    scanner_.Reset();
    return {};
  }
  joined_.swap(pending_);
  const std::string_view out = Run(joined_, true);
  scanner_.Reset();
  return out;
}

std::string_view OutputGuard::Whole(std::string_view text) {
  if (!pending_.empty()) {
    joined_.assign(pending_);
    joined_.append(text);
    text = joined_;
  }
  const std::string_view out = Run(text, true);
  scanner_.Reset();
  return out;
}

void OutputGuard::Reset() {
  pending_.clear();
  scanner_.Reset();
}

// `text` never aliases pending_.
std::string_view OutputGuard::Run(std::string_view text, bool final) {
  out_.Clear();
  pending_.clear();
  const UrlScanner::Result result = scanner_.Scan(text, 0, final, out_);
  if (result.stop == UrlScanner::Stop::kNeedMore) pending_.assign(text.substr(result.pos));
  return out_.view();
}

}  // namespace turnpike::guard
