// Retention: stored responses and conversations older than agents.retention are purged (the
// default, 30 days, is what OpenAI keeps a stored response for). A response's age is its
// creation; a conversation's is its last activity (its creation, or its newest item's: a turn,
// or an item added through the items API). A response still queued or in progress is never
// purged; its end stores it anew.
//
// The purge runs on the store thread, in bounded jobs (AgentStore::PurgeExpired: at most
// `batch` responses and `batch` conversations per job, one transaction), so it never holds the
// control lane for long: a full batch is followed at once by another job queued behind any
// other work; a short one by a wait of `interval`. What a job purged is evicted from this
// replica's conversation table when it returns; other replicas drop it when their entry's ttl
// passes (agents.cache_ttl), and a read of a purged id is a 404 everywhere. What was purged is
// counted in /metrics (turnpike_agent_purged_total{kind="response"|"conversation"}). In fleet
// mode every replica runs the loop over the shared store: the same statements, idempotent.
//
// A turn that started on a conversation just before it was purged stores its items under an
// id that no longer exists (no conversation row): they are unreachable through the API and
// left for a later cleanup (not done).
//
// Ownership and threads: one loop per process, spawned on worker 0's io_context at start-up
// (agent_door.cc); it owns a share of the feature's state, and its frame is destroyed with the
// io_context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

#include "doors/agents/state.h"
#include "store/store_thread.h"

namespace turnpike::agents {

inline constexpr int64_t kPurgeBatch = 500;

struct RetentionOptions {
  std::chrono::milliseconds retention{0};  // 0: keep forever (no loop)
  std::chrono::milliseconds interval{60'000};
  int64_t batch = kPurgeBatch;
};

// Purges every `interval` until the io_context stops; each job's errors are logged to stderr.
boost::asio::awaitable<void> PurgeLoop(store::StoreThread* store,
                                       std::shared_ptr<AgentsShared> shared,
                                       RetentionOptions options);

}  // namespace turnpike::agents
