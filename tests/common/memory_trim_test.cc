#include "common/memory_trim.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace turnpike {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = TrimPolicy::Clock;

// Feeds `load` once a second from `now` for `count` seconds; returns the trims due.
int Feed(TrimPolicy& policy, Clock::time_point& now, int64_t load, int count) {
  int trims = 0;
  for (int i = 0; i < count; ++i) {
    now += seconds(1);
    trims += policy.Sample(load, now) ? 1 : 0;
  }
  return trims;
}

TEST(TrimPolicy, AProcessThatNeverServedIsNotTrimmed) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 0, 100), 0);
}

TEST(TrimPolicy, TrimsWhenABurstHasBeenOverForTheWholeWaitThenFollowsUp) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 100, 5), 0);
  EXPECT_EQ(Feed(policy, now, 0, 9), 0);  // quiet for 9 s of the 10
  EXPECT_EQ(Feed(policy, now, 0, 1), 1);  // the 10th
  // Idle after: the follow-ups, 30 s apart, then never again.
  EXPECT_EQ(Feed(policy, now, 0, 29), 0);
  EXPECT_EQ(Feed(policy, now, 0, 1), 1);
  EXPECT_EQ(Feed(policy, now, 0, 90), TrimPolicy::kFollowUps - 1);
  EXPECT_EQ(Feed(policy, now, 0, 1'000), 0);
}

TEST(TrimPolicy, ASteadyLoadIsNeverTrimmed) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 40, 1), 0);
  for (int i = 0; i < 300; ++i) {
    now += seconds(1);
    EXPECT_FALSE(policy.Sample(30 + i % 20, now));  // 30..49: never a quarter of 49
  }
}

TEST(TrimPolicy, ALoadThatFallsToAQuarterOfItsPeakIsTrimmed) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 100, 3), 0);
  EXPECT_EQ(Feed(policy, now, 26, 30), 0);  // above a quarter
  EXPECT_EQ(Feed(policy, now, 25, 9), 0);
  EXPECT_EQ(Feed(policy, now, 25, 1), 1);
  // The load it settled at is light: the follow-ups, then nothing more.
  EXPECT_EQ(Feed(policy, now, 25, 1'000), TrimPolicy::kFollowUps);
}

TEST(TrimPolicy, ABusyLoadAfterTheTrimIsNotFollowedUp) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 1'000, 3), 0);
  EXPECT_EQ(Feed(policy, now, 200, 10), 1);     // a fifth of the peak: calm, trimmed
  EXPECT_EQ(Feed(policy, now, 200, 1'000), 0);  // 200 a second is the new peak, steady
}

TEST(TrimPolicy, ALightLoadIsNoBurst) {
  TrimPolicy policy(seconds(2));
  Clock::time_point now{};
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Feed(policy, now, TrimPolicy::kMinBurst - 1, 1), 0);
    EXPECT_EQ(Feed(policy, now, 0, 5), 0);
  }
  EXPECT_EQ(Feed(policy, now, TrimPolicy::kMinBurst, 1), 0);
  EXPECT_EQ(Feed(policy, now, 0, 2), 1);
}

TEST(TrimPolicy, ASampleAboveAQuarterStartsTheWaitAgain) {
  TrimPolicy policy(seconds(10));
  Clock::time_point now{};
  EXPECT_EQ(Feed(policy, now, 80, 1), 0);
  EXPECT_EQ(Feed(policy, now, 0, 9), 0);
  EXPECT_EQ(Feed(policy, now, 30, 1), 0);  // 30 > 80 / 4
  EXPECT_EQ(Feed(policy, now, 0, 9), 0);
  EXPECT_EQ(Feed(policy, now, 0, 1), 1);
}

TEST(TrimPolicy, EachNewBurstIsTrimmedOnceAfter) {
  TrimPolicy policy(seconds(2));
  Clock::time_point now{};
  for (int burst = 0; burst < 5; ++burst) {
    EXPECT_EQ(Feed(policy, now, 100, 1), 0);
    EXPECT_EQ(Feed(policy, now, 0, 5), 1);  // the next burst comes before a follow-up
  }
}

TEST(MemoryTrimmer, TrimsOnItsThreadAfterABurstAndStopsWhenDestroyed) {
  std::atomic<int64_t> in_flight{60};
  std::atomic<int> samples{0};
  std::atomic<int> calls{0};
  {
    MemoryTrimmer trimmer(
        milliseconds(20),
        [&in_flight, &samples] {
          const int64_t n = in_flight.load();
          samples.fetch_add(1);
          return n;
        },
        milliseconds(2),
        [&calls] {
          calls.fetch_add(1);
          return uint64_t{4096};
        });
    while (samples.load() < 2) std::this_thread::sleep_for(milliseconds(1));  // the burst seen
    EXPECT_EQ(calls.load(), 0);
    in_flight = 0;
    // The trim, then its follow-ups (60 ms apart here), then none.
    const uint64_t all = 1 + TrimPolicy::kFollowUps;
    for (int i = 0; i < 10'000 && trimmer.totals().trims < all; ++i) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    std::this_thread::sleep_for(milliseconds(200));
    const TrimTotals totals = trimmer.totals();
    EXPECT_EQ(totals.trims, all);
    EXPECT_EQ(totals.released_bytes, 4096u * all);
    EXPECT_GE(totals.seconds, 0.0);
  }
  EXPECT_EQ(calls.load(), 1 + TrimPolicy::kFollowUps);
}

}  // namespace
}  // namespace turnpike
