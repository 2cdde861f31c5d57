// The canonical form of a JSON request, the input of a cache key's digest (key.h), and the
// rules that make a request uncacheable.
//
// Canonical form: compact JSON with every object's keys in byte order (at every depth),
// numbers normalised (an integral number prints as an integer whatever its spelling: 10,
// 10.0, 1e1 and 1.0E1 are all "10"; -0 is "0"; other numbers print in their shortest
// round-trip form), strings re-escaped one way. Defaults are applied first: a top-level key
// the request lacks takes the default's value, so `{}` and `{"size":10}` are one request when
// the door declares `size: 10` as a default. Ignored top-level keys are dropped (options that
// do not change the answer). Arrays keep their order (it is meaningful). Duplicate keys: the
// last one wins, as in Boost.JSON's parser and Elasticsearch's.
//
// Recursion follows the document's depth: give it documents from a parser with a depth limit
// (Boost.JSON's default is 32; the door's own parser has one).
// Threads: plain functions, no shared state. Errors: malformed JSON is kInvalidRequest (the
// door normally parsed the request already and answers its own error first).
#pragma once

#include <boost/json/fwd.hpp>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::cache {

struct CanonicalOptions {
  const boost::json::object* defaults = nullptr;  // top-level defaults; not owned
  std::span<const std::string_view> ignored;      // top-level keys left out of the key
};

// Canonical text of `json`. The top level need not be an object (then options do not apply).
Result<std::string> CanonicalJson(std::string_view json, const CanonicalOptions& options = {});

// The same for a parsed document.
std::string CanonicalJsonValue(const boost::json::value& value,
                               const CanonicalOptions& options = {});

// True if the request depends on the time it runs: Elasticsearch date math relative to `now`
// ("now", "now-1d/d", "now+1h") as a string value of a range bound (gt, gte, lt, lte, from,
// to) anywhere in the document (queries, filters, aggregation ranges). Conservative: any such
// bound whose string starts with "now" counts, whatever field it ranges over. Such a request
// must not be cached: its answer changes as time passes without any write.
bool UsesNowDateMath(const boost::json::value& request);

}  // namespace turnpike::cache
