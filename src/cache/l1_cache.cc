#include "cache/l1_cache.h"

#include <boost/intrusive/list.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <string>
#include <unordered_map>

#include "cache/string_map.h"

namespace turnpike::cache {
namespace {

namespace bi = boost::intrusive;
using Hook = bi::list_member_hook<bi::link_mode<bi::normal_link>>;

struct Node {
  std::string id;
  std::string_view tenant;  // in id
  std::shared_ptr<const Envelope> envelope;
  size_t charge = 0;
  Hook lru_hook;     // the shard's LRU, most recent first
  Hook tenant_hook;  // the tenant's LRU within the shard
};

using LruList = bi::list<Node, bi::member_hook<Node, Hook, &Node::lru_hook>>;
using TenantList = bi::list<Node, bi::member_hook<Node, Hook, &Node::tenant_hook>>;

struct Tenant {
  size_t bytes = 0;
  TenantList lru;
};

}  // namespace

struct L1Cache::Shard {
  std::mutex mu;
  // Guarded by mu. Map keys view their node's id; nodes are owned by the map (open addressing:
  // an insert allocates only when the table grows).
  boost::unordered_flat_map<std::string_view, std::unique_ptr<Node>, IdHasher> nodes;
  std::unordered_map<std::string, Tenant, StringHash, std::equal_to<>> tenants;
  LruList lru;
  size_t bytes = 0;
  uint64_t evictions = 0;
  uint64_t stale = 0;
  uint64_t rejected = 0;

  ~Shard() {
    lru.clear();
    for (auto& [name, tenant] : tenants) tenant.lru.clear();
  }

  void Remove(Node& node) {
    auto tenant = tenants.find(node.tenant);
    tenant->second.lru.erase(tenant->second.lru.iterator_to(node));
    tenant->second.bytes -= node.charge;
    if (tenant->second.bytes == 0) tenants.erase(tenant);
    lru.erase(lru.iterator_to(node));
    bytes -= node.charge;
    nodes.erase(nodes.find(std::string_view(node.id)));  // destroys node: its last use
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

L1Cache::Shard& L1Cache::ShardFor(std::string_view id) {
  // The map hashes the same id again and places it by the hash's top bits (its tag is the low
  // byte): the shard choice uses bits from the middle, so that neither is correlated with it.
  return *shards_[(IdHash(id) >> kShardBitsShift) % shards_.size()];
}

std::shared_ptr<const Envelope> L1Cache::Find(std::string_view id, uint64_t generation,
                                              int64_t now_ms) {
  Shard& shard = ShardFor(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.nodes.find(id);
  if (it == shard.nodes.end()) return nullptr;
  Node& node = *it->second;
  // Newer than the caller's generation: a write and a fill landed since the caller read it.
  // The entry is good for everyone after this caller: keep it.
  if (node.envelope->generation > generation) return nullptr;
  if (node.envelope->generation != generation || node.envelope->Expired(now_ms)) {
    ++shard.stale;
    shard.Remove(node);
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, shard.lru.iterator_to(node));
  TenantList& tenant_lru = shard.tenants.find(node.tenant)->second.lru;
  tenant_lru.splice(tenant_lru.begin(), tenant_lru, tenant_lru.iterator_to(node));
  return node.envelope;
}

bool L1Cache::Insert(CacheKey key, std::shared_ptr<const Envelope> envelope) {
  const size_t charge = envelope->Charge() + key.id.size();
  // Built before the lock: allocation is not the shard's business. The node takes the key's
  // string (a move: the id's bytes stay where they are) and views the tenant in it.
  auto node = std::make_unique<Node>();
  node->id = std::move(key.id);
  node->tenant = std::string_view(node->id).substr(key.tenant_offset, key.tenant_length);
  const std::string_view id = node->id;
  const std::string_view tenant_id = node->tenant;
  Shard& shard = ShardFor(id);
  const uint64_t stored_generation = envelope->generation;
  node->envelope = std::move(envelope);
  node->charge = charge;

  std::lock_guard lock(shard.mu);
  if (auto it = shard.nodes.find(id); it != shard.nodes.end()) {
    // A late fill computed before a write must not displace the answer computed after it.
    if (it->second->envelope->generation > stored_generation) return false;
    shard.Remove(*it->second);
  }
  if (charge > shard_tenant_max_bytes_) {
    ++shard.rejected;
    return false;
  }
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
  Node& stored = *node;
  shard.nodes.emplace(id, std::move(node));
  shard.lru.push_front(stored);
  if (tenant == shard.tenants.end()) tenant = shard.tenants.emplace(tenant_id, Tenant{}).first;
  Tenant& owner = tenant->second;
  owner.lru.push_front(stored);
  owner.bytes += charge;
  shard.bytes += charge;
  return true;
}

L1Stats L1Cache::Stats() const {
  L1Stats stats;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    stats.bytes += shard->bytes;
    stats.entries += shard->nodes.size();
    stats.evictions += shard->evictions;
    stats.stale += shard->stale;
    stats.rejected += shard->rejected;
  }
  return stats;
}

}  // namespace turnpike::cache
