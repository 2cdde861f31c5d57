#include "core/router.h"

#include <algorithm>
#include <stdexcept>

namespace turnpike::core {
namespace {

constexpr std::string_view kRest = "**";
constexpr std::string_view kOtherLabel = "other";

bool IsParam(std::string_view segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.find('}') != std::string::npos;
}

// HEAD is implied by GET (RFC 9110 9.3.2), so a GET route's Allow says "GET".
void AppendAllow(std::string& allow, MethodSet methods) {
  for (unsigned v = 0; v < 64; ++v) {
    if ((methods.bits() & (uint64_t{1} << v)) == 0) continue;
    const Verb verb = static_cast<Verb>(v);
    if (verb == Verb::head && methods.Has(Verb::get)) continue;
    const std::string_view name = boost::beast::http::to_string(verb);
    if (allow.find(name) != std::string::npos) continue;
    if (!allow.empty()) allow += ", ";
    allow += name;
  }
}

}  // namespace

struct Router::Walk {
  Verb method;
  RouteMatch& match;
  size_t count = 0;  // parameters taken so far
  bool not_allowed = false;
};

std::string_view RouteMatch::Param(std::string_view name) const {
  if (names == nullptr) return {};
  for (size_t i = 0; i < names->size() && i < values.size(); ++i) {
    if ((*names)[i] == name) return values[i];
  }
  return {};
}

Router::Router(uint16_t fallback_door) : fallback_door_(fallback_door), nodes_(1) {
  labels_.emplace_back(kOtherLabel);
}

uint16_t Router::Slot(const std::string& label) {
  // "other" stays last: a new label goes before it.
  auto it = std::find(labels_.begin(), labels_.end() - 1, label);
  if (it != labels_.end() - 1) return static_cast<uint16_t>(it - labels_.begin());
  labels_.insert(labels_.end() - 1, label);
  return static_cast<uint16_t>(labels_.size() - 2);
}

uint32_t Router::Child(uint32_t node, std::string_view segment, std::vector<std::string>& names) {
  const bool param = IsParam(segment);
  std::string text(segment);
  if (param) {
    const size_t close = segment.find('}');
    names.emplace_back(segment.substr(1, close - 1));
    text = std::string(segment.substr(close + 1));
    if (names.back().empty()) throw std::invalid_argument("a parameter needs a name");
  } else if (segment.find_first_of("{}") != std::string_view::npos) {
    throw std::invalid_argument("malformed segment '" + std::string(segment) + "'");
  }
  auto& edges = param ? nodes_[node].params : nodes_[node].literals;
  for (const Edge& e : edges) {
    if (e.text == text) return e.child;
  }
  const auto child = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back();  // invalidates `edges`: look the node up again
  auto& again = param ? nodes_[node].params : nodes_[node].literals;
  again.push_back(Edge{std::move(text), child});
  if (param) {
    // Longest suffix first; the bare parameter (empty suffix) last.
    std::stable_sort(again.begin(), again.end(),
                     [](const Edge& a, const Edge& b) { return a.text.size() > b.text.size(); });
  }
  return child;
}

void Router::Add(uint16_t door, const std::vector<RouteSpec>& routes) {
  for (const RouteSpec& spec : routes) {
    std::string_view pattern = spec.pattern;
    if (pattern.empty() || pattern.front() != '/') {
      throw std::invalid_argument("route pattern must start with '/': " + spec.pattern);
    }
    pattern.remove_prefix(1);
    Route route{spec.methods, door, Slot(spec.label), spec.route, {}};
    uint32_t node = 0;
    bool rest = false;
    for (;;) {
      const size_t slash = pattern.find('/');
      const std::string_view segment = pattern.substr(0, slash);
      if (segment == kRest) {
        if (slash != std::string_view::npos) {
          throw std::invalid_argument("'**' must be last: " + spec.pattern);
        }
        rest = true;
        break;
      }
      node = Child(node, segment, route.names);
      if (slash == std::string_view::npos) break;
      pattern.remove_prefix(slash + 1);
    }
    if (route.names.size() > kMaxParams) {
      throw std::invalid_argument("too many parameters: " + spec.pattern);
    }
    Node& n = nodes_[node];
    auto& list = rest ? n.rest : n.routes;
    for (uint32_t other : list) {
      if ((routes_[other].methods.bits() & spec.methods.bits()) != 0 ||
          routes_[other].methods.any() || spec.methods.any()) {
        throw std::invalid_argument("two routes take one method on " + spec.pattern);
      }
    }
    list.push_back(static_cast<uint32_t>(routes_.size()));
    AppendAllow(rest ? n.rest_allow : n.allow, spec.methods);
    routes_.push_back(std::move(route));
  }
}

bool Router::Settle(const std::vector<uint32_t>& routes, const std::string& allow,
                    Walk& walk) const {
  for (uint32_t index : routes) {
    const Route& r = routes_[index];
    if (!r.methods.Has(walk.method)) continue;
    RouteMatch& m = walk.match;
    m.outcome = RouteMatch::Outcome::kFound;
    m.door = r.door;
    m.slot = r.slot;
    m.route = r.route;
    m.names = &r.names;
    return true;
  }
  if (!routes.empty() && !walk.not_allowed) {
    // Remember the first path that matched without the method; a later branch may still fit.
    walk.not_allowed = true;
    const Route& r = routes_[routes.front()];
    walk.match.door = r.door;
    walk.match.slot = r.slot;
    walk.match.route = r.route;
    walk.match.allow = allow;
  }
  return false;
}

bool Router::Descend(uint32_t index, std::string_view path, Walk& walk) const {
  const Node& node = nodes_[index];
  const size_t slash = path.find('/');
  const bool last = slash == std::string_view::npos;
  const std::string_view segment = path.substr(0, slash);
  const std::string_view after = last ? std::string_view{} : path.substr(slash + 1);
  auto next = [&](uint32_t child) {
    return last ? Settle(nodes_[child].routes, nodes_[child].allow, walk)
                : Descend(child, after, walk);
  };
  for (const Edge& e : node.literals) {
    if (e.text == segment && next(e.child)) return true;
  }
  if (walk.count < kMaxParams) {
    for (const Edge& e : node.params) {
      if (segment.size() <= e.text.size() || !segment.ends_with(e.text)) continue;
      walk.match.values[walk.count++] = segment.substr(0, segment.size() - e.text.size());
      if (next(e.child)) return true;
      --walk.count;
    }
  }
  if (!node.rest.empty() && Settle(node.rest, node.rest_allow, walk)) {
    walk.match.rest = path;
    return true;
  }
  return false;
}

RouteMatch Router::Match(Verb method, std::string_view path) const {
  RouteMatch match;
  match.door = fallback_door_;
  match.slot = other_slot();
  if (path.empty() || path.front() != '/') return match;
  Walk walk{method, match};
  if (Descend(0, path.substr(1), walk)) return match;
  if (walk.not_allowed) {
    match.outcome = RouteMatch::Outcome::kMethodNotAllowed;
    match.names = nullptr;
    return match;
  }
  match.door = fallback_door_;
  match.slot = other_slot();
  match.route = -1;
  match.rest = {};
  return match;
}

}  // namespace turnpike::core
