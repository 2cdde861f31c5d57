// L1: the in-process cache of envelopes, bounded by bytes overall and per tenant.
//
// Layout: `shards` independent shards chosen by the key's hash, each a hash map plus an LRU
// list under its own mutex. A worker holds a shard's mutex only for a map lookup and a list
// splice (never across I/O or a co_await), so two workers collide only when they touch the
// same shard at the same instant; bench/cache_bench.cc measures a hit with 1 and 2 threads.
//
// Bounds (DESIGN.md "Every cache: ... hard cap"): `max_bytes` caps the whole cache and
// `tenant_max_bytes` caps each tenant, so one tenant's traffic can evict only its own entries
// once it reaches its cap, never everyone's. Both are split evenly over the shards (a shard
// holds at most max_bytes / shards, and per tenant tenant_max_bytes / shards): a tenant
// never holds more than tenant_max_bytes in total, and because keys hash uniformly over the
// shards it reaches about that before its own entries are evicted. An entry is charged its
// strings plus a fixed overhead (Envelope::Charge); one larger than a shard's tenant share is
// not stored (counted as rejected). Inserting evicts least-recently-used entries: first the
// tenant's own while it is over its share, then anyone's while the shard is over its share.
//
// Validity: Find returns an entry only if its generation equals the caller's current one and
// it has not expired; an entry found of an older generation or expired is removed on the spot
// (counted as stale, not as an eviction). Old generations are never searched for: bumping a
// namespace's generation invalidates all its entries in O(1), and they leave as they are met or
// evicted.
//
// Ownership and threads: thread-safe; shared by every worker (hold it in the composition
// root, outliving the workers). Envelopes are shared_ptr<const>: a hit copies the pointer
// under the lock, so the body stays valid after an eviction. The L1 keeps its bookkeeping in
// each envelope's slot (envelope.h L1Slot: the key, the LRU links), so an insert allocates
// nothing but when the shard's table grows; an envelope is stored in one L1 at a time (Insert
// refuses one already stored under the same shard). Stats() takes each shard's lock (for
// /metrics, not the hot path).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "cache/envelope.h"
#include "cache/key.h"

namespace turnpike::cache {

struct L1Options {
  size_t max_bytes = size_t{64} << 20;
  size_t tenant_max_bytes = size_t{16} << 20;  // 0 = no per-tenant cap beyond max_bytes
  size_t shards = 16;                          // at least 1
};

struct L1Stats {
  uint64_t bytes = 0;
  uint64_t entries = 0;
  uint64_t evictions = 0;  // removed to make room (byte caps)
  uint64_t stale = 0;      // removed when found of an old generation or expired
  uint64_t rejected = 0;   // not stored: larger than a shard's tenant share
};

class L1Cache {
 public:
  explicit L1Cache(L1Options options);
  ~L1Cache();
  L1Cache(const L1Cache&) = delete;
  L1Cache& operator=(const L1Cache&) = delete;

  // The entry for `id` if it was computed under `generation` and is not expired at `now_ms`;
  // marks it most recently used. Null otherwise. No allocation. The HashedId form takes the
  // id's hash as the key carries it (key.h); the other hashes the id.
  std::shared_ptr<const Envelope> Find(HashedId id, uint64_t generation, int64_t now_ms);
  std::shared_ptr<const Envelope> Find(std::string_view id, uint64_t generation, int64_t now_ms) {
    return Find(HashedId::Of(id), generation, now_ms);
  }

  // Stores (or replaces) the entry for `key`, which the entry's slot keeps with its hash (pass
  // it with std::move to spare a copy of its string). False if it is too large to be stored, if the
  // entry there has a newer generation (generations only grow: this one is already stale), or
  // if this envelope is stored already.
  bool Insert(CacheKey key, std::shared_ptr<const Envelope> envelope);

  L1Stats Stats() const;

  struct Shard;  // l1_cache.cc

 private:
  Shard& ShardFor(uint64_t hash);

  const size_t shard_max_bytes_;
  const size_t shard_tenant_max_bytes_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace turnpike::cache
