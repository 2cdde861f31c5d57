// The LLM response cache, shared by every worker's LLM door: the answers stored (L1 in process,
// and the Redis L2 when `redis.url` is set), and the calls in flight that identical requests
// may join (coalescing). What a request does with it is the cache filter's business
// (cache_filter.h); this is the state they share.
//
// An entry is a model call's answer as a model_call::Recording (its pivot events, the frames
// rendered for the client's form, or the whole answer), so one entry serves both forms of its
// client dialect (a stream, replayed in that API's chunking, or a whole answer) through a
// model_call::Replay. Keys (cache/key.h) are tenant-first: tenant + namespace + a digest of the
// request, where the namespace is the client dialect and the public model, and the key's id
// too when the plan scopes entries to the key. The digest is the cache filter's.
//
// Entries:
//   Find     L1 only: a complete recording stored under the key and not expired; no I/O. The
//            L1 (cache/l1_cache.h) is bounded by llm_cache.max_bytes overall and
//            tenant_max_bytes per tenant, with least-recently-used eviction per shard; a lookup
//            holds one shard's mutex for a map probe and a list splice.
//   ReadL2   one round trip (MGET) when an L2 is configured; a hit is decoded once and put in
//            L1, so the replica's next identical request is an L1 hit. A failed read, or a
//            value this version cannot decode, is a miss (counted in l2_errors).
//   Store    (EndLead) a finished call's recording goes into L1 at once, then to the L2 by a
//            detached coroutine on the caller's executor: the client's answer has ended and
//            nothing waits for it.
// Only a complete, untruncated answer with status 200 is stored, and one that calls tools only
// when the plan allows it; errors, cut streams and answers of a call abandoned by every client
// never are (EndLead checks; the filter decides no-store and the TTL).
//
// Semantic mode (semantic_index.h): when llm_cache.semantic names an embeddings model, the cache
// also holds the semantic index, whose vectors point at L1 entries by id (FindById); it has no
// L2 side (a replica's vectors are its own: another replica's entries are found exactly, or
// not).
//
// Calls in flight: the first miss for a key leads a call and registers its LiveAnswer
// (model_call/fan_out.h) under the key; identical requests that arrive while it runs join it
// as followers (up to llm_cache.max_followers per call) and get the same answer as it is
// recorded. Whether a miss joins or leads is decided in one critical section
// (JoinOrStartLead), so identical requests arriving together make one call. The leader removes
// the registration at EndLead in one critical section with the L1 insert, so a request that
// arrives after the last event finds either the call (and replays it whole) or the entry. The
// registration views the leader's key (no copy): the key stays put until EndLead, or until the Lead
// is destroyed, which drops a registration that EndLead never ended (a request destroyed mid-call
// at shutdown).
//
// Allocations of a miss that stores its answer (no L2, no semantic mode): the LiveAnswer with
// the entry it may become and its recording's first block (2 KB for a whole answer, 8 KB for a
// stream) beside it, in one allocation. The key's string is the filter's, which reuses the last
// one's on its worker; the L1 copies the key into the entry and keeps its bookkeeping there
// (cache/envelope.h L1Slot), and the in-flight table and the L1's index are open-addressing
// tables that allocate only to grow.
// A longer answer adds its recording's further blocks (each twice the last).
//
// Threads: every method may be called from any worker concurrently. The in-flight table has
// one mutex, held for a hash lookup and an insert or erase (never across a co_await or I/O),
// and at EndLead around the L1 insert; it nests outside a LiveAnswer's own mutex (Join) and
// an L1 shard's, never inside. Counters are per worker (cache/cache_metrics.h), written only
// by their worker.
// Ownership: built in app/ before the workers run and destroyed after them; the L2 (if any)
// outlives it.
#pragma once

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_metrics.h"
#include "cache/key.h"
#include "cache/l1_cache.h"
#include "cache/l2_store.h"
#include "config/config.h"
#include "doors/llm/semantic_index.h"
#include "governance/cost.h"
#include "model_call/fan_out.h"
#include "model_call/recording.h"
#include "observability/metrics.h"

namespace turnpike::doors::llm {

// A stored answer: its recording, and the usage the call reported (what a hit saves).
struct StoredAnswer {
  std::shared_ptr<const model_call::Recording> recording;
  governance::TokenUsage usage;
};

// How a finished call ends its lead (EndLead).
struct LeadEnd {
  bool store = false;        // the request allows storing (not no-store, TTL above 0)
  bool tool_calls = false;   // the plan allows storing answers that call tools
  bool calls_tools = false;  // the answer called tools (its finish reason)
  std::chrono::milliseconds ttl{0};
  governance::TokenUsage usage;
};

// Per-worker counters beyond CacheProbe's.
struct LlmCacheProbe {
  cache::CacheProbe cache;
  observability::Counter saved_micros;  // the price of the calls hits and followers avoided
  observability::Counter stored;        // answers put in L1
  observability::Counter not_stored;    // finished leads not stored (error, cut, tool calls)
  // Semantic mode (semantic_lookup.h): embeddings calls made, and those that failed (the
  // request went on as an exact miss); hits, and their similarity (the histogram's "seconds"
  // are similarities: its buckets are the kSimilarityBuckets).
  observability::Counter semantic_embeddings;
  observability::Counter semantic_embed_failures;
  observability::Counter semantic_hits;
  observability::Histogram semantic_similarity{kSimilarityBuckets};

  static constexpr std::array<double, 10> kSimilarityBuckets = {0.8,  0.85, 0.9,  0.93,  0.95,
                                                                0.97, 0.98, 0.99, 0.995, 1.0};
};

class ResponseCache {
 public:
  ResponseCache(const config::LlmCacheConfig& config, cache::L2Store* l2, size_t workers);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  const config::LlmCacheConfig& config() const { return config_; }
  bool has_l2() const { return l2_ != nullptr; }

  // The stored answer for `key` (FindById: the key's id), if any and not expired at `now_ms`.
  std::optional<StoredAnswer> Find(const cache::CacheKey& key, int64_t now_ms) {
    return FindById(cache::HashedId(key), now_ms);
  }
  std::optional<StoredAnswer> FindById(std::string_view id, int64_t now_ms) {
    return FindById(cache::HashedId::Of(id), now_ms);
  }
  std::optional<StoredAnswer> FindById(cache::HashedId id, int64_t now_ms);
  // The semantic index; null when llm_cache.semantic is not configured.
  SemanticIndex* semantic() { return semantic_.get(); }
  // The L2's answer for `key` (put in L1 when found); nullopt: none, or the L2 failed.
  boost::asio::awaitable<std::optional<StoredAnswer>> ReadL2(const cache::CacheKey& key,
                                                             int64_t now_ms, size_t worker);

  // Joins the call in flight for `key`, reading on `executor`; `follower` null when there is
  // none or it has max_followers already. `finished`: its answer had already ended complete
  // (the leader has not stored it yet): the request is served a stored answer, a hit. A
  // finished call whose leader said no-store is not joined: its answer must not be served
  // again, so the request makes its own call.
  struct Joined {
    std::unique_ptr<model_call::Follower> follower;
    bool finished = false;
  };
  Joined Join(const cache::CacheKey& key, const model_call::FollowerOptions& options,
              boost::asio::any_io_executor executor);
  // A call's answer, and its registration for followers. Move-only; destroying a Lead that is
  // still registered drops the registration (EndLead normally does).
  class Lead {
   public:
    Lead() = default;
    Lead(Lead&& other) noexcept { *this = std::move(other); }
    Lead& operator=(Lead&& other) noexcept;
    ~Lead();

    std::shared_ptr<model_call::LiveAnswer> live;
    bool registered() const { return cache_ != nullptr; }

   private:
    friend class ResponseCache;
    ResponseCache* cache_ = nullptr;  // while registered
    cache::HashedId id_;              // the registration's key: the leader's CacheKey::id
  };
  // Starts a call's answer for `key` (capped at max_entry_bytes; `stream`: the leader's client
  // asked for a stream, which sizes the recording's first block): registered for followers when
  // `coalesce` and no call for the key is in flight, else private to its leader (`stores`:
  // whether EndLead may store it; a no-store lead's followers join only while it runs). The
  // registration views key.id: keep `key` alive and unchanged until EndLead (a move of it is
  // fine: the string's bytes stay where they are) or the Lead's end.
  Lead StartLead(const cache::CacheKey& key, bool stream, bool coalesce, bool stores = true);
  // Join, or else StartLead with coalescing, in one critical section: of identical requests that
  // arrive together, one leads and the others follow (a Join and then a StartLead leave a
  // window in which two find no call and the second leads a call of its own, which no one can
  // join). `lead` is set when `joined.follower` is null: registered, or private to its leader
  // when the call in flight cannot be joined (as Join and StartLead say).
  struct Started {
    Joined joined;
    Lead lead;
  };
  Started JoinOrStartLead(const cache::CacheKey& key, const model_call::FollowerOptions& options,
                          boost::asio::any_io_executor executor, bool stream, bool stores);
  // The call of a Lead finished (or was given up): stores its answer under `key` when `end`
  // and the recording allow it (see the top of this file), and unregisters it. Exactly once
  // per Lead. True when the answer went into L1 (expiring at now_ms + end.ttl). The entry
  // keeps a copy of `key` (cache/envelope.h L1Slot).
  bool EndLead(const cache::CacheKey& key, Lead& lead, const LeadEnd& end, int64_t now_ms,
               size_t worker, const boost::asio::any_io_executor& executor);

  LlmCacheProbe& probe(size_t worker) { return *probes_[worker]; }
  // /metrics: turnpike_cache_*{cache="llm"} (cache/cache_metrics.h) and
  // turnpike_cache_saved_usd_total, turnpike_cache_stores_total{cache="llm",result}; with
  // semantic mode, turnpike_cache_semantic_embeddings_total{result},
  // turnpike_cache_semantic_hits_total and the turnpike_cache_semantic_similarity histogram.
  void WriteMetrics(observability::PrometheusWriter& writer) const;

  // The L2 key names (tests).
  static std::string EntryKey(std::string_view id);

 private:
  // turnpike_cache_semantic_* (semantic mode only).
  void WriteSemanticMetrics(observability::PrometheusWriter& writer) const;
  // Whether a finished recording may be stored (see the top of this file).
  static bool Storable(const model_call::Recording& recording,
                       const model_call::RecordingProgress& progress);
  // Drops the lead's registration (mu_ held).
  void Unregister(Lead& lead);
  static boost::asio::awaitable<void> PutL2(cache::L2Store* l2, std::string key, std::string value,
                                            std::chrono::milliseconds ttl, LlmCacheProbe* probe);

  const config::LlmCacheConfig config_;
  cache::L2Store* const l2_;
  cache::L1Cache l1_;
  const std::unique_ptr<SemanticIndex> semantic_;
  std::mutex mu_;
  // A registered call: its answer, and whether its leader will store it (no-store: not).
  struct Flight {
    std::shared_ptr<model_call::LiveAnswer> live;
    bool stores = true;
  };
  // Join's decision for a registered call (mu_ held).
  Joined JoinFlight(const Flight& flight, const model_call::FollowerOptions& options,
                    boost::asio::any_io_executor executor);
  // A lead's answer, with the entry it may become and its recording's first block (sized by
  // `stream`) in one allocation.
  std::shared_ptr<model_call::LiveAnswer> NewAnswer(bool stream) const;
  // Guarded by mu_: the registered calls in flight, by key id (a view of the leader's key, with
  // the hash it carries).
  boost::unordered_flat_map<cache::HashedId, Flight, cache::HashedIdHasher> flights_;
  std::vector<std::unique_ptr<LlmCacheProbe>> probes_;
};

}  // namespace turnpike::doors::llm
