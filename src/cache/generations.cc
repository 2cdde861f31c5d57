#include "cache/generations.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/string_map.h"

namespace turnpike::cache {

struct Generations::Shard {
  std::mutex mu;
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> counters;  // mu
};

Generations::Generations() {
  for (auto& shard : shards_) shard = std::make_unique<Shard>();
}

Generations::~Generations() = default;

Generations::Shard& Generations::ShardFor(std::string_view ns_id) const {
  return *shards_[(std::hash<std::string_view>{}(ns_id) >> 56) % kShards];
}

uint64_t Generations::Current(std::string_view ns_id) const {
  Shard& shard = ShardFor(ns_id);
  std::lock_guard lock(shard.mu);
  auto it = shard.counters.find(ns_id);
  return it == shard.counters.end() ? 0 : it->second;
}

uint64_t Generations::Bump(std::string_view ns_id) {
  Shard& shard = ShardFor(ns_id);
  std::lock_guard lock(shard.mu);
  auto it = shard.counters.find(ns_id);
  if (it == shard.counters.end()) it = shard.counters.emplace(std::string(ns_id), 0).first;
  return ++it->second;
}

}  // namespace turnpike::cache
