// What the lease engine's tests share: a replica (its own Redis client with both lease scripts,
// and its LeaseCounters) against a real redis-server the test starts (tests/cache/redis_server.h),
// and waiting for a refill the way the governance filter does (watch the counter, look again,
// wait for the wake), bounded so that a refill that never lands fails the test instead of
// hanging it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "../cache/redis_server.h"
#include "governance/counters.h"
#include "governance/refill_wait.h"
#include "observability/metrics.h"
#include "redis/client.h"
#include "redis/lease_counters.h"
#include "redis/lease_script.h"

namespace turnpike::redis::testing {

using cache::testing::RedisServer;
using governance::MonthId;
using governance::ReserveResult;
using governance::ReserveStatus;

inline constexpr auto kConnectWait = std::chrono::seconds(5);
// How long a test waits for a refill (or for a state to change) before it fails.
inline constexpr auto kWaitBound = std::chrono::seconds(5);
inline constexpr auto kStopWait = std::chrono::seconds(2);
inline constexpr char kTenant[] = "acme";
// 2024-06: any month works; the ledger key names it.
inline const MonthId kMonth = governance::MonthOf(1'717'200'000);

class Replica {
 public:
  // Lease options as app/ sets them, with a short command timeout so that a Redis that went
  // away is noticed quickly.
  Replica(uint16_t port, std::string id, std::chrono::milliseconds lease_ttl = kDefaultTtl) {
    ClientOptions options;
    options.port = port;
    options.command_timeout = std::chrono::milliseconds(500);
    options.scripts = {std::string(kLeaseScript), std::string(kRateScript)};
    client_ = std::make_unique<Client>(std::move(options));
    client_->Start();
    connected_ = client_->WaitConnected(kConnectWait).ok();
    LeaseOptions lease;
    lease.replica_id = std::move(id);
    lease.lease_ttl = lease_ttl;
    lease.report_interval = std::chrono::milliseconds(50);
    counters_ = std::make_unique<LeaseCounters>(*client_, std::move(lease));
  }
  ~Replica() { Stop(); }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  bool connected() const { return connected_; }
  Client& client() { return *client_; }
  LeaseCounters& counters() { return *counters_; }

  std::shared_ptr<governance::ScopeCounters> Tenant(std::string_view id = kTenant) {
    return counters_->MakeScope(governance::ScopeKind::kTenant, id);
  }
  // A graceful stop: leases given back and spend reported (LeaseCounters::Stop), then the client.
  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    counters_->Stop(kStopWait);
    client_->Stop();
  }
  std::string Metrics() const {
    observability::PrometheusWriter w;
    counters_->RenderMetrics(w);
    return w.Take();
  }

  static constexpr std::chrono::milliseconds kDefaultTtl{10'000};

 private:
  std::unique_ptr<Client> client_;
  std::unique_ptr<LeaseCounters> counters_;
  bool connected_ = false;
  bool stopped_ = false;
};

// Woken once by the counter it watches (refill_wait.h), from the Redis thread.
class RefillLatch final : public governance::RefillWaiter {
 public:
  void Wake() override {
    if (!woken_.exchange(true)) promise_.set_value();
  }
  bool WaitUntil(std::chrono::steady_clock::time_point deadline) {
    return future_.wait_until(deadline) == std::future_status::ready;
  }

 private:
  std::atomic<bool> woken_{false};
  std::promise<void> promise_;
  std::future<void> future_ = promise_.get_future();
};

// Waits on `source` the way the governance filter does: watch, look again (`attempt`), and
// only then wait for the wake. Returns the first answer that is not pending; after kWaitBound
// the last (pending) one.
template <typename Attempt, typename IsPending>
auto UntilNotPending(governance::RefillSource* source, Attempt attempt, IsPending is_pending) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitBound;
  while (true) {
    auto first = attempt();
    if (!is_pending(first)) return first;
    auto latch = std::make_shared<RefillLatch>();
    source->Watch(latch);
    auto again = attempt();
    if (!is_pending(again) || !latch->WaitUntil(deadline)) return again;
  }
}

inline ReserveResult ReserveWaiting(governance::BudgetCounter& budget, int64_t estimate,
                                    int64_t cap) {
  return UntilNotPending(
      budget.refill_source(), [&] { return budget.Reserve(kMonth, estimate, cap); },
      [](const ReserveResult& r) { return r.status() == ReserveStatus::kPending; });
}

inline governance::RateDecision CheckWaiting(governance::RateCounter& rate, int64_t cost,
                                             int64_t limit) {
  return UntilNotPending(
      rate.refill_source(), [&] { return rate.Check(governance::Nanos(0), cost, limit); },
      [](const governance::RateDecision& d) { return d.pending; });
}

// Retries `attempt` (a waiting one) until `done` says so, pausing between tries, at most
// kWaitBound: for a state that changes only when another replica acts or a retry interval
// passes (kRetryNs).
template <typename Attempt, typename Done>
auto Eventually(Attempt attempt, Done done) {
  constexpr auto kPause = std::chrono::milliseconds(20);
  const auto deadline = std::chrono::steady_clock::now() + kWaitBound;
  auto result = attempt();
  while (!done(result) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPause);
    result = attempt();
  }
  return result;
}

// HGETALL of `key` through `client` (a test's own look at the ledger).
inline std::map<std::string, std::string> HashOf(Client& client, const std::string& key) {
  std::promise<std::map<std::string, std::string>> promise;
  std::future<std::map<std::string, std::string>> future = promise.get_future();
  client.Submit(Op::kPing, {"HGETALL", key}, [&promise](Result<Reply> reply) {
    std::map<std::string, std::string> fields;
    if (reply.ok() && reply->type == Reply::Type::kArray) {
      for (size_t i = 0; i + 1 < reply->items.size(); i += 2) {
        fields[reply->items[i].text] = reply->items[i + 1].text;
      }
    }
    promise.set_value(std::move(fields));
  });
  return future.get();
}

// The ledger of kTenant's budget in kMonth (lease_script.h): spent = floor + added.
inline std::string LedgerKey() {
  return std::string("turnpike:budget:t:") + kTenant + ":" + governance::FormatMonth(kMonth);
}
inline int64_t LedgerSpent(Client& client) {
  std::map<std::string, std::string> h = HashOf(client, LedgerKey());
  if (h.empty()) return -1;
  return std::stoll(h["floor"]) + std::stoll(h["added"]);
}
// A replica's lease in the ledger ("l:<replica>" = "<amount>:<expiry>"); 0 when it has none.
inline int64_t LeaseOf(Client& client, const std::string& replica) {
  std::map<std::string, std::string> h = HashOf(client, LedgerKey());
  auto it = h.find("l:" + replica);
  return it == h.end() ? 0 : std::stoll(it->second.substr(0, it->second.find(':')));
}

// Each test gets its own redis-server on a free loopback port, empty.
class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RedisServer::Start();
    // scripts/deps.sh --test installs redis-server: not finding it is a failure, not a skip.
    ASSERT_TRUE(server_) << "redis-server could not be started";
  }
  uint16_t port() const { return server_->port(); }

  std::unique_ptr<RedisServer> server_;
};

// The value of an unlabelled sample in Prometheus text (-1 if absent).
inline double SampleOf(const std::string& text, const std::string& name) {
  const std::string line = "\n" + name + " ";
  const size_t at = text.find(line);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + line.size()));
}

}  // namespace turnpike::redis::testing
