#include "doors/search/search_join.h"

#include <algorithm>

#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

bool TimedOut(const Error& e) { return e.code == ErrorCode::kUpstreamTimeout; }

// The cover leg reports on the index's health: when it cannot (a timeout, an unreachable or
// misbehaving backend) the shard is reported failed. An unknown index is the request's error,
// and so is one the cover leg says search-wide (search_phase_execution_exception: the Qdrant
// backend found the index re-created under the search's cached mapping, so the other legs'
// answers cannot be trusted either).
bool ShardFailure(const Error& e) {
  if (e.param == kSearchPhase) return false;
  return e.code == ErrorCode::kUpstreamTimeout || e.code == ErrorCode::kUnavailable ||
         e.code == ErrorCode::kUpstreamBadResponse || e.code == ErrorCode::kInternal;
}

// How many documents the page proves to match: its hits and, on a from/size page with hits,
// the `from` documents before them.
int64_t DocumentsSeen(const SearchRequest& r, const std::optional<Page>& page) {
  if (!page || page->hits.empty()) return 0;
  const auto hits = static_cast<int64_t>(page->hits.size());
  return r.search_after.empty() ? r.from + hits : hits;
}

std::string Legs(const std::vector<std::string>& legs) {
  std::string out;
  for (const std::string& leg : legs) out += (out.empty() ? "[" : ", [") + leg + "]";
  return out;
}

}  // namespace

Result<Joined> JoinLegs(const SearchRequest& r, LegResults legs) {
  Joined j;
  if (legs.page) {
    if (legs.page->ok()) {
      j.page = std::move(**legs.page);
      j.timed_out |= j.page->timed_out;
    } else if (TimedOut(legs.page->error())) {
      j.page = Page{};
      j.timed_out_legs.emplace_back("page");
    } else {
      return legs.page->error();
    }
  }
  if (legs.aggs) {
    if (legs.aggs->ok()) {
      j.aggs = std::move(**legs.aggs);
    } else if (TimedOut(legs.aggs->error())) {
      j.aggs.emplace();
      for (const Aggregation& a : r.aggs) {
        AggResult empty;
        empty.name = a.name;
        empty.kind = a.kind;
        empty.type = a.type;
        j.aggs->push_back(std::move(empty));
      }
      j.timed_out_legs.emplace_back("aggs");
    } else {
      return legs.aggs->error();
    }
  }
  if (legs.total) {
    if (legs.total->ok()) {
      j.total = **legs.total;
      j.timed_out |= j.total->timed_out;
    } else if (TimedOut(legs.total->error())) {
      j.total = Total{std::min(DocumentsSeen(r, j.page), r.track_total_up_to), false, true};
      j.timed_out_legs.emplace_back("count");
    } else {
      return legs.total->error();
    }
  }
  if (legs.coverage.ok()) {
    j.coverage = *legs.coverage;
  } else if (ShardFailure(legs.coverage.error())) {
    j.coverage.shards_successful = 0;
    j.coverage.shards_failed = 1;
    j.shard_failure = legs.coverage.error();
  } else {
    return legs.coverage.error();
  }
  j.timed_out |= !j.timed_out_legs.empty();
  if (r.allow_partial_results) return j;
  if (j.timed_out) {
    const std::string which =
        j.timed_out_legs.empty() ? "a leg" : "the " + Legs(j.timed_out_legs) + " leg";
    return EsError(kSearchPhase,
                   "Time exceeded: " + which +
                       " missed the search's deadline and allow_partial_search_results is false",
                   ErrorCode::kUpstreamTimeout);
  }
  if (j.shard_failure) {
    Error e = *j.shard_failure;
    e.param = std::string(kSearchPhase);
    e.message = "Partial shards failure (allow_partial_search_results is false): " + e.message;
    return e;
  }
  if (j.coverage.shards_failed > 0) {
    return EsError(kSearchPhase, "Partial shards failure (allow_partial_search_results is false)",
                   ErrorCode::kUnavailable);
  }
  return j;
}

}  // namespace turnpike::search
