// The search door's request targets: the path under the prefix and the query string, parsed
// into the operation, index, id and options. A path outside the supported set is a 400 in ES's
// shape (never ignored); a supported path with another method is a 405.
//
// Pure, no I/O; the views point into the request target.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <optional>
#include <ostream>  // Boost 1.81 Beast's verb.hpp needs it first
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "doors/search/dsl.h"

namespace turnpike::search {

enum class Op {
  kInfo,     // GET|HEAD /
  kIndex,    // PUT|HEAD|GET|DELETE /{index}
  kMapping,  // GET|PUT /{index}/_mapping
  kRefresh,  // POST|GET /{index}/_refresh
  kDocNew,   // POST /{index}/_doc
  kDoc,      // PUT|POST|GET|HEAD|DELETE /{index}/_doc/{id}
  kCreate,   // PUT|POST /{index}/_create/{id}
  kUpdate,   // POST /{index}/_update/{id}
  kBulk,     // POST|PUT /_bulk, /{index}/_bulk
  kSearch,   // GET|POST /{index}/_search
  kCount,    // GET|POST /{index}/_count
  kMsearch,  // GET|POST /_msearch, /{index}/_msearch
};
std::string_view OpLabel(Op op);

struct Target {
  Op op = Op::kInfo;
  std::string index;  // percent-decoded; empty for root operations
  std::string id;
  UrlOptions url;
  bool refresh = false;    // ?refresh=true|wait_for (writes are visible at once anyway)
  bool op_create = false;  // ?op_type=create
  bool pretty = false;
};

// `rest`: the path after the prefix, without its leading '/'; `query`: after '?', or empty.
Result<Target> ParseTarget(boost::beast::http::verb method, std::string_view rest,
                           std::string_view query);

// ES's index name rules: lowercase, not starting with '_', '-' or '+', none of
// \ / * ? " < > | , # : or space, not "." or "..", at most 255 bytes.
Status ValidIndexName(std::string_view name);

}  // namespace turnpike::search
