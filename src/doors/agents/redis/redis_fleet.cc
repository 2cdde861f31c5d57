#include "doors/agents/redis/redis_fleet.h"

#include <boost/asio/awaitable.hpp>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/bridge.h"
#include "observability/metrics.h"
#include "redis/agent_scripts.h"
#include "redis/client.h"
#include "redis/subscriber.h"

namespace turnpike::agents {
namespace net = boost::asio;
using redis::Op;
using redis::Reply;

namespace {

// How long a cancel flag waits for its turn's owner to read it after a reconnect.
constexpr std::chrono::milliseconds kCancelFlagTtl{60'000};
constexpr std::string_view kVersionTtlSeconds = "604800";  // the scripts' EX

enum Phase : size_t { kBeforeFirstToken, kEnd, kRenew, kCancel, kBump, kSweep, kPhaseCount };
constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "before_first_token", "end", "renew", "cancel", "bump", "sweep"};

Error BadReply(std::string_view what) {
  return Error{ErrorCode::kUpstreamBadResponse, "unexpected Redis reply to " + std::string(what),
               ""};
}

std::string Ms(std::chrono::milliseconds d) { return std::to_string(d.count()); }

// The message's fields, split at the first `parts - 1` newlines.
std::vector<std::string_view> Fields(std::string_view text, size_t parts) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < parts) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    fields.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  fields.push_back(text);
  return fields;
}

}  // namespace

// What the subscriber's handler and hook share with the fleet (redis_fleet.h, ownership).
struct RedisFleet::State {
  struct Running {
    std::string conversation;  // "" outside a conversation
    std::string tenant;
  };
  explicit State(redis::Client& c) : client(c) {}

  void Count(Phase phase) { round_trips[phase].fetch_add(1, std::memory_order_relaxed); }
  void Submit(Phase phase, Op op, std::vector<std::string> args, redis::Callback done) {
    Count(phase);
    client.Submit(op, std::move(args), std::move(done));
  }

  redis::Client& client;
  std::array<std::atomic<uint64_t>, kPhaseCount> round_trips{};
  // Guards `running` and orders Release after Renew (redis_fleet.h): held across Submit, which
  // only posts.
  std::mutex mu;
  std::unordered_map<std::string, Running> running;  // by response id
  Fleet::Inbox inbox;                                // set once, at Start
};

namespace {

// Submits one command and resumes the caller on its own executor with the reply
// (net/bridge.h). With `release`, the turn is dropped from `running` and the command submitted
// under one hold of `mu` (the order Renew relies on).
net::awaitable<Result<Reply>> Call(RedisFleet::State& state, Phase phase, Op op,
                                   std::vector<std::string> args,
                                   const std::string* release = nullptr) {
  auto submit = [&state, phase, op, release, command = std::move(args)](auto done) mutable {
    auto shared = std::make_shared<decltype(done)>(std::move(done));
    auto callback = [shared](Result<Reply> reply) { std::move (*shared)(std::move(reply)); };
    if (release == nullptr) {
      state.Submit(phase, op, std::move(command), std::move(callback));
      return;
    }
    std::lock_guard lock(state.mu);
    state.running.erase(*release);
    state.Submit(phase, op, std::move(command), std::move(callback));
  };
  auto job = turnpike::net::AwaitJob<Result<Reply>>(std::move(submit));
  Result<Reply> reply = co_await std::move(job);
  if (reply.ok() && reply->is_error()) {
    co_return Error{ErrorCode::kUnavailable, "redis: " + reply->text, ""};
  }
  co_return reply;
}

std::string OwnerValue(const std::string& replica, const std::string& tenant) {
  return replica + "\n" + tenant;
}

}  // namespace

RedisFleet::RedisFleet(redis::Client& client, redis::Subscriber& subscriber,
                       RedisFleetOptions options)
    : options_(std::move(options)),
      client_(client),
      subscriber_(subscriber),
      state_(std::make_shared<State>(client)) {}

RedisFleet::~RedisFleet() = default;

void RedisFleet::Start(Inbox inbox) {
  state_->inbox = std::move(inbox);
  std::weak_ptr<State> weak = state_;
  subscriber_.Subscribe(std::string(redis::kAgentChannelPrefix) + options_.replica,
                        [weak](std::string_view, std::string_view payload) {
                          std::shared_ptr<State> state = weak.lock();
                          if (state == nullptr) return;
                          const std::vector<std::string_view> kind = Fields(payload, 2);
                          if (kind.size() < 2) return;
                          if (kind[0] == "cancel") {
                            const std::vector<std::string_view> f = Fields(kind[1], 3);
                            if (f.size() == 3 && state->inbox.cancel) {
                              state->inbox.cancel(std::string(f[0]), std::string(f[1]),
                                                  std::string(f[2]));
                            }
                          } else if (kind[0] == "stopped") {
                            const std::vector<std::string_view> f = Fields(kind[1], 2);
                            if (f.size() == 2 && state->inbox.stopped) {
                              state->inbox.stopped(std::string(f[0]), std::string(f[1]));
                            }
                          }
                        });
  // A cancel published while the subscriber was away is still in its turn's flag.
  subscriber_.OnConnected([weak] {
    std::shared_ptr<State> state = weak.lock();
    if (state == nullptr) return;
    std::vector<std::string> ids;
    std::vector<std::string> tenants;
    std::vector<std::string> command{"MGET"};
    {
      std::lock_guard lock(state->mu);
      for (const auto& [id, running] : state->running) {
        ids.push_back(id);
        tenants.push_back(running.tenant);
        command.push_back(std::string(redis::kAgentCancelPrefix) + id);
      }
    }
    if (ids.empty()) return;
    state->Submit(kCancel, Op::kAgentFlags, std::move(command),
                  [weak, ids, tenants](Result<Reply> reply) {
                    std::shared_ptr<State> state = weak.lock();
                    if (state == nullptr || !reply.ok() || reply->type != Reply::Type::kArray ||
                        reply->items.size() != ids.size() || !state->inbox.cancel) {
                      return;
                    }
                    for (size_t i = 0; i < ids.size(); ++i) {
                      const Reply& flag = reply->items[i];
                      if (flag.type != Reply::Type::kString) continue;
                      state->inbox.cancel(ids[i], tenants[i], flag.text);
                    }
                  });
  });
}

std::string RedisFleet::NewVersion() {
  return options_.replica + ":" +
         std::to_string(versions_.fetch_add(1, std::memory_order_relaxed) + 1);
}

net::awaitable<Result<Fleet::Claim>> RedisFleet::ClaimConversation(std::string conversation,
                                                                   std::string response,
                                                                   std::string tenant,
                                                                   std::string cached_version) {
  std::vector<std::string> command{"EVALSHA",
                                   client_.Sha(options_.first_script + redis::kAgentClaim),
                                   "3",
                                   std::string(redis::kAgentLockPrefix) + conversation,
                                   std::string(redis::kAgentVersionPrefix) + conversation,
                                   std::string(redis::kAgentOwnerPrefix) + response,
                                   response,
                                   Ms(options_.owner_ttl),
                                   std::move(cached_version),
                                   OwnerValue(options_.replica, tenant),
                                   NewVersion()};
  Result<Reply> reply =
      co_await Call(*state_, kBeforeFirstToken, Op::kAgentClaim, std::move(command));
  Claim claim;
  std::optional<Error> error;
  if (!reply.ok()) {
    error = reply.error();
  } else if (reply->type != Reply::Type::kArray || reply->items.size() < 2 ||
             reply->items[0].type != Reply::Type::kInteger) {
    error = BadReply("the claim script");
  } else if (reply->items[0].integer == 0) {
    claim.busy = true;
  } else if (reply->items.size() != 3) {
    error = BadReply("the claim script");
  } else {
    claim.version = std::move(reply->items[1].text);
    claim.current = reply->items[2].integer == 1;
  }
  if (error) co_return *error;
  if (!claim.busy) {
    // Renewed from now on (the claim gave the lock and owner key a whole TTL).
    std::lock_guard lock(state_->mu);
    state_->running[response] = State::Running{std::move(conversation), std::move(tenant)};
  }
  co_return claim;
}

void RedisFleet::Own(std::string response, std::string tenant) {
  std::vector<std::string> command{"SET", std::string(redis::kAgentOwnerPrefix) + response,
                                   OwnerValue(options_.replica, tenant), "PX",
                                   Ms(options_.owner_ttl)};
  std::lock_guard lock(state_->mu);
  state_->running[response] = State::Running{"", std::move(tenant)};
  state_->Submit(kBeforeFirstToken, Op::kAgentOwn, std::move(command), [](Result<Reply>) {});
}

net::awaitable<Result<std::string>> RedisFleet::Release(std::string conversation,
                                                        std::string response, bool wrote) {
  std::string version = wrote ? NewVersion() : std::string();
  std::vector<std::string> command{"EVALSHA",
                                   client_.Sha(options_.first_script + redis::kAgentRelease),
                                   "3",
                                   std::string(redis::kAgentLockPrefix) + conversation,
                                   std::string(redis::kAgentVersionPrefix) + conversation,
                                   std::string(redis::kAgentOwnerPrefix) + response,
                                   response,
                                   version};
  Result<Reply> reply =
      co_await Call(*state_, kEnd, Op::kAgentRelease, std::move(command), &response);
  if (!reply.ok()) co_return reply.error();
  co_return version;
}

void RedisFleet::Disown(std::string response) {
  std::lock_guard lock(state_->mu);
  state_->running.erase(response);
  state_->Submit(kEnd, Op::kAgentOwn, {"DEL", std::string(redis::kAgentOwnerPrefix) + response},
                 [](Result<Reply>) {});
}

net::awaitable<Status> RedisFleet::Bump(std::string conversation) {
  std::vector<std::string> command{"SET", std::string(redis::kAgentVersionPrefix) + conversation,
                                   NewVersion(), "EX", std::string(kVersionTtlSeconds)};
  Result<Reply> reply = co_await Call(*state_, kBump, Op::kAgentBump, std::move(command));
  if (!reply.ok()) co_return reply.error();
  co_return Ok{};
}

net::awaitable<Result<bool>> RedisFleet::SendCancel(std::string response, std::string tenant) {
  std::vector<std::string> command{"EVALSHA",
                                   client_.Sha(options_.first_script + redis::kAgentCancel),
                                   "2",
                                   std::string(redis::kAgentOwnerPrefix) + response,
                                   std::string(redis::kAgentCancelPrefix) + response,
                                   std::move(tenant),
                                   response,
                                   options_.replica,
                                   Ms(kCancelFlagTtl)};
  Result<Reply> reply = co_await Call(*state_, kCancel, Op::kAgentCancel, std::move(command));
  if (!reply.ok()) co_return reply.error();
  if (reply->type != Reply::Type::kString) co_return BadReply("the cancel script");
  co_return !reply->text.empty();
}

net::awaitable<Result<std::string>> RedisFleet::Holder(std::string conversation) {
  std::vector<std::string> command{std::string("GET"),
                                   std::string(redis::kAgentLockPrefix) + conversation};
  Result<Reply> reply = co_await Call(*state_, kCancel, Op::kAgentFlags, std::move(command));
  if (!reply.ok()) co_return reply.error();
  if (reply->type == Reply::Type::kNil) co_return std::string();
  if (reply->type != Reply::Type::kString) co_return BadReply("GET");
  co_return std::move(reply->text);
}

void RedisFleet::SendStopped(const std::string& to, const std::string& response,
                             const std::string& body) {
  state_->Submit(kCancel, Op::kPublish,
                 {"PUBLISH", std::string(redis::kAgentChannelPrefix) + to,
                  "stopped\n" + response + "\n" + body},
                 [](Result<Reply>) {});
}

net::awaitable<Status> RedisFleet::Renew() {
  // The turns named and the command submitted under one hold of `mu`: a turn erased by Release
  // before is not named, and one named is released by a command submitted after (redis_fleet.h).
  auto submit = [state = state_, sha = client_.Sha(options_.first_script + redis::kAgentRenew),
                 ttl = Ms(options_.owner_ttl), replica = options_.replica](auto done) {
    auto shared = std::make_shared<decltype(done)>(std::move(done));
    std::lock_guard lock(state->mu);
    if (state->running.empty()) {
      std::move (*shared)(Result<Reply>(Reply{}));
      return;
    }
    std::vector<std::string> command{"EVALSHA", sha, "0", ttl};
    for (const auto& [id, running] : state->running) {
      command.push_back(id);
      command.push_back(running.conversation);
      command.push_back(OwnerValue(replica, running.tenant));
    }
    state->Submit(kRenew, Op::kAgentRenew, std::move(command),
                  [shared](Result<Reply> reply) { std::move (*shared)(std::move(reply)); });
  };
  auto job = turnpike::net::AwaitJob<Result<Reply>>(std::move(submit));
  Result<Reply> reply = co_await std::move(job);
  if (!reply.ok()) co_return reply.error();
  if (reply->is_error()) co_return Error{ErrorCode::kUnavailable, "redis: " + reply->text, ""};
  co_return Ok{};
}

net::awaitable<Result<bool>> RedisFleet::TakeSweep(std::chrono::milliseconds ttl) {
  std::vector<std::string> command{"EVALSHA",
                                   client_.Sha(options_.first_script + redis::kAgentSweeper),
                                   "1",
                                   std::string(redis::kAgentSweeperKey),
                                   options_.replica,
                                   Ms(ttl)};
  Result<Reply> reply = co_await Call(*state_, kSweep, Op::kAgentSweep, std::move(command));
  if (!reply.ok()) co_return reply.error();
  co_return reply->type == Reply::Type::kInteger && reply->integer == 1;
}

net::awaitable<Result<std::vector<std::string>>> RedisFleet::Unowned(
    std::vector<std::string> responses) {
  if (responses.empty()) co_return std::vector<std::string>();
  std::vector<std::string> command{"MGET"};
  for (const std::string& id : responses) {
    command.push_back(std::string(redis::kAgentOwnerPrefix) + id);
  }
  Result<Reply> reply = co_await Call(*state_, kSweep, Op::kAgentSweep, std::move(command));
  if (!reply.ok()) co_return reply.error();
  if (reply->type != Reply::Type::kArray || reply->items.size() != responses.size()) {
    co_return BadReply("MGET");
  }
  std::vector<std::string> unowned;
  for (size_t i = 0; i < responses.size(); ++i) {
    if (reply->items[i].type == Reply::Type::kNil) unowned.push_back(std::move(responses[i]));
  }
  co_return unowned;
}

void RedisFleet::RenderMetrics(observability::PrometheusWriter& w) const {
  w.Family("turnpike_agent_fleet_round_trips_total",
           "Redis round trips of agent turns in fleet mode, by phase",
           observability::MetricType::kCounter);
  for (size_t i = 0; i < kPhaseCount; ++i) {
    w.Sample("turnpike_agent_fleet_round_trips_total", {{"phase", kPhaseNames[i]}},
             static_cast<double>(state_->round_trips[i].load(std::memory_order_relaxed)));
  }
}

std::unique_ptr<Fleet> MakeRedisFleet(const app::FeatureContext& context) {
  if (context.redis == nullptr || context.subscriber == nullptr) return nullptr;
  RedisFleetOptions options;
  options.replica = context.replica_id;
  options.owner_ttl = context.config.agents.fleet_owner_ttl;
  options.first_script = context.agent_scripts;
  auto fleet = std::make_unique<RedisFleet>(*context.redis, *context.subscriber, options);
  if (context.metrics != nullptr) {
    context.metrics->push_back(
        [f = fleet.get()](observability::PrometheusWriter& w) { f->RenderMetrics(w); });
  }
  return fleet;
}

}  // namespace turnpike::agents
