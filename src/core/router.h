// The router: method + path -> the door and route that answer it. Data built once at start-up
// (app/ adds every door's routes), then only read; a lookup walks the path's segments once, with
// no regex and no allocation.
//
// A pattern is "/" followed by segments separated by "/". A segment is one of
//   literal      "v1", "chat", "_search"            equal bytes
//   parameter    "{id}"                             any non-empty segment; its value is kept
//   action       "{model}:streamGenerateContent"    a parameter followed by a literal suffix
//                                                   (Gemini's "models/{model}:generateContent")
//   rest         "**" (last only)                   every remaining segment, also none after a
//                                                   trailing "/": a whole door under a prefix
//                                                   ("/es/**", "/admin/**")
// Precedence at each segment: a literal, then an action (longest suffix first), then a
// parameter, then a rest; a branch that fails deeper is backtracked, so "/v1/models" and
// "/v1/{x}/items" can coexist. Several routes may share one pattern with different methods.
//
// Outcomes: kFound (the route whose method set holds the method); kMethodNotAllowed (the path
// matched, no route on it takes the method: `allow` lists those that do, for the Allow header
// and the door's 405); kNotFound (no pattern matched: the fallback door answers). A kFound
// reached through a "**" route after a more specific pattern matched the path but not the
// method keeps that pattern's `allow`, so a door that owns a prefix (admin: its token comes
// before any 404 or 405) can answer the 405 itself.
//
// Limits: kMaxParams parameters per pattern (Build throws std::invalid_argument beyond, or on a
// malformed pattern, a duplicate method on one pattern, or "**" not last).
// Thread safety: Build on one thread at start-up; Match is const and safe from any thread.
#pragma once

#include <array>
#include <boost/beast/http/verb.hpp>
#include <cstdint>
#include <ostream>  // before Beast: its string_view needs it (Boost 1.81)
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::core {

using Verb = boost::beast::http::verb;

// A set of HTTP methods; empty = any method.
class MethodSet {
 public:
  MethodSet() = default;
  MethodSet(std::initializer_list<Verb> verbs) {
    for (Verb v : verbs) bits_ |= Bit(v);
  }
  bool any() const { return bits_ == 0; }
  bool Has(Verb v) const { return bits_ == 0 || (bits_ & Bit(v)) != 0; }
  uint64_t bits() const { return bits_; }

 private:
  static uint64_t Bit(Verb v) { return uint64_t{1} << (static_cast<unsigned>(v) & 63u); }
  uint64_t bits_ = 0;
};

// One route a door declares.
struct RouteSpec {
  std::string pattern;
  MethodSet methods;  // empty: every method (the door checks for itself)
  std::string label;  // the `route` label of turnpike_requests_total
  int route = 0;      // the door's own id for it, handed back in RouteMatch
};

inline constexpr size_t kMaxParams = 4;

struct RouteMatch {
  enum class Outcome : uint8_t { kFound, kMethodNotAllowed, kNotFound };
  Outcome outcome = Outcome::kNotFound;
  uint16_t door = 0;       // the fallback door when kNotFound
  uint16_t slot = 0;       // the metrics route slot (label); the "other" slot when kNotFound
  int route = -1;          // the door's route id (kFound), -1 otherwise
  std::string_view allow;  // kMethodNotAllowed, and kFound through "**" (above): "GET, HEAD"
  std::string_view rest;   // what "**" matched, without the leading "/" ("" when none)

  // The value of parameter `name` ("" if the route has none of that name).
  std::string_view Param(std::string_view name) const;

  // Filled by Match.
  std::array<std::string_view, kMaxParams> values{};
  const std::vector<std::string>* names = nullptr;
};

class Router {
 public:
  // `fallback_door` answers paths no pattern matches (and renders errors for them).
  explicit Router(uint16_t fallback_door);

  // Adds a door's routes; `door` is its index in the caller's door list.
  void Add(uint16_t door, const std::vector<RouteSpec>& routes);

  // `path` is the request target without its query.
  RouteMatch Match(Verb method, std::string_view path) const;

  // Metrics route labels, indexed by RouteMatch::slot; the last one is "other".
  const std::vector<std::string>& labels() const { return labels_; }
  uint16_t other_slot() const { return static_cast<uint16_t>(labels_.size() - 1); }

 private:
  struct Route {
    MethodSet methods;
    uint16_t door = 0;
    uint16_t slot = 0;
    int route = 0;
    std::vector<std::string> names;  // parameter names in order
  };
  struct Edge {
    std::string text;  // the literal, or an action's suffix ("" for a bare parameter)
    uint32_t child = 0;
  };
  struct Node {
    std::vector<Edge> literals;
    std::vector<Edge> params;      // actions (longest suffix first), then the bare parameter
    std::vector<uint32_t> routes;  // ending here
    std::vector<uint32_t> rest;    // "**" here
    std::string allow;             // the methods of `routes`, for a 405
    std::string rest_allow;
  };
  struct Walk;

  uint32_t Child(uint32_t node, std::string_view segment, std::vector<std::string>& names);
  uint16_t Slot(const std::string& label);
  bool Descend(uint32_t node, std::string_view path, Walk& walk) const;
  bool Settle(const std::vector<uint32_t>& routes, const std::string& allow, Walk& walk) const;

  uint16_t fallback_door_;
  std::vector<Node> nodes_;
  std::vector<Route> routes_;
  std::vector<std::string> labels_;
};

}  // namespace turnpike::core
