// The lease engine (lease_counters.h) as a fleet: two replicas sharing one Redis race for one
// budget cap and never admit more than it, and what a replica does when Redis goes away (what
// the code does today): it admits on the lease it holds until the lease's local deadline,
// then answers unavailable (503: never on credit), except a fail-open plan, which is admitted
// against the replica's own count.
#include "redis/lease_counters.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lease_support.h"
#include "redis/lease_budget.h"

namespace turnpike::redis::testing {
namespace {

using LeaseCountersTest = LeaseTest;

struct Raced {
  int64_t admitted = 0;  // micro-USD settled
  ReserveStatus last = ReserveStatus::kPending;
};

// One replica's requests, as fast as it can, until the fleet's ledger refuses it.
Raced Race(governance::BudgetCounter& budget, int64_t estimate, int64_t cap) {
  Raced raced;
  while (true) {
    ReserveResult r = ReserveWaiting(budget, estimate, cap);
    raced.last = r.status();
    if (!r.has_value()) return raced;
    r->Settle(estimate);
    raced.admitted += estimate;
  }
}

TEST_F(LeaseCountersTest, TwoReplicasRacingForOneCapNeverOvershootIt) {
  constexpr int64_t kCap = 200'000;
  constexpr int64_t kEstimate = 1'000;
  Replica one(port(), "one");
  Replica two(port(), "two");
  ASSERT_TRUE(one.connected());
  ASSERT_TRUE(two.connected());
  auto scope_one = one.Tenant();
  auto scope_two = two.Tenant();

  // Each holds a lease before the race (so both race, however the threads are scheduled).
  auto prime = [](governance::BudgetCounter& budget) -> int64_t {
    ReserveResult r = ReserveWaiting(budget, kEstimate, kCap);
    EXPECT_EQ(r.status(), ReserveStatus::kReserved);
    if (!r.has_value()) return 0;
    r->Settle(kEstimate);
    return kEstimate;
  };
  const int64_t before_one = prime(scope_one->budget);
  const int64_t before_two = prime(scope_two->budget);
  Raced raced_one, raced_two;
  std::thread a([&] { raced_one = Race(scope_one->budget, kEstimate, kCap); });
  std::thread b([&] { raced_two = Race(scope_two->budget, kEstimate, kCap); });
  a.join();
  b.join();
  raced_one.admitted += before_one;
  raced_two.admitted += before_two;

  EXPECT_EQ(raced_one.last, ReserveStatus::kRefused);
  EXPECT_EQ(raced_two.last, ReserveStatus::kRefused);
  EXPECT_GT(raced_one.admitted, 0);
  EXPECT_GT(raced_two.admitted, 0);
  const int64_t total = raced_one.admitted + raced_two.admitted;
  EXPECT_LE(total, kCap) << "zero overshoot";
  // Refused only once less than one request's estimate was free in the ledger, and each
  // replica strands less than one estimate of its last slice.
  EXPECT_GT(total, kCap - 3 * kEstimate);

  one.Stop();
  two.Stop();
  Replica reader(port(), "reader");
  EXPECT_EQ(LedgerSpent(reader.client()), total) << "every settled micro-USD reported once";
}

TEST_F(LeaseCountersTest, WithRedisDownALeaseStillAdmitsThenTheBudgetIsUnavailable) {
  constexpr int64_t kCap = 1'000'000;
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  governance::BudgetCounter& budget = scope->budget;
  ReserveResult first = ReserveWaiting(budget, 1'000, kCap);
  ASSERT_EQ(first.status(), ReserveStatus::kReserved);  // a 250,000 slice

  server_->Stop();
  // What the lease holds is admitted locally (the first slice, and one more if a request
  // asked while the first refill ran), until the headroom is spent.
  constexpr int64_t kEach = 10'000;
  std::vector<governance::Reservation> held;
  int64_t holding = first->estimate();
  for (int i = 0; i < 100; ++i) {
    ReserveResult r = budget.Reserve(kMonth, kEach, kCap);
    if (!r.has_value()) break;
    held.push_back(std::move(*r));
    holding += kEach;
  }
  EXPECT_GE(holding, 240'000) << "the lease held is admitted locally";
  EXPECT_LT(holding, kCap);
  // The refill the last reserves posted cannot reach Redis: 503, never admitted on credit.
  EXPECT_EQ(ReserveWaiting(budget, kEach, kCap).status(), ReserveStatus::kUnavailable);
  EXPECT_GE(SampleOf(replica.Metrics(), "turnpike_budget_lease_failures_total"), 1);

  // A fail-open plan's second try: the replica's own count (nothing spent, `holding` held).
  ReserveResult open = budget.ReserveFailOpen(kMonth, kEach, kCap);
  EXPECT_EQ(open.status(), ReserveStatus::kReserved);
  EXPECT_EQ(SampleOf(replica.Metrics(), "turnpike_budget_fail_open_admitted_total"), 1);
  EXPECT_EQ(budget.ReserveFailOpen(kMonth, kCap - (holding + kEach) + 1, kCap).status(),
            ReserveStatus::kRefused)
      << "its own count still holds the cap";
}

TEST_F(LeaseCountersTest, ALeaseCutOffFromRedisIsNotUsedPastItsLocalDeadline) {
  constexpr int64_t kCap = 1'000'000;
  // Used locally until sent + ttl - ttl / 5 (kMarginDivisor): 400 ms after its refill.
  constexpr auto kTtl = std::chrono::milliseconds(500);
  Replica replica(port(), "r1", kTtl);
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  ReserveResult first = ReserveWaiting(scope->budget, 1'000, kCap);
  ASSERT_EQ(first.status(), ReserveStatus::kReserved);

  server_->Stop();
  std::this_thread::sleep_for(kTtl);  // past the local deadline, with 249,000 of headroom
  EXPECT_EQ(ReserveWaiting(scope->budget, 1'000, kCap).status(), ReserveStatus::kUnavailable)
      << "Redis may free the lease at its TTL: the replica stops first";
}

TEST_F(LeaseCountersTest, ARateLimitWithRedisDownIsRefusedOnceItsUnitsAreSpent) {
  constexpr int64_t kLimit = 1'600;  // slices of 100 units
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  governance::RateCounter& rate = scope->requests;
  ASSERT_TRUE(CheckWaiting(rate, 1, kLimit).allowed);

  server_->Stop();
  // The leased units (a slice, and one more if a check asked while the first refill ran) are
  // admitted locally until they are spent.
  int local = 0;
  while (local < 1'000 && rate.Check(governance::Nanos(0), 1, kLimit).allowed) ++local;
  EXPECT_GE(local, 99) << "the leased units are admitted locally";
  EXPECT_LT(local, 1'000);
  const governance::RateDecision refused = CheckWaiting(rate, 1, kLimit);
  EXPECT_FALSE(refused.allowed) << "fail closed: never admitted on credit";
  EXPECT_FALSE(refused.pending);
  EXPECT_EQ(refused.retry_after, governance::Nanos(kRetryNs)) << "retried after kRetryNs";
}

}  // namespace
}  // namespace turnpike::redis::testing
