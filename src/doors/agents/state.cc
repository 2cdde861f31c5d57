#include "doors/agents/state.h"

#include <boost/asio/post.hpp>

namespace turnpike::agents {

std::shared_ptr<const Agent> AgentCache::Find(const std::string& key, SteadyClock::time_point now) {
  if (ttl_.count() == 0) return nullptr;
  Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(key);
  if (it == shard.entries.end()) return nullptr;
  const Entry& e = it->second;
  if (e.generation != generation_.load(std::memory_order_acquire) || now - e.loaded >= ttl_) {
    return nullptr;
  }
  return e.agent;
}

void AgentCache::Put(const std::string& key, std::shared_ptr<const Agent> agent,
                     SteadyClock::time_point now) {
  if (ttl_.count() == 0) return;
  Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  std::lock_guard lock(shard.mu);
  // Bounded by clearing: a replica serves few agents; a full shard starts over.
  if (shard.entries.size() >= kMaxEntriesPerShard) shard.entries.clear();
  shard.entries[key] = Entry{std::move(agent), now, generation};
}

ConversationTable::Shard& ConversationTable::ShardOf(const std::string& id) {
  return shards_[std::hash<std::string>{}(id) % kShards];
}

bool ConversationTable::TryAcquire(const std::string& id, const std::string& response_id) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  Entry& e = shard.entries[id];
  if (!e.holder.empty()) return false;
  e.holder = response_id;
  return true;
}

void ConversationTable::Release(const std::string& id) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) return;
  it->second.holder.clear();
  if (!it->second.memory) shard.entries.erase(it);
}

std::string ConversationTable::Holder(const std::string& id) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  return it == shard.entries.end() ? std::string() : it->second.holder;
}

std::shared_ptr<const Memory> ConversationTable::FindMemory(const std::string& id,
                                                            SteadyClock::time_point now) {
  if (ttl_.count() == 0) return nullptr;
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end() || !it->second.memory) return nullptr;
  if (now - it->second.loaded >= ttl_) return nullptr;
  return it->second.memory;
}

void ConversationTable::PutMemory(const std::string& id, std::shared_ptr<const Memory> memory,
                                  SteadyClock::time_point now) {
  if (ttl_.count() == 0) return;
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  if (shard.entries.size() >= kMaxEntriesPerShard) {
    // Bounded: drop the memories (never a held slot) and start over.
    for (auto it = shard.entries.begin(); it != shard.entries.end();) {
      it = it->second.holder.empty() ? shard.entries.erase(it) : std::next(it);
    }
  }
  Entry& e = shard.entries[id];
  e.memory = std::move(memory);
  e.loaded = now;
}

void ConversationTable::Evict(const std::string& id) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) return;
  if (it->second.holder.empty()) {
    shard.entries.erase(it);
  } else {
    it->second.memory.reset();
  }
}

void TurnControl::Cancel(OnStopped on_stopped) {
  {
    std::lock_guard lock(mu_);
    cancelled_.store(true, std::memory_order_release);
    if (!stopped_) {
      if (on_stopped) waiting_.push_back(std::move(on_stopped));
      on_stopped = nullptr;
    }
  }
  // Already stopped: answered at once (on the turn's worker, like any other answer).
  boost::asio::post(executor_, [self = shared_from_this(), on_stopped = std::move(on_stopped)] {
    if (on_stopped) {
      on_stopped(self->response_);
    } else if (self->abandon_) {
      self->abandon_();
    }
  });
}

void TurnControl::Stopped(const std::string& response) {
  std::vector<OnStopped> waiting;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    response_ = response;
    waiting.swap(waiting_);
  }
  abandon_ = nullptr;
  for (OnStopped& w : waiting) w(response);
}

void TurnRegistry::Add(const std::string& response_id, std::shared_ptr<TurnControl> turn) {
  std::lock_guard lock(mu_);
  turns_[response_id] = std::move(turn);
}

void TurnRegistry::Remove(const std::string& response_id) {
  std::lock_guard lock(mu_);
  turns_.erase(response_id);
}

bool TurnRegistry::Cancel(const std::string& response_id, std::string_view tenant,
                          TurnControl::OnStopped on_stopped) {
  std::shared_ptr<TurnControl> turn;
  {
    std::lock_guard lock(mu_);
    auto it = turns_.find(response_id);
    if (it == turns_.end() || it->second->tenant() != tenant) return false;
    turn = it->second;
  }
  turn->Cancel(std::move(on_stopped));
  return true;
}

std::shared_ptr<EventLog> TurnRegistry::FindLog(const std::string& response_id,
                                                std::string_view tenant) {
  std::lock_guard lock(mu_);
  auto it = turns_.find(response_id);
  if (it == turns_.end() || it->second->tenant() != tenant) return nullptr;
  return it->second->log();
}

}  // namespace turnpike::agents
