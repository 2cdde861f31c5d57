// The agent door in fleet mode (fleet.h): a conversation's memory claimed with its lock, a
// turn's end, a conversation written outside a turn, a cancel sent to another replica, and the
// fleet loop (renewals, the sweep of turns whose replica is gone). Embedded mode never comes
// here (AgentsShared::fleet is null).
#include "doors/agents/fleet.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <unordered_map>

#include "doors/agents/agent_door.h"

namespace turnpike::agents {
namespace net = boost::asio;

uint64_t RemoteStops::Wait(const std::string& response, OnStopped on_stopped) {
  std::lock_guard lock(mu_);
  const uint64_t ticket = next_++;
  waiting_.emplace(response, std::make_pair(ticket, std::move(on_stopped)));
  return ticket;
}

void RemoteStops::Forget(const std::string& response, uint64_t ticket) {
  std::lock_guard lock(mu_);
  auto [first, last] = waiting_.equal_range(response);
  for (auto it = first; it != last; ++it) {
    if (it->second.first == ticket) {
      waiting_.erase(it);
      return;
    }
  }
}

void RemoteStops::Stopped(const std::string& response, const std::string& body) {
  std::vector<OnStopped> called;
  {
    std::lock_guard lock(mu_);
    auto [first, last] = waiting_.equal_range(response);
    for (auto it = first; it != last; ++it) called.push_back(std::move(it->second.second));
    waiting_.erase(response);
  }
  for (OnStopped& on_stopped : called) on_stopped(body);
}

Error BusyError(const std::string& conversation) {
  return Error{ErrorCode::kConflict,
               "Another turn of conversation '" + conversation +
                   "' is in progress; send this one when it ends.",
               "conversation"};
}

net::awaitable<Result<std::shared_ptr<const Memory>>> AgentDoor::ClaimMemory(
    std::string id, int64_t window, std::string tenant, std::string response_id) {
  // This replica's slot first: a second turn here is refused with no round trip.
  if (!shared_.conversations.TryAcquire(id, response_id)) co_return BusyError(id);
  std::shared_ptr<const Memory> cached = shared_.conversations.FindMemory(id, SteadyClock::now());
  if (cached != nullptr && !cached->complete && cached->limit < window) cached = nullptr;
  if (cached != nullptr && cached->tenant != tenant) {
    shared_.conversations.Release(id);
    co_return std::shared_ptr<const Memory>();
  }
  std::string cached_version;
  if (cached != nullptr) cached_version = cached->version;
  Result<Fleet::Claim> claim =
      co_await shared_.fleet->ClaimConversation(id, response_id, tenant, cached_version);
  if (!claim.ok() || claim->busy) {
    shared_.conversations.Release(id);
    if (!claim.ok()) {
      co_return Error{ErrorCode::kUnavailable,
                      "The conversation's lock cannot be taken: " + claim.error().message, ""};
    }
    co_return BusyError(id);
  }
  if (cached != nullptr && claim->current) co_return cached;
  // Stale or missing here: the store's, at the version the claim read.
  shared_.conversations.Evict(id);
  Result<std::shared_ptr<const Memory>> loaded = co_await LoadMemory(id, window, tenant);
  if (!loaded.ok() || *loaded == nullptr) {
    const Result<std::string> released =
        co_await shared_.fleet->Release(id, response_id, /*wrote=*/false);
    (void)released;  // a lock not released expires after the owner TTL
    shared_.conversations.Release(id);
    co_return loaded;
  }
  auto tagged = std::make_shared<Memory>(**loaded);
  tagged->version = claim->version;
  shared_.conversations.PutMemory(id, tagged, SteadyClock::now());
  co_return std::shared_ptr<const Memory>(std::move(tagged));
}

net::awaitable<void> AgentDoor::EndClaim(std::string id, std::string response_id, bool wrote,
                                         std::shared_ptr<Memory> written) {
  Result<std::string> version = co_await shared_.fleet->Release(id, response_id, wrote);
  if (!version.ok()) {
    // The version may not have moved: other replicas see this turn's items once their cached
    // memory's TTL (agents.cache_ttl) has passed; this one reads the store next time.
    std::fprintf(stderr, "turnpike: agents: releasing conversation %s: %s\n", id.c_str(),
                 version.error().message.c_str());
    shared_.conversations.Evict(id);
  } else if (written != nullptr) {
    written->version = *version;
    shared_.conversations.PutMemory(id, std::move(written), SteadyClock::now());
  }
  shared_.conversations.Release(id);
}

net::awaitable<void> AgentDoor::BumpConversation(std::string id) {
  if (shared_.fleet == nullptr) co_return;
  const Status bumped = co_await shared_.fleet->Bump(id);
  if (!bumped.ok()) {
    std::fprintf(stderr, "turnpike: agents: conversation %s written, its version not bumped: %s\n",
                 id.c_str(), bumped.error().message.c_str());
  }
}

net::awaitable<std::optional<std::string>> AgentDoor::CancelElsewhere(std::string id,
                                                                      std::string tenant,
                                                                      std::chrono::seconds wait) {
  constexpr std::chrono::milliseconds kStorePoll{250};
  net::any_io_executor executor = co_await net::this_coro::executor;
  auto timer = std::make_shared<net::steady_timer>(executor);
  auto stopped = std::make_shared<std::string>();
  // Waiting before the cancel is sent: the answer cannot come before it.
  const uint64_t ticket =
      shared_.remote_stops.Wait(id, [executor, timer, stopped](std::string body) {
        net::post(executor, [timer, stopped, body = std::move(body)]() mutable {
          *stopped = std::move(body);
          timer->cancel();
        });
      });
  Result<bool> sent = co_await shared_.fleet->SendCancel(id, tenant);
  std::optional<std::string> answer;
  const auto deadline = SteadyClock::now() + wait;
  // The owner's answer, or the stored end (a message lost in a reconnect), every kStorePoll.
  while (sent.ok() && *sent && SteadyClock::now() < deadline && stopped->empty()) {
    timer->expires_after(kStorePoll);
    auto waited = co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    (void)waited;
    if (!stopped->empty()) break;
    auto get = [id](AgentStore& s) { return s.GetResponse(id); };
    Result<std::optional<ResponseRow>> row = co_await WithAgentStore<std::optional<ResponseRow>>(
        context_.store, std::move(get), store::JobLane::kRead);
    if (row.ok() && row.value() && (*row)->status != "queued" && (*row)->status != "in_progress") {
      answer = (*row)->body;
      break;
    }
  }
  shared_.remote_stops.Forget(id, ticket);
  if (!stopped->empty()) answer = std::move(*stopped);
  co_return answer;
}

}  // namespace turnpike::agents
