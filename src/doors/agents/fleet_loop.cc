// The fleet loop (agent_door.h RunFleetLoop), on one worker of each replica: the running turns'
// locks and owner keys renewed every owner TTL / 3 (one round trip for all of them), and the
// sweep of background turns whose replica is gone, every sweep interval, on the one replica that
// holds the sweeper lease.
//
// The sweep: the responses still queued or in progress (one read), their owner keys (one MGET);
// a response with no owner is a suspect, failed once it has had none for a whole owner TTL (a
// Redis restart loses every owner key, and each live replica sets its turns' keys again within
// a third of that). So a turn whose replica died ends failed between one and two owner TTLs plus
// up to two sweep intervals after its last renewal. The update is conditional (still queued or
// in progress): a turn that ended meanwhile keeps its end.
#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <unordered_map>

#include "doors/agents/agent_door.h"
#include "doors/agents/fleet.h"

namespace turnpike::agents {
namespace net = boost::asio;

namespace {

constexpr int kRenewalsPerTtl = 3;
constexpr int kSweeperLeaseIntervals = 2;

using Suspects = std::unordered_map<std::string, SteadyClock::time_point>;

// A stored response whose replica is gone, as failed.
std::string OrphanBody(std::string_view body) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return std::string(body);
  boost::json::object& response = v.as_object();
  response["status"] = "failed";
  response["error"] = boost::json::object{
      {"code", "server_error"},
      {"message", "The gateway replica running this turn stopped before it ended."}};
  return boost::json::serialize(response);
}

net::awaitable<void> Sweep(Fleet& fleet, store::StoreThread* store, FleetLoopOptions options,
                           Suspects& suspects) {
  Result<bool> mine = co_await fleet.TakeSweep(kSweeperLeaseIntervals * options.sweep_interval);
  if (!mine.ok() || !*mine) {
    suspects.clear();
    co_return;
  }
  auto list = [](AgentStore& s) { return s.UnendedIds(); };
  Result<std::vector<std::string>> unended = co_await WithAgentStore<std::vector<std::string>>(
      store, std::move(list), store::JobLane::kRead);
  if (!unended.ok() || unended->empty()) {
    suspects.clear();
    co_return;
  }
  Result<std::vector<std::string>> unowned = co_await fleet.Unowned(std::move(*unended));
  if (!unowned.ok()) co_return;
  const SteadyClock::time_point now = SteadyClock::now();
  Suspects still;
  std::vector<std::string> orphans;
  for (std::string& id : *unowned) {
    auto it = suspects.find(id);
    const SteadyClock::time_point since = it == suspects.end() ? now : it->second;
    if (now - since >= options.owner_ttl) {
      orphans.push_back(std::move(id));
    } else {
      still.emplace(std::move(id), since);
    }
  }
  suspects = std::move(still);
  if (orphans.empty()) co_return;
  auto fail = [orphans](AgentStore& s) { return s.FailOrphans(orphans, OrphanBody); };
  Result<int64_t> failed =
      co_await WithAgentStore<int64_t>(store, std::move(fail), store::JobLane::kControl);
  if (!failed.ok()) {
    std::fprintf(stderr, "turnpike: agents: failing turns whose replica is gone: %s\n",
                 failed.error().message.c_str());
  }
}

}  // namespace

net::awaitable<void> RunFleetLoop(std::shared_ptr<AgentsShared> shared, store::StoreThread* store,
                                  FleetLoopOptions options) {
  net::any_io_executor executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor);
  const SteadyClock::duration renew_every = options.owner_ttl / kRenewalsPerTtl;
  SteadyClock::time_point next_renew = SteadyClock::now() + renew_every;
  SteadyClock::time_point next_sweep = SteadyClock::now() + options.sweep_interval;
  Suspects suspects;
  for (;;) {
    timer.expires_at(std::min(next_renew, next_sweep));
    auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    if (ec) co_return;
    if (SteadyClock::now() >= next_renew) {
      const Status renewed = co_await shared->fleet->Renew();
      (void)renewed;  // the next renewal, a third of a TTL later, tries again
      next_renew = SteadyClock::now() + renew_every;
    }
    if (SteadyClock::now() >= next_sweep) {
      co_await Sweep(*shared->fleet, store, options, suspects);
      next_sweep = SteadyClock::now() + options.sweep_interval;
    }
  }
}

}  // namespace turnpike::agents
