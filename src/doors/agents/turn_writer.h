// TurnWriter: the turns' store writes with a group commit. A turn's write (its input and output
// items and its response, AgentStore::SaveTurn) was one transaction per turn, and most of the
// store thread's cost per turn was the commit: SQLite writes every page the transaction
// dirtied, whole (4 KiB: sqlite.cc), to the WAL, and the pages concurrent turns dirty are mostly
// the same ones (the right edges of the ids' indexes and of the responses' table and age index,
// since ids are time-ordered: agent.h MintId). So the writes queued when the store thread comes to
// them go in one transaction (AgentStore::SaveTurns), as the call log's batches do
// (store/store_thread.h): nothing waits to make a group; under load one commit carries many
// turns, and a lone turn commits alone, as before.
//
// How: Save queues the write here, then posts its own job (kControl lane). The first of those
// jobs to run takes every write queued (its own among them) and writes them together; a job
// whose write an earlier job took finds its result waiting and returns it. This relies on the
// kControl lane running its jobs one at a time, in order (store_thread.h), so a result is set
// on the thread that later reads it, before its job runs.
//
// Statements: the same per turn as SaveTurn (agent_store.h), with one BEGIN and COMMIT per group
// instead of per turn. A turn's result is its own: a failure rolls the group back and writes each
// turn alone (SaveTurns).
//
// A job the store thread refuses (its queues full or closed) answers kUnavailable: its write is
// taken out of the queue unless a running group already took it, in which case it is stored
// although its turn reports the error (the turn then evicts its cached memory, so the next turn
// reads what the store has).
//
// Counted (/metrics): turnpike_agent_turn_writes_total (writes) and
// turnpike_agent_turn_commits_total (transactions that carried them).
// Threads: Save from any worker; the queue behind one short lock, never held across the write.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/result.h"
#include "doors/agents/agent_store.h"

namespace turnpike::store {
class StoreThread;
}
namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::agents {

class TurnWriter {
 public:
  // The turn's write, stored with whatever other turns' writes are queued with it; the items'
  // rows (with their seq) in order. kUnavailable when `store` is null or refuses the job.
  boost::asio::awaitable<Result<std::vector<ItemRow>>> Save(store::StoreThread* store,
                                                            TurnWrite write);

  uint64_t writes() const { return writes_.load(std::memory_order_relaxed); }
  uint64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  void RenderMetrics(observability::PrometheusWriter& w) const;

 private:
  struct Pending {
    TurnWrite write;
    std::optional<Result<std::vector<ItemRow>>> result;  // set on the store thread
    bool ran = false;                                    // its job ran (not refused)
  };
  // On the store thread: `own`'s result, writing every queued write first unless an earlier
  // job did.
  Result<std::vector<ItemRow>> Run(AgentStore& store, const std::shared_ptr<Pending>& own);

  std::mutex mu_;
  std::vector<std::shared_ptr<Pending>> queued_;  // guarded by mu_
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> commits_{0};
};

}  // namespace turnpike::agents
