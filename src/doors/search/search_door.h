// The search door: Elasticsearch's REST API (the subset in target.h) under a prefix ("/es" by
// default, so the official client takes `node: 'http://host:8080/es'`), over a Backend
// (backend.h) made per worker by app/.
//
// A request: WorkerCore::Start; the target parsed (a path or parameter outside the subset is
// a 400, never ignored); the governance filter (keys as `Authorization: ApiKey <key>`,
// `Bearer <key>` or `x-api-key`; RPM; budgets; billed as the model "search"); the operation,
// whose index is looked up under the key's tenant (never one named in the body); the answer,
// with `X-Elastic-Product: Elasticsearch` and the media type the client asked for
// (`application/vnd.elasticsearch+json; compatible-with=8|9`, else application/json); Finish
// (one call-log row). Errors are ES's {"error":{...},"status":N} with the matching status. A
// request the chain answers (a refusal: 401, 403, 429 status_exception...; or a filter's own
// answer) is answered by WorkerCore::AnswerFromChain in that shape; the governance filter's
// x-ratelimit-* (and Retry-After on a rate refusal) are on every answer of a key with limits.
//
// With `server.server_timing` on, the answer carries a second Server-Timing header with the
// search's phases (mapping, page, count, aggs, cover, join, render) besides the core's.
//
// With a response cache (SearchDoorOptions::cache, cache/cache.h): `_search`, `_count` and each
// `_msearch` search are looked up under (tenant, index, digest of the canonical request: the
// body with defaults applied and keys ordered, the URL options, the operation) before any
// backend call; `request_cache=false` (URL, or an msearch header) and requests with
// `now`-relative date math bypass it; only complete 200 answers (no timed-out leg, no failed
// shard) are stored; a hit re-stamps `took`. Every answer of those operations says
// `X-Cache: hit|miss|bypass` (an msearch: hit if every search hit, bypass if every one
// bypassed, else miss), and the `es_cache` phase joins Server-Timing. Every write that a
// search could observe (document writes, bulk, mapping, refresh, index create and delete)
// invalidates its index after the backend applied it (with the Redis L2: on every replica).
// Without a cache nothing of this runs and no X-Cache header is added.
//
// A search runs its legs concurrently (the page, the count when totals are tracked, the
// aggregations when asked for, the coverage for `_shards`), each under the request's
// `timeout` (body or URL; ES time units) capped by `search.timeout`, and joins them
// (search_join.h): a leg that missed its deadline gives ES's partial answer (200,
// `timed_out: true`, a `gte` total, `_shards.failures`), or with
// `allow_partial_search_results=false` a 504; a partial answer is never cached.
//
// Ownership and threads: one SearchDoor per worker, used on that worker's thread; it owns its
// Backend; the WorkerCore outlives it.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "core/door.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "doors/search/backend.h"
#include "doors/search/target.h"

namespace turnpike::search {

struct SearchDoorOptions {
  std::string prefix = "/es";
  std::chrono::milliseconds timeout{10'000};
  cache::Cache* cache = nullptr;  // not owned; outlives the doors; null: no response cache
};

class SearchDoor : public core::Door {
 public:
  // `worker`: this door's worker index (the cache's probe).
  SearchDoor(const SearchDoorOptions& options, std::unique_ptr<Backend> backend,
             core::WorkerCore& core, size_t worker = 0);

  static std::vector<core::RouteSpec> Routes(const SearchDoorOptions& options);

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;
  void Shutdown() override;
  // This worker's backend (the admin API's index list, admin_routes.h).
  Backend& backend() { return *backend_; }

  // One request's state while an operation runs (the handlers' argument).
  // Server-Timing entries of the search's own phases (`server.server_timing`): mapping (the
  // index lookup), each leg (page, count, aggs, cover), join (spawn to the last leg's end),
  // render. Null when off: then nothing is timed.
  struct Timing {
    std::string entries;  // "es_page;dur=0.120, ..."
    void Add(std::string_view name, Clock::duration d);
  };
  struct Call {
    http::Exchange& exchange;
    Target target;
    Scope scope;
    Deadline deadline;
    Timing* timing = nullptr;
    // The request's one instant (epoch ms) for date math: every search of it (an msearch's
    // too) resolves `now` to this.
    int64_t now_ms = 0;
    // The cache's answer for the X-Cache header (every search of an msearch folded in).
    std::optional<cache::Outcome> cache_outcome;
    std::vector<std::string> written;  // indexes a bulk wrote to (invalidated after it)
  };
  using Reply = core::ErrorReply;  // status and body

 private:
  boost::asio::awaitable<Reply> Dispatch(Call& call);  // DispatchOp, then InvalidateWritten
  boost::asio::awaitable<Reply> DispatchOp(Call& call);
  boost::asio::awaitable<Reply> IndexOp(Call& call);
  boost::asio::awaitable<Reply> MappingOp(Call& call);
  boost::asio::awaitable<Reply> DocOp(Call& call);
  boost::asio::awaitable<Reply> BulkOp(Call& call);
  boost::asio::awaitable<Reply> MsearchOp(Call& call);
  // One search on `index` through the cache (search_cache.cc), or straight to Compute.
  boost::asio::awaitable<Reply> RunSearch(Call& call, std::string_view index, std::string_view body,
                                          bool count, cache::Mode mode);
  // RunSearch's miss: the search computed, and its answer filled into `lookup` when it may be
  // cached. A coroutine of its own: its locals on RunSearch's frame would take that frame past
  // the 1 KiB the per-thread frame cache serves (a malloc and a free per search, hits included).
  boost::asio::awaitable<Reply> ComputeAndFill(Call& call, std::string_view index,
                                               std::string_view body, bool count,
                                               cache::Lookup& lookup);
  // One search on `index` (the legs and the join). `complete` (if set) says whether the answer
  // may be cached: a 200 with no timed-out leg and no failed shard.
  boost::asio::awaitable<Reply> Compute(Call& call, std::string_view index, std::string_view body,
                                        bool count, bool* complete);
  // Invalidates the cache entries of what `call` wrote (no-op without a cache).
  boost::asio::awaitable<void> InvalidateWritten(Call& call);

  const SearchDoorOptions& options_;
  std::unique_ptr<Backend> backend_;
  core::WorkerCore& core_;
  core::FilterChain chain_;
  const size_t worker_;
  std::optional<cache::Digester> digester_;  // set when options_.cache is
};

// Reply helpers shared by the door's files.
SearchDoor::Reply ErrorOf(const Error& error);

}  // namespace turnpike::search
