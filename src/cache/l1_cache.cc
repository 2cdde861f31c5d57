#include "cache/l1_cache.h"

#include <boost/intrusive/list.hpp>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/string_map.h"

namespace turnpike::cache {
namespace {

namespace bi = boost::intrusive;

// The shard's list and each tenant's, newest (or last given a second chance) first, through
// the envelopes' own slots.
using LruList = bi::list<L1Slot, bi::member_hook<L1Slot, L1Slot::Hook, &L1Slot::lru>>;
using TenantList = bi::list<L1Slot, bi::member_hook<L1Slot, L1Slot::Hook, &L1Slot::tenant_lru>>;

struct Tenant {
  size_t bytes = 0;
  TenantList lru;
};

// A cell of the index: empty (null, never used in this table), a tombstone (an entry was
// removed: probing goes on) or an entry. Only writers store, under the shard's mutex.
struct Cell {
  std::atomic<uint64_t> hash{0};
  std::atomic<const Envelope*> envelope{nullptr};
};

char tombstone_byte;
const Envelope* Tombstone() { return reinterpret_cast<const Envelope*>(&tombstone_byte); }

// A power-of-two table; at most 3/4 of its cells are ever non-empty, so a probe ends.
struct Table {
  explicit Table(size_t capacity) : mask(capacity - 1), cells(new Cell[capacity]) {}
  const size_t mask;
  const std::unique_ptr<Cell[]> cells;
};

constexpr size_t kMinCapacity = 16;

// The reader's probe (the writers' too: under the mutex nothing changes under it).
const Envelope* Probe(const Table& table, HashedId id) {
  for (size_t i = id.hash & table.mask, n = 0; n <= table.mask; i = (i + 1) & table.mask, ++n) {
    const Cell& cell = table.cells[i];
    const Envelope* envelope = cell.envelope.load();
    if (envelope == nullptr) return nullptr;
    // The cell's hash filters without touching the entry; it can be newer than the entry read
    // (the cell reused since): then at worst a miss for an entry being removed.
    if (envelope == Tombstone() || cell.hash.load(std::memory_order_relaxed) != id.hash) continue;
    if (envelope->l1.hash == id.hash && envelope->l1.id == id.id) return envelope;
  }
  return nullptr;
}

// Writers only: the cell holding `envelope`, which is in the table.
Cell& CellOf(const Table& table, const Envelope* envelope) {
  size_t i = envelope->l1.hash & table.mask;
  while (table.cells[i].envelope.load(std::memory_order_relaxed) != envelope) {
    i = (i + 1) & table.mask;
  }
  return table.cells[i];
}

// Writers only: the first empty or tombstone cell for `hash`; true if it was empty.
std::pair<Cell*, bool> FreeCell(const Table& table, uint64_t hash) {
  for (size_t i = hash & table.mask;; i = (i + 1) & table.mask) {
    const Envelope* envelope = table.cells[i].envelope.load(std::memory_order_relaxed);
    if (envelope == nullptr) return {&table.cells[i], true};
    if (envelope == Tombstone()) return {&table.cells[i], false};
  }
}

// This thread's reader slot: threads are numbered on first use.
size_t ThreadSlot() {
  static std::atomic<size_t> next{0};
  thread_local const size_t slot =
      next.fetch_add(1, std::memory_order_relaxed) % L1Cache::kReaderSlots;
  return slot;
}

// A reader's stay in an epoch (l1_cache.h "Reclamation").
class ReadSection {
 public:
  ReadSection(const std::atomic<uint64_t>& epoch, L1Cache::ReaderSlot& slot) {
    for (;;) {
      const uint64_t e = epoch.load();
      counter_ = &slot.active[e & 1];
      counter_->fetch_add(1);
      if (epoch.load() == e) return;
      counter_->fetch_sub(1, std::memory_order_release);
    }
  }
  ~ReadSection() { counter_->fetch_sub(1, std::memory_order_release); }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

 private:
  std::atomic<uint64_t>* counter_ = nullptr;
};

}  // namespace

struct L1Cache::Shard {
  std::mutex mu;
  // The index: `table` is what readers probe, stored under mu, which guards everything else;
  // `owned_table` holds the same table.
  std::unique_ptr<Table> owned_table = std::make_unique<Table>(kMinCapacity);
  std::atomic<const Table*> table;
  size_t live = 0;  // entries in the table
  size_t used = 0;  // its non-empty cells (entries and tombstones)
  std::unordered_map<std::string, Tenant, StringHash, std::equal_to<>> tenants;
  LruList lru;
  size_t bytes = 0;
  uint64_t evictions = 0;
  uint64_t stale = 0;
  uint64_t rejected = 0;
  // Unlinked, released once the epoch is two past the tag (l1_cache.h); tags never decrease.
  struct WaitingEntry {
    const Envelope* envelope;
    uint64_t tag;
  };
  struct WaitingTable {
    std::unique_ptr<Table> table;
    uint64_t tag;
  };
  std::vector<WaitingEntry> waiting_entries;
  std::vector<WaitingTable> waiting_tables;

  Shard() : table(owned_table.get()) {}

  ~Shard() {
    // Unlinked before the entries go (a slot must not die linked), then the L1's references
    // dropped. No reader is left when the L1 is destroyed.
    for (auto& [name, tenant] : tenants) tenant.lru.clear();
    while (!lru.empty()) {
      L1Slot& slot = lru.front();
      lru.pop_front();
      std::shared_ptr<const Envelope> owner = std::move(slot.owner);
    }
    for (WaitingEntry& waiting : waiting_entries) {
      std::shared_ptr<const Envelope> owner = std::move(waiting.envelope->l1.owner);
    }
  }

  // A second chance: to the front of both lists.
  void Touch(L1Slot& slot) {
    lru.splice(lru.begin(), lru, lru.iterator_to(slot));
    TenantList& tenant_lru = tenants.find(slot.tenant)->second.lru;
    tenant_lru.splice(tenant_lru.begin(), tenant_lru, tenant_lru.iterator_to(slot));
  }

  // CLOCK over `list`: the first entry from the back whose bit is clear, clearing and moving
  // to the front those whose bit is set; after one pass, the back.
  template <class List>
  L1Slot& Victim(List& list) {
    for (size_t n = list.size(); n > 1; --n) {
      L1Slot& slot = list.back();
      if (!slot.referenced.load(std::memory_order_relaxed)) return slot;
      slot.referenced.store(false, std::memory_order_relaxed);
      Touch(slot);
    }
    return list.back();
  }
};

namespace {

constexpr int kShardBitsShift = 32;

size_t ShardCount(const L1Options& options) { return std::max<size_t>(options.shards, 1); }

size_t TenantCap(const L1Options& options) {
  if (options.tenant_max_bytes == 0) return options.max_bytes;
  return std::min(options.tenant_max_bytes, options.max_bytes);
}

}  // namespace

L1Cache::L1Cache(L1Options options)
    : shard_max_bytes_(options.max_bytes / ShardCount(options)),
      shard_tenant_max_bytes_(TenantCap(options) / ShardCount(options)) {
  shards_.resize(ShardCount(options));
  for (auto& shard : shards_) shard = std::make_unique<Shard>();
}

L1Cache::~L1Cache() = default;

L1Cache::Shard& L1Cache::ShardFor(uint64_t hash) {
  // The index places the id by the hash's low bits: the shard choice uses bits from the
  // middle, so that neither is correlated with it.
  return *shards_[(hash >> kShardBitsShift) % shards_.size()];
}

void L1Cache::TryAdvanceEpoch() {
  uint64_t e = epoch_.load();
  for (const ReaderSlot& reader : readers_) {
    if (reader.active[(e - 1) & 1].load() != 0) return;  // a reader still in e - 1
  }
  epoch_.compare_exchange_strong(e, e + 1);
}

void L1Cache::ReleaseWaiting(Shard& shard) {
  uint64_t now = epoch_.load();
  const uint64_t oldest = shard.waiting_entries.empty() ? shard.waiting_tables.front().tag
                                                        : shard.waiting_entries.front().tag;
  if (oldest + 2 > now) {
    TryAdvanceEpoch();
    now = epoch_.load();
  }
  size_t n = 0;
  while (n < shard.waiting_entries.size() && shard.waiting_entries[n].tag + 2 <= now) {
    // Drops the L1's reference: may destroy the envelope, its slot with it.
    std::shared_ptr<const Envelope> owner = std::move(shard.waiting_entries[n].envelope->l1.owner);
    ++n;
  }
  shard.waiting_entries.erase(shard.waiting_entries.begin(), shard.waiting_entries.begin() + n);
  n = 0;
  while (n < shard.waiting_tables.size() && shard.waiting_tables[n].tag + 2 <= now) ++n;
  shard.waiting_tables.erase(shard.waiting_tables.begin(), shard.waiting_tables.begin() + n);
}

void L1Cache::Remove(Shard& shard, L1Slot& slot) {
  auto tenant = shard.tenants.find(slot.tenant);
  tenant->second.lru.erase(tenant->second.lru.iterator_to(slot));
  tenant->second.bytes -= slot.charge;
  if (tenant->second.bytes == 0) shard.tenants.erase(tenant);
  shard.lru.erase(shard.lru.iterator_to(slot));
  shard.bytes -= slot.charge;
  const Envelope* envelope = slot.owner.get();
  CellOf(*shard.owned_table, envelope).envelope.store(Tombstone());
  --shard.live;
  // Tagged after the unlinking store (claim 2).
  shard.waiting_entries.push_back({envelope, epoch_.load()});
}

std::shared_ptr<const Envelope> L1Cache::Find(HashedId id, uint64_t generation, int64_t now_ms) {
  Shard& shard = ShardFor(id.hash);
  ReadSection section(epoch_, readers_[ThreadSlot()]);
  const Envelope* envelope = Probe(*shard.table.load(), id);
  if (envelope == nullptr) return nullptr;
  // Newer than the caller's generation: a write and a fill landed since the caller read it.
  // The entry is good for everyone after this caller: keep it.
  if (envelope->generation > generation) return nullptr;
  L1Slot& slot = envelope->l1;
  if (envelope->generation != generation || envelope->Expired(now_ms)) {
    // Removed now if no writer holds the shard (never waited for); else by the next write.
    std::unique_lock lock(shard.mu, std::try_to_lock);
    if (lock.owns_lock() && Probe(*shard.owned_table, id) == envelope) {
      ++shard.stale;
      Remove(shard, slot);
    }
    return nullptr;
  }
  if (!slot.referenced.load(std::memory_order_relaxed)) {
    slot.referenced.store(true, std::memory_order_relaxed);
  }
  return slot.owner;  // the atomic increment; released no earlier than this section ends
}

bool L1Cache::Insert(const CacheKey& key, std::shared_ptr<const Envelope> envelope) {
  // A key too long for the slot's inline bytes (charged in Envelope::Charge) is charged its own.
  const size_t charge =
      envelope->Charge() + (key.id.size() > L1Slot::kInlineId ? key.id.size() : 0);
  Shard& shard = ShardFor(key.hash);
  const Envelope* const raw = envelope.get();
  L1Slot& slot = raw->l1;

  std::lock_guard lock(shard.mu);
  if (!shard.waiting_entries.empty() || !shard.waiting_tables.empty()) ReleaseWaiting(shard);
  if (slot.owner != nullptr) return false;  // stored already, or waiting (l1_cache.h)
  if (const Envelope* existing = Probe(*shard.owned_table, HashedId(key)); existing != nullptr) {
    // A late fill computed before a write must not displace the answer computed after it.
    if (existing->generation > raw->generation) return false;
    Remove(shard, existing->l1);
  }
  if (charge > shard_tenant_max_bytes_) {
    ++shard.rejected;
    return false;
  }
  // The slot copies the key's bytes (into the entry: no allocation for a key of up to
  // L1Slot::kInlineId bytes) and views the tenant in them. All of it is written before the
  // entry is published (the cell's store below).
  slot.SetId(key.id);
  slot.hash = key.hash;
  slot.tenant = std::string_view(slot.id).substr(key.tenant_offset, key.tenant_length);
  slot.charge = charge;
  slot.referenced.store(false, std::memory_order_relaxed);
  const std::string_view tenant_id = slot.tenant;
  auto tenant = shard.tenants.find(tenant_id);
  while (tenant != shard.tenants.end() && tenant->second.bytes + charge > shard_tenant_max_bytes_) {
    ++shard.evictions;
    Remove(shard, shard.Victim(tenant->second.lru));
    tenant = shard.tenants.find(tenant_id);  // Remove erases a tenant left with no entry
  }
  while (shard.bytes + charge > shard_max_bytes_) {
    ++shard.evictions;
    Remove(shard, shard.Victim(shard.lru));
  }
  shard.lru.push_front(slot);
  if (tenant == shard.tenants.end()) tenant = shard.tenants.emplace(tenant_id, Tenant{}).first;
  tenant->second.lru.push_front(slot);
  tenant->second.bytes += charge;
  shard.bytes += charge;
  slot.owner = std::move(envelope);

  if ((shard.used + 1) * 4 > (shard.owned_table->mask + 1) * 3) {
    // Grow (or only drop the tombstones): a copy with room for twice the live entries.
    size_t capacity = kMinCapacity;
    while (capacity * 3 < (shard.live + 1) * 2 * 4) capacity *= 2;
    auto next = std::make_unique<Table>(capacity);
    const Table& old = *shard.owned_table;
    for (size_t i = 0; i <= old.mask; ++i) {
      const Envelope* entry = old.cells[i].envelope.load(std::memory_order_relaxed);
      if (entry == nullptr || entry == Tombstone()) continue;
      Cell& cell = *FreeCell(*next, entry->l1.hash).first;
      cell.hash.store(entry->l1.hash, std::memory_order_relaxed);
      cell.envelope.store(entry, std::memory_order_relaxed);  // published by the table's store
    }
    shard.table.store(next.get());
    shard.waiting_tables.push_back({std::move(shard.owned_table), epoch_.load()});
    shard.owned_table = std::move(next);
    shard.used = shard.live;
  }
  const auto [cell, was_empty] = FreeCell(*shard.owned_table, slot.hash);
  cell->hash.store(slot.hash, std::memory_order_relaxed);
  cell->envelope.store(raw);  // publishes the entry and its slot
  shard.used += was_empty ? 1 : 0;
  ++shard.live;
  return true;
}

L1Stats L1Cache::Stats() const {
  L1Stats stats;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    stats.bytes += shard->bytes;
    stats.entries += shard->live;
    stats.evictions += shard->evictions;
    stats.stale += shard->stale;
    stats.rejected += shard->rejected;
    stats.waiting += shard->waiting_entries.size();
  }
  return stats;
}

}  // namespace turnpike::cache
