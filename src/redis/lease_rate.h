// Internal to redis/: a scope's requests- or tokens-per-minute limit admitted locally against
// units leased from a fleet-wide GCRA in Redis (kRateScript, lease_script.h). The protocol is
// stated in lease_counters.h.
//
// Check takes `cost` units from the leased units with one CAS; when what is left falls under
// a quarter of a slice (limit / kRateSlices) a refill is posted to the Redis thread. With too
// few units the decision is `pending` (a refill is posted; the governance filter waits for it,
// bounded by redis.refill_wait), or refused when the last refill found the shared window full
// (retry_after from the script) or Redis unreachable (fail closed). Correct/Refund give units
// back locally (or take more: the balance may go negative and is repaid by later refills).
// A request that got pending waits on refill_source() (governance/refill_wait.h): every
// completed or failed rate call of this counter wakes it.
//
// Redis restart: every call carries the units this replica leased in the last minute
// (recent_grants.h) and the generation of the window it leased them from; a window that is not
// that generation any more was lost, and the script adds them to the rebuilt one (and grants
// nothing for a lease TTL while the other replicas do the same; lease_script.h).
//
// Threads: Check, Correct from any thread (atomics only); the members marked "client thread
// only" belong to LeaseCounters on the Redis client's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "governance/counters.h"
#include "governance/refill_wait.h"
#include "redis/lease_budget.h"
#include "redis/recent_grants.h"

namespace turnpike::redis {

// A refill leases at most limit / kRateSlices units (at least what the waiting request needs).
inline constexpr int64_t kRateSlices = 16;

class LeaseRateCounter final : public governance::RateCounter, public governance::RefillSource {
 public:
  LeaseRateCounter(LeaseCounters& engine, std::string key)
      : engine_(engine), key_(std::move(key)) {}

  governance::RateDecision Check(governance::Nanos now, int64_t cost, int64_t limit) override;
  void Correct(int64_t charged, int64_t actual, int64_t limit) override;
  governance::RefillSource* refill_source() override { return this; }
  void Watch(std::weak_ptr<governance::RefillWaiter> waiter) override;
  void WaitTimedOut() override;

  std::weak_ptr<LeaseRateCounter> self;

 private:
  friend class LeaseCounters;
  void RequestRefill(int64_t need);

  LeaseCounters& engine_;
  const std::string key_;
  std::atomic<int64_t> units_{0};
  std::atomic<int64_t> limit_{0};
  std::atomic<int64_t> need_{0};
  std::atomic<int64_t> low_water_{0};
  std::atomic<int> state_{static_cast<int>(LedgerState::kOk)};
  std::atomic<int64_t> state_at_ns_{0};
  std::atomic<int64_t> retry_ns_{0};
  std::atomic<bool> inflight_{false};
  std::atomic<bool> refill_wanted_{false};
  std::atomic<uint64_t> uses_{0};
  governance::RefillWaiters waiters_;
  // Client thread only.
  uint64_t uses_seen_ = 0;
  RecentGrants recent_;
  std::string window_gen_;  // the generation of the shared window last leased from ("": none)
};

}  // namespace turnpike::redis
