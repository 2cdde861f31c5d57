// The agent door's in-process state, which is what lets a warm turn reach the model without a
// database statement: agents' configs, conversations' memory and their one-turn-at-a-time
// slot, and the turns in flight. All process-wide (a conversation's next turn may arrive on any
// worker), behind short sharded locks held for a hash lookup, never across I/O or a co_await.
//
// Freshness: a write through this replica evicts at once (AgentCache by a process-wide
// generation; ConversationTable::Evict); a write on another replica is seen when the entry's
// `ttl` has passed (agents.cache_ttl); ttl 0 reads through on every turn.
//
// AgentsShared also holds the agents' budget scopes (budgets.h), the turn-event subscribers
// (turn_events.h), the turns' grouped store writes (turn_writer.h) and the feature's /metrics
// counters.
// In fleet mode a conversation's memory carries the version it was read at, and a turn uses it
// only when the version in Redis is the same (fleet.h): a write on another replica is seen at
// once, not after the TTL.
//
// A conversation's memory here is the tail of its items, oldest first, parsed; `complete`
// when it holds every item the conversation has, else the last `limit` only (a turn whose
// window is larger reads the store). A turn keeps at most twice its window (the cost of the
// next turn's copy of the list stays bounded).
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/json/array.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "doors/agents/agent.h"
#include "doors/agents/budgets.h"
#include "doors/agents/event_log.h"
#include "doors/agents/fleet.h"
#include "doors/agents/items.h"
#include "doors/agents/turn_events.h"
#include "doors/agents/turn_writer.h"

namespace turnpike::agents {

using SteadyClock = std::chrono::steady_clock;

// The replica's agents, by "id" and "id@version", shared by every worker (a turn on any
// worker finds what another loaded). Thread-safe: sharded, each shard's lock held for one hash
// lookup.
class AgentCache {
 public:
  // At start-up, before any worker runs.
  void set_ttl(std::chrono::milliseconds ttl) { ttl_ = ttl; }
  std::shared_ptr<const Agent> Find(const std::string& key, SteadyClock::time_point now);
  void Put(const std::string& key, std::shared_ptr<const Agent> agent, SteadyClock::time_point now);
  // Every agent write on this replica: what is cached is read again.
  void Bump() { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  struct Entry {
    std::shared_ptr<const Agent> agent;
    SteadyClock::time_point loaded;
    uint64_t generation = 0;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxEntriesPerShard = 1024;

  std::chrono::milliseconds ttl_{0};
  std::atomic<uint64_t> generation_{0};
  std::array<Shard, kShards> shards_;
};

struct Memory {
  std::string tenant;
  std::vector<std::shared_ptr<const MemoryItem>> items;  // oldest first
  bool complete = false;
  int64_t limit = 0;    // when not complete: how many it holds
  std::string version;  // fleet mode: the conversation's version it was read at (fleet.h)
};

// A turn's control, shared by its worker and whoever cancels it (the cancel route, a deleted
// conversation) or resumes its stream (a background turn's `log`, nullptr for another).
// Thread-safe; the turn's `abandon` runs only on its worker.
class TurnControl : public std::enable_shared_from_this<TurnControl> {
 public:
  using OnStopped = std::function<void(std::string response)>;
  TurnControl(boost::asio::any_io_executor executor, std::string tenant,
              std::shared_ptr<EventLog> log = nullptr)
      : executor_(std::move(executor)), tenant_(std::move(tenant)), log_(std::move(log)) {}

  const std::string& tenant() const { return tenant_; }
  const std::shared_ptr<EventLog>& log() const { return log_; }
  // Any thread: asks the turn to stop. `on_stopped` (may be empty) is called, on the turn's
  // worker, with the response object once the turn has ended and stored it.
  void Cancel(OnStopped on_stopped);
  // The turn's worker: whether a cancel was asked; what stops the call while it runs (empty
  // when none runs); the end, which answers every waiting canceller.
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  void SetAbandon(std::function<void()> abandon) { abandon_ = std::move(abandon); }
  void Stopped(const std::string& response);

 private:
  const boost::asio::any_io_executor executor_;
  const std::string tenant_;
  const std::shared_ptr<EventLog> log_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> abandon_;  // the worker's only
  std::mutex mu_;
  bool stopped_ = false;
  std::string response_;  // once stopped
  std::vector<OnStopped> waiting_;
};

class ConversationTable {
 public:
  // At start-up, before any worker runs.
  void set_ttl(std::chrono::milliseconds ttl) { ttl_ = ttl; }

  // The conversation's turn slot: false when a turn holds it.
  bool TryAcquire(const std::string& id, const std::string& response_id);
  void Release(const std::string& id);
  // The response id of the turn holding the slot ("" when none).
  std::string Holder(const std::string& id);

  std::shared_ptr<const Memory> FindMemory(const std::string& id, SteadyClock::time_point now);
  void PutMemory(const std::string& id, std::shared_ptr<const Memory> memory,
                 SteadyClock::time_point now);
  void Evict(const std::string& id);

 private:
  struct Entry {
    std::shared_ptr<const Memory> memory;
    SteadyClock::time_point loaded;
    std::string holder;  // the turn holding the slot
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxEntriesPerShard = 8192;
  Shard& ShardOf(const std::string& id);

  std::chrono::milliseconds ttl_{0};
  std::array<Shard, kShards> shards_;
};

// Turns running on this replica, by response id.
class TurnRegistry {
 public:
  void Add(const std::string& response_id, std::shared_ptr<TurnControl> turn);
  void Remove(const std::string& response_id);
  // Cancels the turn when it runs here and belongs to `tenant`; false otherwise.
  bool Cancel(const std::string& response_id, std::string_view tenant,
              TurnControl::OnStopped on_stopped);
  // The event log of a background turn running here for `tenant` (nullptr otherwise).
  std::shared_ptr<EventLog> FindLog(const std::string& response_id, std::string_view tenant);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<TurnControl>> turns_;
};

// What every worker's agent door and the admin routes share (one per feature).
struct AgentsShared {
  // At start-up, before any worker runs: the caches' ttl, the counters engine the agents'
  // budgets come from (null without governance), and the first turn-event subscriber.
  void Configure(std::chrono::milliseconds cache_ttl, governance::Counters* counters) {
    agents.set_ttl(cache_ttl);
    conversations.set_ttl(cache_ttl);
    budgets.set_counters(counters);
    if (!configured_) events.Subscribe([this](const TurnEvent& e) { turn_counts.Count(e); });
    configured_ = true;
  }
  AgentCache agents;
  ConversationTable conversations;
  TurnRegistry turns;
  AgentBudgets budgets;
  TurnEvents events;  // subscribe at start-up only (turn_events.h)
  TurnWriter writer;  // the turns' store writes, grouped (turn_writer.h)
  TurnCounters turn_counts;
  // Purged by retention (retention.h), for /metrics.
  std::atomic<uint64_t> purged_responses{0};
  std::atomic<uint64_t> purged_conversations{0};
  // Fleet mode (fleet.h): set at start-up, before any worker runs; null in embedded mode.
  std::unique_ptr<Fleet> fleet;
  RemoteStops remote_stops;

 private:
  bool configured_ = false;
};

}  // namespace turnpike::agents
