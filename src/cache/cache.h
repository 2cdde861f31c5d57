// The response cache a door uses: L1 (l1_cache.h) in front, an optional shared L2
// (l2_store.h), per-namespace generations (generations.h, or the L2's), and single flight per
// key (single_flight.h). Door-neutral: the search door caches `_search` answers per index; the
// LLM response cache will cache completions per model with the same pieces.
//
// One request, as a door uses it:
//
//   if (mode == Mode::kBypass || !cacheable) { cache.CountBypass(worker); ...bypass... }
//   CacheKey key = MakeKey(tenant, index, digester.Of(CanonicalJsonValue(request, options)));
//   Lookup lookup = co_await cache.Acquire(std::move(key), now_ms, worker);
//   if (lookup.hit()) { ...answer RestampTook(*lookup.envelope(), took)... X-Cache: hit }
//   else { ...compute...; if (complete and successful) co_await cache.Fill(lookup, envelope);
//          ...X-Cache: miss... }   // dropping `lookup` unfilled releases its waiters
//
// and after every write that changes what a search can see (document writes, bulk, refresh,
// mapping changes, index create and delete): `co_await cache.Invalidate(tenant, index, worker)`.
//
// Lookup order. Without L2: the namespace's generation from Generations, then L1. With L2:
// exactly one L2 round trip reads the generation and the entry together, and an entry of that
// generation is a hit; L1 is not consulted, because a Redis restarted without its data counts
// generations from 0 again and could match an L1 entry made before a write (the L2's own
// entries vanish with its generations, so they cannot). A miss then joins the single flight
// of its key and generation: the first miss computes, the others wait (bounded) for its
// envelope, which counts as a hit for them; a miss after a write starts a flight of its own
// rather than take an answer computed before the write.
//
// What is stored (Fill): the envelope gets the generation read at Acquire (so an answer
// computed while a write landed is stored under the old generation and never served), an
// expiry of now + ttl, and its `took` span. Never store errors, timeouts, partial answers or
// `now`-relative requests (canonical_json.h: UsesNowDateMath): that is the door's decision,
// made before calling Fill. An L2 read that failed leaves the generation unknown: the answer
// is computed and not stored. A late fill never displaces a newer entry in L1; in the L2 it
// may (SET is unconditional), which costs the next request a miss, never a stale answer.
// TTL 0 turns the cache off (every Acquire is a miss, nothing is stored), as every Turnpike
// cache.
//
// Ownership and threads: one Cache per cache name, shared by every worker, built in app/
// before the workers run and destroyed after them; the L2 (if any) outlives it. Acquire, Fill
// and Invalidate may be called from any worker's event loop (single-threaded executors);
// counts go to the calling worker's probe (cache_metrics.h), chosen by `worker`.
// Errors: L2 failures are counted and degrade to computing; only Invalidate reports one.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_metrics.h"
#include "cache/envelope.h"
#include "cache/generations.h"
#include "cache/key.h"
#include "cache/l1_cache.h"
#include "cache/l2_store.h"
#include "cache/single_flight.h"

namespace turnpike::cache {

// Whether a request may use the cache: the door's choice per request (Elasticsearch's
// `request_cache=false` query parameter is kBypass).
enum class Mode { kUse, kBypass };

// Elasticsearch's `request_cache` parameter: absent or "true" is kUse, "false" kBypass;
// anything else is nullopt (the door answers a 400 in its own error shape).
std::optional<Mode> ModeFromRequestCacheParam(std::optional<std::string_view> value);
// The same, for a door that parsed the parameter already (absent or true: kUse).
inline Mode ModeFromRequestCache(std::optional<bool> request_cache) {
  return request_cache.value_or(true) ? Mode::kUse : Mode::kBypass;
}

// The X-Cache response header every cached route answers.
enum class Outcome { kHit, kMiss, kBypass };
inline constexpr std::string_view kXCacheHeader = "X-Cache";
std::string_view XCacheValue(Outcome outcome);  // "hit" | "miss" | "bypass"

struct CacheOptions {
  std::string name;  // the metric label and the L2 key prefix's part ("search"); no '{'
  L1Options l1;
  std::chrono::milliseconds ttl{std::chrono::minutes(1)};          // 0: the cache is off
  std::chrono::milliseconds flight_wait{std::chrono::seconds(5)};  // a waiter's bound
  size_t max_waiters_per_key = 1024;
  size_t workers = 1;  // probes, one per worker: every call's `worker` is below this
};

// The result of Acquire: a hit (envelope set) or a miss this request must answer itself.
class Lookup {
 public:
  bool hit() const { return envelope_ != nullptr; }
  // Set on a hit; shared with the cache, never mutated.
  const std::shared_ptr<const Envelope>& envelope() const { return envelope_; }
  const CacheKey& key() const { return key_; }

 private:
  friend class Cache;
  CacheKey key_;
  std::shared_ptr<const Envelope> envelope_;
  std::optional<uint64_t> generation_;          // unknown after an L2 failure
  std::optional<SingleFlight::Flight> flight_;  // set: this request leads the key's flight
  size_t worker_ = 0;
};

class Cache {
 public:
  // `l2` may be null (single node); not owned.
  Cache(CacheOptions options, L2Store* l2);
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  boost::asio::awaitable<Lookup> Acquire(CacheKey key, int64_t now_ms, size_t worker);

  // Stores `envelope` for a miss (see above) and hands it to the key's waiters. Fills in the
  // envelope's generation, expiry and took span. Does nothing for a hit.
  boost::asio::awaitable<void> Fill(Lookup& lookup, Envelope envelope, int64_t now_ms);

  // Bumps the namespace's generation: every entry of (tenant, ns) stops matching at once.
  // Fails only if the L2 bump failed (then other replicas may serve the namespace's old
  // entries until their TTL: the door logs it; its write has been applied regardless).
  boost::asio::awaitable<Status> Invalidate(std::string tenant, std::string ns, size_t worker);

  void CountBypass(size_t worker) { probes_[worker]->bypasses.Add(); }

  const std::string& name() const { return options_.name; }
  CacheProbe& probe(size_t worker) { return *probes_[worker]; }
  // /metrics: this cache's series (cache_metrics.h), summed over the workers.
  void WriteMetrics(observability::PrometheusWriter& writer) const;

  // The L2 key names (exposed for tests and for the Redis implementation's documentation).
  std::string GenerationKey(std::string_view ns_id) const;
  std::string EntryKey(std::string_view id) const;

 private:
  const CacheOptions options_;
  L2Store* const l2_;
  L1Cache l1_;
  Generations generations_;
  SingleFlight flights_;
  std::vector<std::unique_ptr<CacheProbe>> probes_;  // one per worker, each single-writer
};

}  // namespace turnpike::cache
