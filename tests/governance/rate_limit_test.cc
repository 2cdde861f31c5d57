#include "governance/rate_limit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "governance/local_counters.h"

namespace turnpike::governance {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// An arbitrary monotonic epoch far from zero, like a steady clock's.
constexpr Nanos kT0 = std::chrono::hours(1000);
constexpr int64_t kRpm = 60;  // one request per second at the steady rate

TEST(GcraTest, BurstOfTheFullLimitThenRefusal) {
  GcraLimiter limiter;
  for (int i = 0; i < kRpm; ++i) {
    RateDecision decision = limiter.Check(kT0, 1, kRpm);
    ASSERT_TRUE(decision.allowed) << i;
    EXPECT_EQ(decision.remaining, kRpm - 1 - i);
    EXPECT_EQ(decision.limit, kRpm);
  }
  RateDecision refused = limiter.Check(kT0, 1, kRpm);
  EXPECT_FALSE(refused.allowed);
  EXPECT_FALSE(refused.exceeds_limit);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.retry_after, seconds(1));
  EXPECT_EQ(refused.reset, seconds(60));
  EXPECT_EQ(refused.RetryAfterSeconds(), 1);
}

TEST(GcraTest, SteadyRateAfterTheBurst) {
  GcraLimiter limiter;
  for (int i = 0; i < kRpm; ++i) ASSERT_TRUE(limiter.Check(kT0, 1, kRpm).allowed);
  for (int second = 1; second <= 5; ++second) {
    Nanos now = kT0 + seconds(second);
    EXPECT_FALSE(limiter.Check(now - milliseconds(1), 1, kRpm).allowed) << second;
    EXPECT_TRUE(limiter.Check(now, 1, kRpm).allowed) << second;
    EXPECT_FALSE(limiter.Check(now, 1, kRpm).allowed) << second;
  }
}

TEST(GcraTest, RetryAfterIsExactlyWhenTheRequestWouldPass) {
  GcraLimiter limiter;
  constexpr int64_t kLimit = 7;  // T = 60s / 7, not a whole number of seconds
  for (int i = 0; i < kLimit; ++i) ASSERT_TRUE(limiter.Check(kT0, 1, kLimit).allowed);
  Nanos now = kT0 + milliseconds(1234);
  RateDecision refused = limiter.Check(now, 1, kLimit);
  ASSERT_FALSE(refused.allowed);
  EXPECT_GT(refused.retry_after, Nanos(0));
  EXPECT_FALSE(limiter.Check(now + refused.retry_after - Nanos(1), 1, kLimit).allowed);
  EXPECT_TRUE(limiter.Check(now + refused.retry_after, 1, kLimit).allowed);
  EXPECT_EQ(refused.RetryAfterSeconds(),
            (refused.retry_after.count() + 999'999'999) / 1'000'000'000);
}

TEST(GcraTest, IdleLimiterRefillsToTheFullBurstButNoMore) {
  GcraLimiter limiter;
  for (int i = 0; i < kRpm; ++i) ASSERT_TRUE(limiter.Check(kT0, 1, kRpm).allowed);
  Nanos later = kT0 + std::chrono::hours(2);
  RateDecision first = limiter.Check(later, 1, kRpm);
  ASSERT_TRUE(first.allowed);
  EXPECT_EQ(first.remaining, kRpm - 1);
  for (int i = 1; i < kRpm; ++i) ASSERT_TRUE(limiter.Check(later, 1, kRpm).allowed);
  EXPECT_FALSE(limiter.Check(later, 1, kRpm).allowed);
}

TEST(GcraTest, CostAboveTheLimitCanNeverPass) {
  GcraLimiter limiter;
  RateDecision decision = limiter.Check(kT0, 1'001, 1'000);
  EXPECT_FALSE(decision.allowed);
  EXPECT_TRUE(decision.exceeds_limit);
  EXPECT_EQ(decision.remaining, 1'000);
  EXPECT_TRUE(limiter.Check(kT0, 1'000, 1'000).allowed);  // exactly the limit: one burst
  EXPECT_FALSE(limiter.Check(kT0, 0, 1'000).exceeds_limit);
}

TEST(GcraTest, TokensAreChargedAtAdmissionAndCorrectedByUsage) {
  GcraLimiter limiter;
  constexpr int64_t kTpm = 1'000;
  ASSERT_TRUE(limiter.Check(kT0, 800, kTpm).allowed);  // the estimate
  EXPECT_FALSE(limiter.Check(kT0, 300, kTpm).allowed);
  limiter.Correct(800, 100, kTpm);  // the request used 100
  RateDecision after = limiter.Check(kT0, 300, kTpm);
  ASSERT_TRUE(after.allowed);
  EXPECT_EQ(after.remaining, kTpm - 100 - 300);
  limiter.Correct(300, 900, kTpm);  // used more than charged: pushes the limiter back
  RateDecision refused = limiter.Check(kT0, 1, kTpm);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after, milliseconds(60) * 1);  // 1 token over: one interval (60 ms)
}

TEST(GcraTest, RefundUndoesACharge) {
  GcraLimiter limiter;
  ASSERT_TRUE(limiter.Check(kT0, 1, 1).allowed);
  EXPECT_FALSE(limiter.Check(kT0, 1, 1).allowed);
  limiter.Refund(1, 1);
  EXPECT_TRUE(limiter.Check(kT0, 1, 1).allowed);
}

TEST(GcraTest, LimitChangeAppliesToExistingState) {
  GcraLimiter limiter;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limiter.Check(kT0, 1, 10).allowed);
  EXPECT_FALSE(limiter.Check(kT0, 1, 10).allowed);
  // The backlog is kept as time (60 s), so after an upgrade to 20 per minute the next request
  // passes after the new interval (3 s) instead of the old one (6 s).
  EXPECT_FALSE(limiter.Check(kT0 + seconds(3), 1, 10).allowed);
  EXPECT_TRUE(limiter.Check(kT0 + seconds(3), 1, 20).allowed);
}

TEST(GcraTest, ConcurrentChecksAdmitExactlyTheBurst) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "needs 2+ real threads";
  constexpr int kThreads = 8;
  constexpr int kChecksPerThread = 5'000;
  constexpr int64_t kLimit = 10'000;
  constexpr int kIterations = 20;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    GcraLimiter limiter;
    std::atomic<int64_t> admitted{0};
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        for (int i = 0; i < kChecksPerThread; ++i) {
          if (limiter.Check(kT0, 1, kLimit).allowed) admitted.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(admitted.load(), kLimit) << "iteration " << iteration;
  }
}

}  // namespace
}  // namespace turnpike::governance
