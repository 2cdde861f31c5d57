#include "cache/l1_cache.h"

#include <boost/intrusive/list.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <string>
#include <unordered_map>

#include "cache/string_map.h"

namespace turnpike::cache {
namespace {

namespace bi = boost::intrusive;

// The shard's LRU and each tenant's, most recent first, through the envelopes' own slots.
using LruList = bi::list<L1Slot, bi::member_hook<L1Slot, L1Slot::Hook, &L1Slot::lru>>;
using TenantList = bi::list<L1Slot, bi::member_hook<L1Slot, L1Slot::Hook, &L1Slot::tenant_lru>>;

struct Tenant {
  size_t bytes = 0;
  TenantList lru;
};

}  // namespace

struct L1Cache::Shard {
  std::mutex mu;
  // Guarded by mu. Map keys view their envelope's slot id; the map owns the entries (open
  // addressing: an insert allocates only when the table grows).
  boost::unordered_flat_map<HashedId, std::shared_ptr<const Envelope>, HashedIdHasher> entries;
  std::unordered_map<std::string, Tenant, StringHash, std::equal_to<>> tenants;
  LruList lru;
  size_t bytes = 0;
  uint64_t evictions = 0;
  uint64_t stale = 0;
  uint64_t rejected = 0;

  ~Shard() {
    // Unlinked before the entries go: a slot must not die linked.
    lru.clear();
    for (auto& [name, tenant] : tenants) tenant.lru.clear();
  }

  void Remove(L1Slot& slot) {
    auto tenant = tenants.find(slot.tenant);
    tenant->second.lru.erase(tenant->second.lru.iterator_to(slot));
    tenant->second.bytes -= slot.charge;
    if (tenant->second.bytes == 0) tenants.erase(tenant);
    lru.erase(lru.iterator_to(slot));
    bytes -= slot.charge;
    // May destroy the envelope, and the slot with it: its last use.
    entries.erase(entries.find(HashedId(slot.id, slot.hash)));
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
  // The map places the id by the same hash's top bits (its tag is the low byte): the shard
  // choice uses bits from the middle, so that neither is correlated with it.
  return *shards_[(hash >> kShardBitsShift) % shards_.size()];
}

std::shared_ptr<const Envelope> L1Cache::Find(HashedId id, uint64_t generation, int64_t now_ms) {
  Shard& shard = ShardFor(id.hash);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) return nullptr;
  const Envelope& envelope = *it->second;
  L1Slot& slot = envelope.l1;
  // Newer than the caller's generation: a write and a fill landed since the caller read it.
  // The entry is good for everyone after this caller: keep it.
  if (envelope.generation > generation) return nullptr;
  if (envelope.generation != generation || envelope.Expired(now_ms)) {
    ++shard.stale;
    shard.Remove(slot);
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, shard.lru.iterator_to(slot));
  TenantList& tenant_lru = shard.tenants.find(slot.tenant)->second.lru;
  tenant_lru.splice(tenant_lru.begin(), tenant_lru, tenant_lru.iterator_to(slot));
  return it->second;
}

bool L1Cache::Insert(CacheKey key, std::shared_ptr<const Envelope> envelope) {
  const size_t charge = envelope->Charge() + key.id.size();
  Shard& shard = ShardFor(key.hash);
  const uint64_t stored_generation = envelope->generation;
  L1Slot& slot = envelope->l1;

  std::lock_guard lock(shard.mu);
  if (slot.lru.is_linked()) return false;  // stored already (l1_cache.h)
  if (auto it = shard.entries.find(HashedId(key)); it != shard.entries.end()) {
    // A late fill computed before a write must not displace the answer computed after it.
    if (it->second->generation > stored_generation) return false;
    shard.Remove(it->second->l1);
  }
  if (charge > shard_tenant_max_bytes_) {
    ++shard.rejected;
    return false;
  }
  // The slot takes the key's string (a move: no copy) and views the tenant in it.
  slot.id = std::move(key.id);
  slot.hash = key.hash;
  slot.tenant = std::string_view(slot.id).substr(key.tenant_offset, key.tenant_length);
  slot.charge = charge;
  const std::string_view tenant_id = slot.tenant;
  auto tenant = shard.tenants.find(tenant_id);
  while (tenant != shard.tenants.end() && tenant->second.bytes + charge > shard_tenant_max_bytes_) {
    ++shard.evictions;
    shard.Remove(tenant->second.lru.back());
    tenant = shard.tenants.find(tenant_id);  // Remove erases a tenant left with no entry
  }
  while (shard.bytes + charge > shard_max_bytes_) {
    ++shard.evictions;
    shard.Remove(shard.lru.back());
  }
  shard.entries.emplace(HashedId(slot.id, slot.hash), std::move(envelope));
  shard.lru.push_front(slot);
  if (tenant == shard.tenants.end()) tenant = shard.tenants.emplace(tenant_id, Tenant{}).first;
  tenant->second.lru.push_front(slot);
  tenant->second.bytes += charge;
  shard.bytes += charge;
  return true;
}

L1Stats L1Cache::Stats() const {
  L1Stats stats;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    stats.bytes += shard->bytes;
    stats.entries += shard->entries.size();
    stats.evictions += shard->evictions;
    stats.stale += shard->stale;
    stats.rejected += shard->rejected;
  }
  return stats;
}

}  // namespace turnpike::cache
