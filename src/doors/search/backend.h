// The search door's backend contract: where an index lives (the embedded SQLite index,
// embedded/; Qdrant, qdrant/). The door parses and types every request (dsl.h, document.h),
// decides what the backend does natively from its Capabilities, does the rest itself over a
// bounded candidate set or refuses with a 400 naming the feature, runs the legs of a search
// concurrently and joins them into ES's answer.
//
// Legs. A search is up to four calls the door may run at once, each with its own deadline:
//   Page       the ordered hits of one page (from/size or search_after)
//   Count      how many documents match, up to a limit (track_total_hits)
//   Aggregate  the buckets of the request's aggs over the matching documents
//   Cover      how much of the index answered: shards and document count (`_shards`)
// A backend may answer a leg from the same statement as another; the contract is per leg.
//
// Tenancy: every call carries a Scope whose tenant comes from authentication (never from the
// body). A backend keys everything it stores by (tenant, index) and checks the tenant again:
// an index of another tenant is "not found", exactly as one that does not exist.
//
// Errors: Result<T> with es_error.h's convention (param = ES exception type). An unknown index
// is 404 index_not_found_exception; a missed deadline is kUpstreamTimeout (the door's join turns
// it into ES's partial answer: search_join.h; Page/Count may also set timed_out themselves);
// a backend that cannot be reached is kUnavailable (503). A backend never answers 400 for something
// the door validated.
//
// Threads and ownership: app/ builds one backend per worker with a BackendFactory (a Qdrant
// backend calls over that worker's upstream pool, shared with its other doors; the embedded one is
// a per-worker handle on one shared engine). Methods are called only on that worker's thread and
// complete on the calling coroutine's executor; none blocks the worker (blocking work runs on the
// backend's own threads). Concurrent calls from one worker are allowed (the legs). The door borrows
// the backend; it outlives every request.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/search/document.h"
#include "doors/search/mapping.h"
#include "doors/search/query.h"

namespace turnpike::upstream {
class Pool;
}  // namespace turnpike::upstream

namespace turnpike::search {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
template <typename T>
using Awaitable = boost::asio::awaitable<T>;

// What a backend does natively. The door does the rest over at most `max_candidates`
// documents (fetching them with a Page sorted by _id), or refuses with 400
// illegal_argument_exception "<feature> is not supported by the <name> backend".
struct Capabilities {
  bool bm25 = false;            // match/multi_match scored by BM25 (else: filter only)
  bool phrase = false;          // match_phrase
  bool prefix = false;          // prefix on keyword
  bool multi_key_sort = false;  // more than one sort key (+ the _id tie-breaker)
  bool keyword_sort = false;    // a sort key on a keyword field
  bool search_after = false;    // keyset paging on the full sort
  bool exact_count = false;     // Count beyond any limit
  bool terms_aggs = false;      // facets
  bool range_aggs = false;
  bool histogram_aggs = false;
  bool filtered_knn = false;  // exact kNN restricted to a filter
  int64_t max_candidates = 10'000;
  // GetIndex before a search (Scope::request != 0) may answer from a cache that another
  // replica's mapping change has not reached yet; the door re-reads (request 0) before it
  // refuses a request with a 400, so a field added elsewhere works at once.
  bool cached_mappings = false;
};

struct Scope {
  std::string_view tenant;  // from authentication; never empty
  std::string_view index;   // a valid ES index name (lowercase, no '/', ...)
  // Non-zero: the legs of one search share it (and only they), so a backend may evaluate the
  // query once for its page, count and aggregation legs. 0: no sharing. GetIndex with a
  // non-zero request (the search's own read) may be answered from a mapping cache
  // (Capabilities::cached_mappings); with 0 it always reads the index.
  uint64_t request = 0;
};

struct IndexInfo {
  Mapping mapping;
  int64_t doc_count = 0;   // as of the read: may be stale from a cached GetIndex (Cover is not)
  int64_t created_ms = 0;  // epoch ms
};

// One index as the admin API lists it (GET /admin/v1/search/indices).
struct IndexListing {
  std::string tenant;
  std::string index;
  int64_t doc_count = 0;
  int64_t created_ms = 0;  // epoch ms
};

struct Hit {
  std::string id;
  double score = 0;         // meaningful when the request is scored
  std::vector<Value> sort;  // the hit's value for each SortKey (monostate = missing)
  std::string source;       // filtered by SearchRequest::source (FilterSource); empty if disabled
};

struct Page {
  std::vector<Hit> hits;
  double max_score = 0;
  bool timed_out = false;
};

struct Total {
  int64_t value = 0;
  bool exact = true;  // false: "gte" (the limit was reached)
  bool timed_out = false;
};

struct Coverage {
  int shards_total = 1;
  int shards_successful = 1;
  int shards_failed = 0;
  int64_t doc_count = 0;
};

struct Bucket {
  Value key;              // terms: the value; histogram: double; range: monostate
  std::string range_key;  // range: "key" or "from-to"
  std::optional<double> from, to;
  int64_t doc_count = 0;
};

struct AggResult {
  std::string name;
  Aggregation::Kind kind = Aggregation::Kind::kTerms;
  FieldType type = FieldType::kKeyword;
  std::vector<Bucket> buckets;
  int64_t sum_other_doc_count = 0;  // terms
};

struct StoredDocument {
  std::string id;
  std::string source;
  int64_t version = 1;
  int64_t seq_no = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;  // "embedded", "qdrant": in errors and docs
  virtual const Capabilities& capabilities() const = 0;

  // Index management. CreateIndex: 400 resource_already_exists_exception if it exists.
  virtual Awaitable<Status> CreateIndex(Scope scope, Mapping mapping, Deadline deadline) = 0;
  virtual Awaitable<Result<IndexInfo>> GetIndex(Scope scope, Deadline deadline) = 0;
  virtual Awaitable<Status> DeleteIndex(Scope scope, Deadline deadline) = 0;
  // Every index of `tenant`, or of every tenant when it is empty (the operator's view), ordered
  // by tenant then index. Not a door operation: only the admin API calls it.
  virtual Awaitable<Result<std::vector<IndexListing>>> ListIndices(std::string tenant,
                                                                   Deadline deadline) = 0;
  // `mapping` is the merged mapping (MergeMapping already checked it).
  virtual Awaitable<Status> PutMapping(Scope scope, Mapping mapping, Deadline deadline) = 0;
  // Makes every acknowledged write visible to search (a no-op where writes are immediate).
  virtual Awaitable<Status> Refresh(Scope scope, Deadline deadline) = 0;

  // Documents. Write applies `ops` in order, one result per op (a failed op does not stop the
  // others); an unknown index fails the whole call with 404.
  virtual Awaitable<Result<std::vector<WriteResult>>> Write(Scope scope, std::vector<WriteOp> ops,
                                                            Deadline deadline) = 0;
  // nullopt: no such document.
  virtual Awaitable<Result<std::optional<StoredDocument>>> Get(Scope scope, std::string id,
                                                               Deadline deadline) = 0;

  // Search legs (see the top of the file). `request` satisfies query.h's invariants and only
  // asks for what capabilities() declares.
  virtual Awaitable<Result<Page>> Search(Scope scope, const SearchRequest& request,
                                         Deadline deadline) = 0;
  // Matches of `query` (or of knn when given: at most k), counted up to `up_to`.
  virtual Awaitable<Result<Total>> Count(Scope scope, const Query& query, const Knn* knn,
                                         int64_t up_to, Deadline deadline) = 0;
  virtual Awaitable<Result<std::vector<AggResult>>> Aggregate(Scope scope, const Query& query,
                                                              const std::vector<Aggregation>& aggs,
                                                              Deadline deadline) = 0;
  virtual Awaitable<Result<Coverage>> Cover(Scope scope, Deadline deadline) = 0;

  // The worker's loop stopped: release I/O objects.
  virtual void Shutdown() {}
};

// `pool`: the worker's upstream pool (core::WorkerCore::pool()), which outlives the backend.
using BackendFactory = std::function<std::unique_ptr<Backend>(
    int worker_index, boost::asio::io_context& context, upstream::Pool& pool)>;

}  // namespace turnpike::search
