// The leased budget counter (lease_budget.h) of one replica against a real Redis: requests are
// admitted locally within a lease (no Redis command per request), a refill leases more before
// the slice runs out, and what a release or a settle below the estimate leaves unused is
// admitted again locally and, given back at Stop, leased by another replica.
#include "redis/lease_budget.h"

#include <gtest/gtest.h>

#include <vector>

#include "lease_support.h"

namespace turnpike::redis::testing {
namespace {

constexpr int64_t kCap = 1'000'000;
constexpr int64_t kEstimate = 1'000;
// The first slice of an idle ledger: a quarter of what is free (lease_script.cc).
constexpr int64_t kFirstSlice = kCap / 4;

using LeaseBudgetTest = LeaseTest;

TEST_F(LeaseBudgetTest, ABudgetIsAdmittedLocallyWithinItsLease) {
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  governance::BudgetCounter& budget = scope->budget;

  EXPECT_EQ(budget.Reserve(kMonth, kEstimate, kCap).status(), ReserveStatus::kPending)
      << "no lease yet: a refill is posted, the request waits";
  ReserveResult first = ReserveWaiting(budget, kEstimate, kCap);
  ASSERT_EQ(first.status(), ReserveStatus::kReserved);
  // A request that asked while the first refill ran makes one more (lease_counters.cc: "a
  // refill asked for while this call ran"), so the lease is the first slice, or a bit more.
  EXPECT_GE(LeaseOf(replica.client(), "r1"), kFirstSlice);
  EXPECT_LE(LeaseOf(replica.client(), "r1"), kCap);

  // Down to just above the first slice's low-water mark (a quarter of it): every one answered
  // at once by a local CAS, never pending, and no refill command per request.
  std::vector<governance::Reservation> held;
  held.push_back(std::move(*first));
  constexpr int kLocal = 180;  // 181 * 1,000 leaves 69,000 > 62,500 of headroom
  for (int i = 0; i < kLocal; ++i) {
    ReserveResult r = budget.Reserve(kMonth, kEstimate, kCap);
    ASSERT_EQ(r.status(), ReserveStatus::kReserved) << "request " << i;
    held.push_back(std::move(*r));
  }
  EXPECT_LE(replica.client().commands(Op::kRefill), 2u) << "no round trip per request";
  EXPECT_EQ(budget.Read(kMonth).committed, (kLocal + 1) * kEstimate);

  for (governance::Reservation& r : held) r.Settle(kEstimate);
  const governance::BudgetUsage usage = budget.Read(kMonth);
  EXPECT_EQ(usage.spent, (kLocal + 1) * kEstimate);
  EXPECT_EQ(usage.committed, usage.spent);
  EXPECT_LE(replica.client().commands(Op::kRefill), 2u) << "settling is local too";
}

TEST_F(LeaseBudgetTest, ARefillLeasesMoreBeforeTheSliceRunsOut) {
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  constexpr int kRequests = 400;  // 400,000: more than the first slice
  int admitted = 0;
  for (int i = 0; i < kRequests; ++i) {
    ReserveResult r = ReserveWaiting(scope->budget, kEstimate, kCap);
    ASSERT_EQ(r.status(), ReserveStatus::kReserved) << "request " << i;
    r->Settle(kEstimate);
    ++admitted;
  }
  EXPECT_EQ(admitted * kEstimate, 400'000);
  const uint64_t refills = replica.client().commands(Op::kRefill);
  EXPECT_GE(refills, 2u) << "the first slice was " << kFirstSlice;
  EXPECT_LE(refills, 10u) << "a refill per slice, not per request";
  replica.Stop();  // reports what was settled since the last refill
  Replica reader(port(), "reader");
  EXPECT_EQ(LedgerSpent(reader.client()), 400'000);
}

TEST_F(LeaseBudgetTest, ReleasedAndUnspentUnitsAreAdmittedAgainAndGivenBackAtStop) {
  constexpr int64_t kSmallCap = 10'000;
  Replica a(port(), "a");
  ASSERT_TRUE(a.connected());
  auto scope_a = a.Tenant();
  governance::BudgetCounter& budget = scope_a->budget;

  // A request that needs the whole cap leases the whole cap (the slice is at least the need).
  ReserveResult whole = ReserveWaiting(budget, kSmallCap, kSmallCap);
  ASSERT_EQ(whole.status(), ReserveStatus::kReserved);
  EXPECT_EQ(LeaseOf(a.client(), "a"), kSmallCap);
  whole->Release();
  ReserveResult again = budget.Reserve(kMonth, kSmallCap, kSmallCap);
  ASSERT_EQ(again.status(), ReserveStatus::kReserved) << "a release gives the headroom back";
  again->Settle(4'000);  // settled below the estimate: 6,000 are free again

  ReserveResult rest = budget.Reserve(kMonth, 6'000, kSmallCap);
  ASSERT_EQ(rest.status(), ReserveStatus::kReserved);
  rest->Release();
  EXPECT_EQ(ReserveWaiting(budget, 6'001, kSmallCap).status(), ReserveStatus::kRefused)
      << "spent 4,000 + 6,001 is over the cap, fleet-wide";

  Replica b(port(), "b");
  ASSERT_TRUE(b.connected());
  auto scope_b = b.Tenant();
  EXPECT_EQ(ReserveWaiting(scope_b->budget, 1, kSmallCap).status(), ReserveStatus::kRefused)
      << "a holds every unit";

  a.Stop();  // gives back its 6,000 unused and reports its 4,000 spent
  EXPECT_EQ(LeaseOf(b.client(), "a"), 0);
  EXPECT_EQ(LedgerSpent(b.client()), 4'000);
  ReserveResult taken =
      Eventually([&] { return ReserveWaiting(scope_b->budget, 6'000, kSmallCap); },
                 [](const ReserveResult& r) { return r.has_value(); });
  EXPECT_EQ(taken.status(), ReserveStatus::kReserved) << "b leases what a gave back";
  taken->Settle(6'000);
  EXPECT_EQ(ReserveWaiting(scope_b->budget, 1, kSmallCap).status(), ReserveStatus::kRefused);
  b.Stop();
  Replica reader(port(), "reader");
  EXPECT_EQ(LedgerSpent(reader.client()), kSmallCap) << "exactly the cap, never more";
}

}  // namespace
}  // namespace turnpike::redis::testing
