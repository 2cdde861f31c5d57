// Internal to redis/: the leased budget counter of one scope and the constants the lease
// engine (lease_counters.h, which states the protocol) shares with it. Not a public contract.
//
// Threads: the governance::BudgetCounter methods run on any thread (atomics only, no lock; a
// refill request posts to the Redis thread); the members marked "client thread only" are read
// and written by LeaseCounters on the Redis client's thread. A request that got kPending waits
// on refill_source() (governance/refill_wait.h: a lock, off the warm path); every completed or
// failed ledger call of this counter wakes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "governance/counters.h"
#include "governance/refill_wait.h"

namespace turnpike::redis {

class LeaseCounters;

// After a refill found the ledger exhausted or Redis unreachable, a short shortage is answered
// at once (refused / unavailable) and a new refill is tried at most this often.
inline constexpr int64_t kRetryNs = 100'000'000;
// A lease is used locally until sent + ttl - ttl / kMarginDivisor: Redis keeps it until at
// least sent + ttl (its clock starts later), so the replica stops first.
inline constexpr int64_t kMarginDivisor = 5;
inline constexpr int kSweepsPerTtl = 4;
// A month's ledger outlives the month (EXPIRE, renewed by every call).
inline constexpr int64_t kLedgerTtlSeconds = 40LL * 24 * 3600;

enum class LedgerState : int { kOk, kExhausted, kUnavailable, kSettling };

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class LeaseBudgetCounter final : public governance::BudgetCounter, public governance::RefillSource {
 public:
  LeaseBudgetCounter(LeaseCounters& engine, std::string key_base)
      : engine_(engine), key_base_(std::move(key_base)) {}

  governance::ReserveResult Reserve(governance::MonthId month, int64_t estimate,
                                    int64_t cap) override;
  // Charged like a leased reservation (headroom may go below 0: the next report to Redis
  // carries the spend, and the script takes it from this replica's lease first).
  governance::ReserveResult ReserveFailOpen(governance::MonthId month, int64_t estimate,
                                            int64_t cap) override;
  governance::BudgetUsage Read(governance::MonthId month) const override;
  void Restore(governance::MonthId month, int64_t spent) override;
  void Correct(governance::MonthId month, int64_t delta) override;
  governance::RefillSource* refill_source() override { return this; }
  void Watch(std::weak_ptr<governance::RefillWaiter> waiter) override;
  void WaitTimedOut() override;

  std::weak_ptr<LeaseBudgetCounter> self;

 private:
  friend class LeaseCounters;
  void Settle(governance::MonthId month, int64_t estimate, int64_t actual) override;
  void Release(governance::MonthId month, int64_t estimate) override;
  void RequestRefill(int64_t need);

  LeaseCounters& engine_;
  const std::string key_base_;
  // Any thread. Invariant: headroom = lease - reserved - spend not yet reported to Redis.
  std::atomic<int64_t> headroom_{0};
  std::atomic<int64_t> reserved_{0};
  std::atomic<int64_t> unreported_{0};
  std::atomic<int64_t> spent_local_{0};  // restored + settled here: Read()
  std::atomic<uint32_t> month_{0};       // the ledger month admitted against (0: none yet)
  std::atomic<uint32_t> want_month_{0};  // a newer month a request asked for
  std::atomic<int64_t> cap_{0};
  std::atomic<int64_t> need_{0};
  std::atomic<int64_t> deadline_ns_{0};
  std::atomic<int64_t> low_water_{0};
  std::atomic<int> state_{static_cast<int>(LedgerState::kOk)};
  std::atomic<int64_t> state_at_ns_{0};
  std::atomic<bool> inflight_{false};
  std::atomic<bool> refill_wanted_{false};
  std::atomic<uint64_t> uses_{0};
  std::atomic<uint32_t> base_month_{0};
  std::atomic<int64_t> base_spent_{0};
  governance::RefillWaiters waiters_;
  // Client thread only.
  int64_t lease_ = 0;
  int64_t ledger_spent_ = 0;
  std::string ledger_gen_;  // the generation ledger_spent_ was read from ("": none yet)
  governance::MonthId ledger_month_ = 0;
  uint64_t uses_seen_ = 0;
  // Stop's give-back for a counter whose call was in flight: sent when that call's reply
  // arrives, then run (LeaseCounters::SweepOnce, Call).
  std::function<void()> final_done_;
};

}  // namespace turnpike::redis
