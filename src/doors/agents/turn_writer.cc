#include "doors/agents/turn_writer.h"

#include <algorithm>

#include "observability/metrics.h"
#include "store/store_thread.h"

namespace turnpike::agents {
namespace net = boost::asio;

net::awaitable<Result<std::vector<ItemRow>>> TurnWriter::Save(store::StoreThread* store,
                                                              TurnWrite write) {
  if (store == nullptr) co_return Error{ErrorCode::kUnavailable, "the store is not open", ""};
  auto pending = std::make_shared<Pending>();
  pending->write = std::move(write);
  {
    std::lock_guard lock(mu_);
    queued_.push_back(pending);
  }
  auto job = [this, pending](store::Engine& engine) -> Result<std::vector<ItemRow>> {
    pending->ran = true;
    AgentStore* agents = engine.role<AgentStore>();
    if (agents == nullptr) {
      std::lock_guard lock(mu_);
      queued_.erase(std::remove(queued_.begin(), queued_.end(), pending), queued_.end());
      return Error{ErrorCode::kInternal, "the agents role is missing", ""};
    }
    return Run(*agents, pending);
  };
  Result<std::vector<ItemRow>> saved =
      co_await store->Call<std::vector<ItemRow>>(std::move(job), store::JobLane::kControl);
  if (!pending->ran) {
    // Refused: out of the queue, unless a running group took it (see the header).
    std::lock_guard lock(mu_);
    queued_.erase(std::remove(queued_.begin(), queued_.end(), pending), queued_.end());
  }
  co_return saved;
}

Result<std::vector<ItemRow>> TurnWriter::Run(AgentStore& store,
                                             const std::shared_ptr<Pending>& own) {
  if (own->result) return std::move(*own->result);
  std::vector<std::shared_ptr<Pending>> group;
  {
    std::lock_guard lock(mu_);
    group.swap(queued_);
  }
  // `own` is among them: its write was queued before its job was posted, and no earlier job
  // took it (its result would be set).
  std::vector<const TurnWrite*> writes;
  writes.reserve(group.size());
  for (const std::shared_ptr<Pending>& p : group) writes.push_back(&p->write);
  if (writes.empty()) return Error{ErrorCode::kInternal, "a turn's write was not queued", ""};
  std::vector<Result<std::vector<ItemRow>>> saved = store.SaveTurns(writes);
  writes_.fetch_add(group.size(), std::memory_order_relaxed);
  commits_.fetch_add(1, std::memory_order_relaxed);
  for (size_t i = 0; i < group.size(); ++i) group[i]->result = std::move(saved[i]);
  if (!own->result) return Error{ErrorCode::kInternal, "a turn's write was not queued", ""};
  return std::move(*own->result);
}

void TurnWriter::RenderMetrics(observability::PrometheusWriter& w) const {
  constexpr std::string_view kWrites = "turnpike_agent_turn_writes_total";
  constexpr std::string_view kCommits = "turnpike_agent_turn_commits_total";
  w.Family(kWrites, "Agent turns' store writes (their items and response)",
           observability::MetricType::kCounter);
  w.Sample(kWrites, {}, static_cast<double>(writes()));
  w.Family(kCommits, "Transactions that carried the agent turns' store writes (a group commit)",
           observability::MetricType::kCounter);
  w.Sample(kCommits, {}, static_cast<double>(commits()));
}

}  // namespace turnpike::agents
