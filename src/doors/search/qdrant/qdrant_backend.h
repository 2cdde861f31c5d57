// The search door's Qdrant backend (backend.h's contract) over Qdrant's REST API 1.19. An ES
// index of a tenant is one collection (layout.h); reads are Qdrant filters (filter.h) that
// always assert the tenant again; bodies come from requests.h.
//
// What Qdrant does natively, and what this backend does itself (the "gateway" side):
//   count               points/count (exact), concurrently with the page by the door
//   one numeric or date sort key (no search_after)
//                       scroll order_by on that key (range index), then the gateway fixes
//                       what Qdrant leaves open: ties (all points equal to the page's last
//                       value are fetched and ordered by _id), and points without a value
//                       (Qdrant leaves them out; ES puts them last): scrolled and appended
//   any other sort, search_after, keyword sort, several keys
//                       the matching points' ids and sort values (at most max_candidates,
//                       else 400 naming the feature) sorted in the gateway, then the page's
//                       sources fetched by id
//   knn                 points/query nearest with the filter (knn.filter AND the query);
//                       its k hits sorted in the gateway; ES scores from Qdrant's
//   terms aggs          facet (keyword, long, date, boolean); doubles over candidates
//   range aggs          one points/count per range
//   histogram aggs      over candidates
//   coverage            the collection's info: points and status (green/yellow: 1 of 1 shard)
//   match / multi_match / match_phrase / prefix (keyword)
//                       filters (text index with phrase matching, keyword index with
//                       prefixes), never scored: Qdrant has no BM25
//   scores (non-kNN) the constant score of the query's shape (qdrant_search.cc
//                   ConstantScore); ranking by a score that varies per document (optional
//                   should clauses) is refused (400 naming it)
//
// Mappings (mapping_cache.h; one cache per process, shared by the workers' backends). The
// door reads the index before every search (GetIndex with Scope::request != 0); that read is
// answered from the cache, so a warm search costs only its legs. Other GetIndex calls (index
// and mapping APIs, writes: Scope::request == 0) always read the collection and refresh the
// entry. Staleness, and what bounds it:
//   own index writes    CreateIndex, DeleteIndex, PutMapping drop the entry at once (every
//                       worker of this process)
//   another replica adds a field
//                       the door re-reads the index (request 0) before answering a 400
//                       (Capabilities::cached_mappings), so the new field works at once; the
//                       Cover leg of every search also refreshes a grown entry
//   another replica deletes the index
//                       a leg that finds no collection (Cover on every search; Count on a
//                       _count) drops the entry: the answer is 404 index_not_found_exception
//   another replica deletes and re-creates it with a field retyped
//                       searches: the Cover leg reads the collection anyway and compares its
//                       created_ms; a changed creation whose mapping no longer types the
//                       cached fields the same replaces the entry and fails that one search
//                       with 503 (retryable: the official clients retry it) rather than answer
//                       it against the old mapping. _count (no Cover leg): bounded by
//                       search.qdrant.mapping_ttl (default 5s; 0 = no cache). A race remains:
//                       two searches of the index in flight on this process when the re-created
//                       index is first seen: the second one's Cover finds the entry already
//                       replaced and answers with the old mapping; the next search is right.
//
// Round trips: a search leg is one call, plus one for a page's sources on the candidate path
// and one or two on the ordered path (ties, missing values). A write (Write) is three: the
// collection's mapping, the existing points, then upsert and/or delete. A warm search adds no
// call (the mapping cache); a cold one adds the collection read.
//
// Threads and ownership: one backend per worker (MakeBackendFactory), over that worker's
// upstream Pool (WorkerCore::pool(), shared with the worker's other doors: it outlives the
// backend); Settings are shared and immutable; the MappingCache is shared by
// every worker's backend (its own mutex; may be null: no cache).
#pragma once

#include <memory>

#include "doors/search/backend.h"
#include "doors/search/qdrant/client.h"
#include "doors/search/qdrant/mapping_cache.h"

namespace turnpike::search::qdrant {

class QdrantBackend : public Backend {
 public:
  QdrantBackend(upstream::Pool& pool, std::shared_ptr<const Settings> settings,
                std::shared_ptr<MappingCache> mappings = nullptr);
  ~QdrantBackend() override;

  std::string_view name() const override { return "qdrant"; }
  const Capabilities& capabilities() const override { return capabilities_; }

  Awaitable<Status> CreateIndex(Scope scope, Mapping mapping, Deadline deadline) override;
  Awaitable<Result<IndexInfo>> GetIndex(Scope scope, Deadline deadline) override;
  Awaitable<Status> DeleteIndex(Scope scope, Deadline deadline) override;
  // GET /collections, then each of the tenant's collections (one GET each: its points count
  // and creation time); another application's collections (a name CollectionName does not
  // make, or no es_mapping metadata) are left out.
  Awaitable<Result<std::vector<IndexListing>>> ListIndices(std::string tenant,
                                                           Deadline deadline) override;
  Awaitable<Status> PutMapping(Scope scope, Mapping mapping, Deadline deadline) override;
  Awaitable<Status> Refresh(Scope scope, Deadline deadline) override;
  Awaitable<Result<std::vector<WriteResult>>> Write(Scope scope, std::vector<WriteOp> ops,
                                                    Deadline deadline) override;
  Awaitable<Result<std::optional<StoredDocument>>> Get(Scope scope, std::string id,
                                                       Deadline deadline) override;
  Awaitable<Result<Page>> Search(Scope scope, const SearchRequest& request,
                                 Deadline deadline) override;
  Awaitable<Result<Total>> Count(Scope scope, const Query& query, const Knn* knn, int64_t up_to,
                                 Deadline deadline) override;
  Awaitable<Result<std::vector<AggResult>>> Aggregate(Scope scope, const Query& query,
                                                      const std::vector<Aggregation>& aggs,
                                                      Deadline deadline) override;
  Awaitable<Result<Coverage>> Cover(Scope scope, Deadline deadline) override;

  const Client& client() const { return client_; }

 private:
  struct Candidate;
  Awaitable<Result<std::vector<Candidate>>> Candidates(Scope scope, const std::string& filter,
                                                       const SearchRequest& request,
                                                       Deadline deadline);
  Awaitable<Result<Page>> OrderedPage(Scope scope, const std::string& filter,
                                      const SearchRequest& request, Deadline deadline);
  Awaitable<Result<Page>> KnnPage(Scope scope, const SearchRequest& request, Deadline deadline);
  Awaitable<Result<Page>> PageOf(Scope scope, std::vector<Candidate> sorted,
                                 const SearchRequest& request, Deadline deadline);
  Awaitable<Result<AggResult>> Aggregate1(Scope scope, const std::string& filter,
                                          const Aggregation& agg, Deadline deadline);

  // A call on the collection failed with 404: the index is gone, drop its cached mapping.
  void ForgetIfMissing(Scope scope, const Error& error);

  std::shared_ptr<const Settings> settings_;
  std::shared_ptr<MappingCache> mappings_;  // null: every GetIndex reads the collection
  Client client_;
  Capabilities capabilities_;
};

// One QdrantBackend per worker, over the worker's pool.
BackendFactory MakeBackendFactory(std::shared_ptr<const Settings> settings);

}  // namespace turnpike::search::qdrant
