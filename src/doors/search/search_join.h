// The join of a search's legs (backend.h: Page, Count, Aggregate, Cover) into what the answer
// says, following Elasticsearch's partial answers. A leg that missed its deadline
// (kUpstreamTimeout) does not fail the search:
//
//   page timed out      no hits (ES answers with the hits it has: none), timed_out: true
//   count timed out     hits.total is a lower bound: {"value": <documents seen>, "relation":
//                       "gte"}, where documents seen = from + the page's hits when the page
//                       has any (its order proves that many match), else 0; timed_out: true.
//                       (ES keeps `hits.total` present, counting what it collected, often as
//                       "eq"; "gte" says only what is known. The official clients read it.)
//   aggs timed out      every requested aggregation, with no buckets; timed_out: true
//   cover failed        (timed out, unreachable, a bad answer) `_shards` says 0 of 1
//                       successful, 1 failed, with ES's `failures` entry naming the reason
//                       (but a cover error of ES type search_phase_execution_exception, the
//                       index re-created under the search, fails the search)
//
// unless the request set allow_partial_search_results=false: then the partial answer is an
// error instead, 504 search_phase_execution_exception for a timeout (ES's
// SearchTimeoutException is a 504) or the failed leg's own status. Any other leg error (an
// unknown index, a refused feature) fails the search with that error, as before. A joined
// answer that is partial (timed_out, or a failed shard) is never cached: `complete()`.
//
// Pure, single-threaded; the door calls it once its legs have all answered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "doors/search/backend.h"

namespace turnpike::search {

// What each leg answered; nullopt: the leg was not run (size 0, totals not tracked, no aggs).
struct LegResults {
  std::optional<Result<Page>> page;
  std::optional<Result<Total>> total;
  std::optional<Result<std::vector<AggResult>>> aggs;
  Result<Coverage> coverage = Coverage{};
};

struct Joined {
  std::optional<Page> page;    // nullopt: no page leg
  std::optional<Total> total;  // nullopt: totals not tracked
  std::optional<std::vector<AggResult>> aggs;
  Coverage coverage;
  std::optional<Error> shard_failure;  // the cover leg's error, for `_shards.failures`
  bool timed_out = false;
  std::vector<std::string> timed_out_legs;  // "page", "count", "aggs": for errors and logs

  bool complete() const { return !timed_out && !shard_failure && coverage.shards_failed == 0; }
};

Result<Joined> JoinLegs(const SearchRequest& request, LegResults legs);

}  // namespace turnpike::search
