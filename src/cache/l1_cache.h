// L1: the in-process cache of envelopes, bounded by bytes overall and per tenant. A lookup
// takes no lock: writers (Insert, evictions, a stale entry's removal) take their shard's
// mutex; a reader (Find) only loads atomics and bumps reference counts.
//
// Layout: `shards` independent shards chosen by the key's hash. Each has an open-addressing
// index (linear probing; cells of {hash, const Envelope*}, both atomics) that readers probe
// without a lock, and, for the writers only, under the shard's mutex, an insertion-ordered list
// of its entries and one per tenant with the byte counts. The index is published through an
// atomic pointer; growing it publishes a copy and retires the old table.
//
// Bounds (DESIGN.md "Every cache: ... hard cap"): `max_bytes` caps the whole cache and
// `tenant_max_bytes` caps each tenant, so one tenant's traffic can evict only its own entries
// once it reaches its cap, never everyone's. Both are split evenly over the shards (a shard
// holds at most max_bytes / shards, and per tenant tenant_max_bytes / shards): a tenant
// never holds more than tenant_max_bytes in total, and because keys hash uniformly over the
// shards it reaches about that before its own entries are evicted. An entry is charged its
// strings plus a fixed overhead (Envelope::Charge); one larger than a shard's tenant share is
// not stored (counted as rejected). Inserting evicts: first the tenant's own entries while it
// is over its share, then anyone's while the shard is over its share, choosing victims by
// CLOCK (second chance) over the lists: a hit sets the entry's `referenced` bit (a relaxed
// store, only when clear, so a popular entry's line is not written on every hit); the scan
// moves an entry whose bit is set to the front with the bit cleared, and evicts the first
// whose bit is clear. So an entry found since it last reached the back survives one more pass,
// as a least-recently-used list would keep it.
//
// Validity: Find returns an entry only if its generation equals the caller's current one and
// it has not expired. An entry found of an older generation or expired is removed on the spot
// (counted as stale, not as an eviction) if the shard's mutex is free (try_lock: a reader
// never waits); otherwise it is left for the next write under its key, which replaces it. Old
// generations are never searched for: bumping a namespace's generation invalidates all its
// entries in O(1), and they leave as they are met or evicted.
//
// Reclamation (epochs): a reader holds a raw `const Envelope*` (or index table) between its
// load and its reference-count increment, so nothing a writer unlinks is released until every
// reader that could have loaded it has left. The L1 has a global epoch E and a few
// cache-line-sized reader slots, each with two counters (by the epoch's parity); a thread uses
// the slot of its number mod their count (threads may share one). A reader: loads E = e,
// increments its slot's counter [e & 1], loads E again and retries if it moved (so a reader
// that counts itself in e saw E == e after counting); then probes; then decrements. A writer
// unlinks (a store into the index cell or table pointer), then loads E = t and tags the
// unlinked thing with t. Advancing E from k to k + 1 (any writer, under its shard's lock,
// when it has something waiting) requires every slot's counter [(k - 1) & 1] to read zero.
// Claims, with every operation on E, the counters, the cells and the table pointers
// sequentially consistent (on x86 the loads are plain loads; the stores and read-modify-writes
// are locked instructions; only writers store, a reader's own are its slot's add and sub):
//   1. When E becomes k + 1, every reader counted is in k or k + 1. (One in k - 1, or in
//      k - 3, ... sharing its parity, would have made the check fail; one in k - 2 was excluded
//      by the step to k; one that loads E = k - 1 later fails its second load and retries.)
//   2. A reader that loaded an unlinked pointer did its second load of E before that load,
//      which is before the unlinking store in the single total order (it read the older
//      value), which is before the writer's load of t: so its epoch e <= t.
//   3. By 1, once E >= t + 2 no reader in an epoch <= t is counted, so the writer that then
//      finds E >= t + 2 releases the thing. The reader's decrement (a release) is read by the
//      advancing writer's counter load, whose compare-exchange of E (a release, and later ones
//      continue its release sequence) is read by the releasing writer's load of E: the reader's
//      last use happens before the release.
// Releasing an entry drops the L1's reference (L1Slot::owner); the hit's copy keeps it alive.
// Waiting things are released by their own shard's next write (not its next read): a shard
// that is never written again keeps its last removals until the L1 goes. Their bytes are no
// longer charged from the moment they are unlinked.
//
// Ownership and threads: thread-safe; shared by every worker (hold it in the composition
// root, outliving the workers). Envelopes are shared_ptr<const>: a hit copies the L1's
// reference (an atomic increment), so the body stays valid after an eviction. The L1 keeps
// its bookkeeping in each envelope's slot (envelope.h L1Slot: the key, the lists' links, its
// reference), so an insert allocates nothing but when the shard's index grows; an envelope is
// stored in one L1 at a time (Insert refuses one stored or waiting to be released). Stats()
// takes each shard's lock (for /metrics, not the hot path).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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
  uint64_t waiting = 0;    // unlinked, not yet released (a reader may still see them)
};

class L1Cache {
 public:
  explicit L1Cache(L1Options options);
  ~L1Cache();
  L1Cache(const L1Cache&) = delete;
  L1Cache& operator=(const L1Cache&) = delete;

  // The entry for `id` if it was computed under `generation` and is not expired at `now_ms`;
  // sets its CLOCK bit. Null otherwise. No lock, no allocation. The HashedId form takes the
  // id's hash as the key carries it (key.h); the other hashes the id.
  std::shared_ptr<const Envelope> Find(HashedId id, uint64_t generation, int64_t now_ms);
  std::shared_ptr<const Envelope> Find(std::string_view id, uint64_t generation, int64_t now_ms) {
    return Find(HashedId::Of(id), generation, now_ms);
  }

  // Stores (or replaces) the entry for `key`, whose bytes and hash the entry's slot copies (the
  // caller keeps its key; envelope.h L1Slot). False if it is too large to be stored, if
  // the entry there has a newer generation (generations only grow: this one is already stale),
  // or if this envelope is stored already (or waits to be released by an L1).
  bool Insert(const CacheKey& key, std::shared_ptr<const Envelope> envelope);

  L1Stats Stats() const;

  struct Shard;  // l1_cache.cc

  // The epoch domain (see the header comment); public for l1_cache.cc's helpers.
  static constexpr size_t kReaderSlots = 16;
  struct alignas(64) ReaderSlot {
    std::atomic<uint64_t> active[2] = {0, 0};
  };

 private:
  Shard& ShardFor(uint64_t hash);
  void TryAdvanceEpoch();
  void ReleaseWaiting(Shard& shard);
  void Remove(Shard& shard, L1Slot& slot);

  const size_t shard_max_bytes_;
  const size_t shard_tenant_max_bytes_;
  std::vector<std::unique_ptr<Shard>> shards_;
  alignas(64) std::atomic<uint64_t> epoch_{2};
  ReaderSlot readers_[kReaderSlots];
};

}  // namespace turnpike::cache
