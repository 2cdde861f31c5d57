#include "doors/agents/retention.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <tuple>

#include "common/clock.h"
#include "doors/agents/agent_door.h"

namespace turnpike::agents {
namespace net = boost::asio;

net::awaitable<void> PurgeLoop(store::StoreThread* store, std::shared_ptr<AgentsShared> shared,
                               RetentionOptions options) {
  const net::any_io_executor executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor);
  const int64_t retention_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(options.retention).count();
  bool full = false;
  while (true) {
    if (!full) {
      timer.expires_after(options.interval);
      const std::tuple<boost::system::error_code> waited =
          co_await timer.async_wait(net::as_tuple(net::use_awaitable));
      if (std::get<0>(waited)) co_return;
    }
    const int64_t cutoff = UnixSeconds() - retention_seconds;
    const int64_t batch = options.batch;
    auto purge = [cutoff, batch](AgentStore& s) { return s.PurgeExpired(cutoff, batch); };
    const Result<PurgeResult> purged =
        co_await WithAgentStore<PurgeResult>(store, std::move(purge), store::JobLane::kControl);
    if (!purged.ok()) {
      std::fprintf(stderr, "turnpike: agents: retention purge: %s\n",
                   purged.error().message.c_str());
      full = false;
      continue;
    }
    for (const std::string& id : purged->conversations) shared->conversations.Evict(id);
    shared->purged_responses.fetch_add(purged->responses.size(), std::memory_order_relaxed);
    shared->purged_conversations.fetch_add(purged->conversations.size(), std::memory_order_relaxed);
    full = static_cast<int64_t>(purged->responses.size()) >= batch ||
           static_cast<int64_t>(purged->conversations.size()) >= batch;
  }
}

}  // namespace turnpike::agents
