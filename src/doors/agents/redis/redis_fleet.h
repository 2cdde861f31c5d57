// RedisFleet: the agent door's fleet seam (doors/agents/fleet.h) over the fleet's Redis client
// and subscriber (redis/client.h, redis/subscriber.h), with the scripts of
// redis/agent_scripts.h (their keys and messages are listed there).
//
// Round trips, each one command pipelined on the client's connection and counted in
// turnpike_agent_fleet_round_trips_total{phase}:
//   before_first_token  Claim (EVALSHA: lock + owner + version), or Own (SET owner PX)
//   end                 Release (EVALSHA: lock, owner, new version), or Disown (DEL owner)
//   renew               one EVALSHA per replica per owner TTL / 3 for all its running turns
//   cancel              SendCancel (EVALSHA: flag + PUBLISH), SendStopped (PUBLISH), the flags
//                       of running turns read again after the subscriber reconnects (MGET),
//                       a deleted conversation's lock holder (Holder: GET)
//   bump                a conversation written outside a turn (SET version)
//   sweep               the sweeper lease (EVALSHA) and the owners of unended turns (MGET)
// A Release is ordered after every Renew submitted before it (one connection, in order), and a
// Renew never names a turn released before it was submitted: a released lock is not taken again.
//
// Cancel messages: the replica's channel (turnpike:agents:replica:<id>) is subscribed at Start.
// A message lost while the subscriber was reconnecting is found through the turn's cancel flag:
// on every (re)connect the flags of the turns running here are read (nothing is read per
// upstream read, and nothing while connected).
//
// Ownership and threads: the client and subscriber outlive this object until they are stopped
// (app/ stops the subscriber before the workers are destroyed, then the client). What the
// subscriber's handler and hook use is held by a shared state, so a message arriving while the
// door is torn down touches nothing freed. Every method from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "app/feature.h"
#include "doors/agents/fleet.h"

namespace turnpike::redis {
class Client;
class Subscriber;
}  // namespace turnpike::redis
namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::agents {

struct RedisFleetOptions {
  std::string replica;  // unique per process
  std::chrono::milliseconds owner_ttl{15'000};
  size_t first_script = 0;  // Client::Sha(first_script + redis::AgentScript)
};

class RedisFleet final : public Fleet {
 public:
  RedisFleet(redis::Client& client, redis::Subscriber& subscriber, RedisFleetOptions options);
  ~RedisFleet() override;

  void Start(Inbox inbox) override;
  const std::string& replica() const override { return options_.replica; }
  boost::asio::awaitable<Result<Claim>> ClaimConversation(std::string conversation,
                                                          std::string response, std::string tenant,
                                                          std::string cached_version) override;
  void Own(std::string response, std::string tenant) override;
  boost::asio::awaitable<Result<std::string>> Release(std::string conversation,
                                                      std::string response, bool wrote) override;
  void Disown(std::string response) override;
  boost::asio::awaitable<Status> Bump(std::string conversation) override;
  boost::asio::awaitable<Result<bool>> SendCancel(std::string response,
                                                  std::string tenant) override;
  boost::asio::awaitable<Result<std::string>> Holder(std::string conversation) override;
  void SendStopped(const std::string& to, const std::string& response,
                   const std::string& body) override;
  boost::asio::awaitable<Status> Renew() override;
  boost::asio::awaitable<Result<bool>> TakeSweep(std::chrono::milliseconds ttl) override;
  boost::asio::awaitable<Result<std::vector<std::string>>> Unowned(
      std::vector<std::string> responses) override;

  // turnpike_agent_fleet_round_trips_total{phase}.
  void RenderMetrics(observability::PrometheusWriter& w) const;

  struct State;  // redis_fleet.cc

 private:
  std::string NewVersion();

  const RedisFleetOptions options_;
  redis::Client& client_;
  redis::Subscriber& subscriber_;
  std::shared_ptr<State> state_;
  std::atomic<uint64_t> versions_{0};
};

// The fleet of a gateway in fleet mode (context.redis set), else nullptr: what app/ hands
// AgentsFeature.
std::unique_ptr<Fleet> MakeRedisFleet(const app::FeatureContext& context);

}  // namespace turnpike::agents
