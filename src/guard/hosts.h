// Hosts as the output guard compares them, and the two sets it consults: an agent's allowlist
// and the hosts a turn's context names.
//
// A host is compared in its normal form: ASCII letters lowercased, trailing dots removed; a port
// is never part of it (the scanner stops at ':'), nor userinfo (the host is what follows the
// last '@'). Non-ASCII hosts compare by their exact UTF-8 bytes: an IDN in the allowlist matches
// only the same Unicode spelling, not its `xn--` form (and the reverse).
//
// The rules:
//   allowlist  an entry allows that host and every subdomain: `example.com` allows
//              `example.com` and `docs.example.com`, not `badexample.com`; a leading `*.` is
//              the same entry (`*.example.com` allows `example.com` too); a port is ignored
//   context    a host named anywhere in the turn's context allows exactly that host: the host
//              of a URL found by the guard's own rules (url_scan.h), and any bare dotted host
//              (`example.com`, `docs.example.com` in prose or JSON); a dotted host is labels of
//              letters, digits, '-' or '_' (or non-ASCII) with a last label of two or more
//              letters, so `v1.2.3` and `e.g` are not hosts
// A host that is not well formed (an empty label, '%' or any character outside a label, other
// than an IPv6 literal in brackets) is never allowed.
//
// HostSet is a plain value: built once (an agent's allowlist, shared read-only by its turns; a
// turn's context hosts, grown as the turn's tool outputs arrive), read by the guard. Not
// synchronised: share it read-only, or use it on one thread.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>

#include "guard/text_units.h"

namespace turnpike::guard {

// ASCII lowercase, trailing dots removed.
std::string NormalizeHost(std::string_view host);

// A normalized host the guard may allow: labels (see above) or an IPv6 literal `[...]`.
bool IsWellFormedHost(std::string_view host);

// A normalized host that looks like a DNS name on its own: two or more labels, the last of two
// or more letters (or non-ASCII). What makes a bare word or a Markdown link target a host.
bool IsDottedHost(std::string_view host);

class HostSet {
 public:
  // Adds a host (normalized here); an allowlist entry's leading `*.` and `:port` are dropped.
  // An empty host is ignored.
  void Add(std::string_view host);
  // Adds every host `text` names (the context rule above).
  void AddHostsIn(std::string_view text, TextForm form);

  // Exactly this normalized host.
  bool Contains(std::string_view host) const;
  // This normalized host or one of its parent domains (the allowlist rule).
  bool ContainsDomainOf(std::string_view host) const;

  size_t size() const { return hosts_.size(); }
  bool empty() const { return hosts_.empty(); }

 private:
  void AddBareHost(std::string_view run, TextForm form);

  std::set<std::string, std::less<>> hosts_;
};

}  // namespace turnpike::guard
