// The leased rate counter (lease_rate.h) against a real Redis: checks are admitted locally
// within the units leased (no Redis command per request), a refill leases more before they run
// out, two replicas together admit exactly the fleet-wide limit, and units given back (a
// refund locally; an idle scope's units to the shared window) are admitted again.
#include "redis/lease_rate.h"

#include <gtest/gtest.h>

#include <thread>

#include "lease_support.h"

namespace turnpike::redis::testing {
namespace {

using governance::RateDecision;
using LeaseRateTest = LeaseTest;

RateDecision CheckNow(governance::RateCounter& rate, int64_t cost, int64_t limit) {
  return rate.Check(governance::Nanos(0), cost, limit);
}

TEST_F(LeaseRateTest, ChecksAreAdmittedLocallyWithinTheLeasedUnits) {
  constexpr int64_t kLimit = 1'600;  // a slice is kLimit / kRateSlices = 100 units
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  governance::RateCounter& rate = scope->requests;

  EXPECT_TRUE(CheckNow(rate, 1, kLimit).pending) << "no units yet: a refill is posted";
  const RateDecision first = CheckWaiting(rate, 1, kLimit);
  ASSERT_TRUE(first.allowed);
  // A slice of 100, and a second one if the check asked again while the first refill ran
  // (lease_counters.cc: "a refill asked for while this call ran").
  EXPECT_GE(first.remaining, 99);
  RateDecision last = first;
  constexpr int kLocal = 70;  // leaves at least 29, above the first slice's low water of 25
  for (int i = 0; i < kLocal; ++i) {
    last = CheckNow(rate, 1, kLimit);
    ASSERT_TRUE(last.allowed) << "check " << i << ": answered at once, never pending";
  }
  EXPECT_GE(last.remaining, 29);
  EXPECT_LE(replica.client().commands(Op::kRateRefill), 2u) << "no round trip per request";
}

TEST_F(LeaseRateTest, ARefillLeasesMoreUnitsBeforeTheyRunOut) {
  constexpr int64_t kLimit = 1'600;
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  constexpr int kChecks = 300;  // three slices' worth
  for (int i = 0; i < kChecks; ++i) {
    ASSERT_TRUE(CheckWaiting(scope->requests, 1, kLimit).allowed) << "check " << i;
  }
  const uint64_t refills = replica.client().commands(Op::kRateRefill);
  EXPECT_GE(refills, 3u);
  EXPECT_LE(refills, 10u) << "a refill per slice, not per request";
}

TEST_F(LeaseRateTest, TwoReplicasTogetherAdmitExactlyTheFleetWideLimit) {
  // One unit frees every 15 s: the race is over long before.
  constexpr int64_t kLimit = 4;
  Replica one(port(), "one");
  Replica two(port(), "two");
  ASSERT_TRUE(one.connected());
  ASSERT_TRUE(two.connected());
  auto scope_one = one.Tenant();
  auto scope_two = two.Tenant();
  auto race = [](governance::RateCounter& rate, int* admitted, RateDecision* refusal) {
    while (true) {
      const RateDecision d = CheckWaiting(rate, 1, kLimit);
      if (!d.allowed) {
        *refusal = d;
        return;
      }
      ++*admitted;
    }
  };
  int admitted_one = 0, admitted_two = 0;
  RateDecision refusal_one, refusal_two;
  std::thread a([&] { race(scope_one->requests, &admitted_one, &refusal_one); });
  std::thread b([&] { race(scope_two->requests, &admitted_two, &refusal_two); });
  a.join();
  b.join();
  EXPECT_EQ(admitted_one + admitted_two, kLimit);
  for (const RateDecision& refusal : {refusal_one, refusal_two}) {
    EXPECT_FALSE(refusal.pending);
    EXPECT_GT(refusal.retry_after.count(), 0) << "the shared window says when";
  }
}

TEST_F(LeaseRateTest, ARefundIsAdmittedAgainLocally) {
  constexpr int64_t kLimit = 16;
  Replica replica(port(), "r1");
  ASSERT_TRUE(replica.connected());
  auto scope = replica.Tenant();
  governance::RateCounter& tokens = scope->tokens;
  // A check that needs the whole window leases the whole window.
  ASSERT_TRUE(CheckWaiting(tokens, kLimit, kLimit).allowed);
  tokens.Refund(kLimit, kLimit);
  EXPECT_TRUE(CheckNow(tokens, kLimit, kLimit).allowed) << "the refunded units are local again";
  tokens.Correct(kLimit, 6, kLimit);  // charged 16, used 6: 10 back
  EXPECT_TRUE(CheckNow(tokens, 10, kLimit).allowed);
  const RateDecision over = CheckWaiting(tokens, 1, kLimit);
  EXPECT_FALSE(over.allowed) << "16 units in the window: no more until it slides";
}

TEST_F(LeaseRateTest, AnIdleScopesUnitsGoBackToTheSharedWindow) {
  constexpr int64_t kLimit = 16;
  Replica a(port(), "a");
  Replica b(port(), "b");
  ASSERT_TRUE(a.connected());
  ASSERT_TRUE(b.connected());
  auto scope_a = a.Tenant();
  auto scope_b = b.Tenant();
  ASSERT_TRUE(CheckWaiting(scope_a->requests, kLimit, kLimit).allowed);
  scope_a->requests.Refund(kLimit, kLimit);  // a holds 16 unused units: the whole window
  EXPECT_FALSE(CheckWaiting(scope_b->requests, 1, kLimit).allowed);

  a.counters().Start();  // the sweep gives an idle scope's units back every report_interval
  const RateDecision later = Eventually([&] { return CheckWaiting(scope_b->requests, 1, kLimit); },
                                        [](const RateDecision& d) { return d.allowed; });
  EXPECT_TRUE(later.allowed) << "b leases what a gave back";
  EXPECT_GE(a.client().commands(Op::kRateReturn), 1u);
}

}  // namespace
}  // namespace turnpike::redis::testing
