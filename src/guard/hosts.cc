#include "guard/hosts.h"

#include "guard/url_scan.h"

namespace turnpike::guard {
namespace {

constexpr size_t npos = std::string_view::npos;

uint8_t ClassOf(char byte) {
  const auto b = static_cast<uint8_t>(byte);
  return b < 0x80 ? b : kNonAscii;
}

bool IsLiteral(std::string_view host) {
  constexpr size_t kShortest = 3;  // [:]
  if (host.size() < kShortest || host.front() != '[' || host.back() != ']') return false;
  for (const char c : host.substr(1, host.size() - 2)) {
    if (HexValue(c) < 0 && c != ':' && c != '.') return false;
  }
  return true;
}

// Every label non-empty and made of label characters; calls `on_label` with each.
template <typename OnLabel>
bool ForEachLabel(std::string_view host, OnLabel on_label) {
  if (host.empty()) return false;
  for (;;) {
    const size_t dot = host.find('.');
    const std::string_view label = host.substr(0, dot);
    if (label.empty()) return false;
    for (const char c : label) {
      if (!IsLabelChar(ClassOf(c))) return false;
    }
    on_label(label);
    if (dot == npos) return true;
    host.remove_prefix(dot + 1);
  }
}

// Adds what a context's URL scan finds; keeps every URL (the scan's output is not used).
class Collector final : public HostJudge {
 public:
  explicit Collector(HostSet& hosts) : hosts_(hosts) {}
  bool Keep(std::string_view host, bool readable) override {
    if (readable) hosts_.Add(host);
    return true;
  }

 private:
  HostSet& hosts_;
};

}  // namespace

std::string NormalizeHost(std::string_view host) {
  while (!host.empty() && host.back() == '.') host.remove_suffix(1);
  std::string normal(host);
  for (char& c : normal) c = static_cast<char>(ToLower(static_cast<uint8_t>(c)));
  return normal;
}

bool IsWellFormedHost(std::string_view host) {
  return IsLiteral(host) || ForEachLabel(host, [](std::string_view) {});
}

bool IsDottedHost(std::string_view host) {
  size_t labels = 0;
  std::string_view last;
  const bool labelled = ForEachLabel(host, [&](std::string_view label) {
    ++labels;
    last = label;
  });
  if (!labelled || labels < 2 || last.size() < 2) return false;
  for (const char c : last) {
    if (!IsAlpha(ClassOf(c)) && ClassOf(c) != kNonAscii) return false;
  }
  return true;
}

void HostSet::Add(std::string_view host) {
  constexpr std::string_view kWildcard = "*.";
  if (host.starts_with(kWildcard)) host.remove_prefix(kWildcard.size());
  const size_t colon = host.rfind(':');
  if (colon != npos && host.find(']', colon) == npos) host = host.substr(0, colon);
  std::string normal = NormalizeHost(host);
  if (!normal.empty()) hosts_.insert(std::move(normal));
}

void HostSet::AddHostsIn(std::string_view text, TextForm form) {
  Collector collector(*this);
  UrlScanner scanner(form, collector, {});
  ScanOutput unused;
  scanner.Scan(text, 0, true, unused);
  // Bare dotted hosts: runs of label characters and dots; only a run with a dot is read.
  size_t run = npos;  // where the current run began
  bool dotted = false;
  for (size_t at = 0; at <= text.size();) {
    const Unit unit = at < text.size() ? DecodeUnit(text, at, form, true) : Unit{1, ' '};
    if (IsLabelChar(unit.ch) || unit.ch == '.') {
      if (run == npos) run = at;
      dotted = dotted || unit.ch == '.';
      at += unit.len;
      continue;
    }
    if (dotted) AddBareHost(text.substr(run, at - run), form);
    run = npos;
    dotted = false;
    at += unit.len;
  }
}

void HostSet::AddBareHost(std::string_view run, TextForm form) {
  HostBuilder builder;
  for (size_t at = 0; at < run.size();) {
    const Unit unit = DecodeUnit(run, at, form, true);
    if (unit.ch != '.' || !builder.empty()) builder.Add(unit);  // leading dots are the text's
    at += unit.len;
  }
  std::string host = NormalizeHost(builder.Take());
  if (IsDottedHost(host)) hosts_.insert(std::move(host));
}

bool HostSet::Contains(std::string_view host) const { return hosts_.find(host) != hosts_.end(); }

bool HostSet::ContainsDomainOf(std::string_view host) const {
  for (;;) {
    if (Contains(host)) return true;
    const size_t dot = host.find('.');
    if (dot == npos) return false;
    host.remove_prefix(dot + 1);
  }
}

}  // namespace turnpike::guard
