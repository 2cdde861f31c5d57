#include "governance/budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <latch>
#include <thread>
#include <vector>

#include "fixtures.h"
#include "governance/local_counters.h"

namespace turnpike::governance {
namespace {

constexpr MonthId kJune2024 = (2024 - 1970) * 12 + 5;
constexpr int64_t kEstimate = 1'000;

TEST(MonthTest, MonthsAreUtcCalendarMonths) {
  EXPECT_EQ(MonthOf(0), 0u);
  EXPECT_EQ(FormatMonth(0), "1970-01");
  EXPECT_EQ(MonthOf(testing::kNow), kJune2024);
  EXPECT_EQ(FormatMonth(kJune2024), "2024-06");
  constexpr int64_t kMarch1st2024 = 1'709'251'200;
  EXPECT_EQ(FormatMonth(MonthOf(kMarch1st2024 - 1)), "2024-02");  // leap day's last second
  EXPECT_EQ(FormatMonth(MonthOf(kMarch1st2024)), "2024-03");
  EXPECT_EQ(FormatMonth(MonthOf(1'735'689'599)), "2024-12");
  EXPECT_EQ(FormatMonth(MonthOf(1'735'689'600)), "2025-01");
}

TEST(BudgetTest, ReservesUpToTheCapAndRefusesBeyond) {
  LocalBudgetCounter counter;
  constexpr int64_t kCap = 2'500;
  ReserveResult a = counter.Reserve(kJune2024, kEstimate, kCap);
  ReserveResult b = counter.Reserve(kJune2024, kEstimate, kCap);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(counter.Reserve(kJune2024, kEstimate, kCap).has_value());
  ReserveResult exact = counter.Reserve(kJune2024, kCap - 2 * kEstimate, kCap);
  EXPECT_TRUE(exact.has_value());  // spent + reserved + estimate == cap is allowed
  EXPECT_EQ(counter.Read(kJune2024).committed, kCap);
  EXPECT_FALSE(counter.Reserve(kJune2024, 1, kCap).has_value());
  EXPECT_TRUE(counter.Reserve(kJune2024, 0, kCap).has_value());  // free requests still pass
}

TEST(BudgetTest, SettleMovesTheReservationToSpentExactlyOnce) {
  LocalBudgetCounter counter;
  ReserveResult r = counter.Reserve(kJune2024, kEstimate, kUnlimitedBudget);
  ASSERT_TRUE(r.has_value());
  r->Settle(400);
  EXPECT_FALSE(r->active());
  EXPECT_EQ(counter.Read(kJune2024).spent, 400);
  EXPECT_EQ(counter.Read(kJune2024).committed, 400);
  r->Settle(700);      // no-op
  r->Release();        // no-op
  *r = Reservation();  // what the destructor does: no-op
  EXPECT_EQ(counter.Read(kJune2024).spent, 400);
  EXPECT_EQ(counter.Read(kJune2024).committed, 400);
}

TEST(BudgetTest, SettleAboveTheEstimateIsCharged) {
  LocalBudgetCounter counter;
  ReserveResult r = counter.Reserve(kJune2024, kEstimate, kUnlimitedBudget);
  ASSERT_TRUE(r.has_value());
  r->Settle(kEstimate * 3);
  EXPECT_EQ(counter.Read(kJune2024).committed, kEstimate * 3);
  EXPECT_EQ(counter.Read(kJune2024).spent, kEstimate * 3);
}

TEST(BudgetTest, DestructionAndReleaseGiveTheReservationBack) {
  LocalBudgetCounter counter;
  {
    ReserveResult r = counter.Reserve(kJune2024, kEstimate, kUnlimitedBudget);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(counter.Read(kJune2024).committed, kEstimate);
  }
  EXPECT_EQ(counter.Read(kJune2024).committed, 0);
  ReserveResult r = counter.Reserve(kJune2024, kEstimate, kUnlimitedBudget);
  r->Release();
  r->Release();
  EXPECT_EQ(counter.Read(kJune2024).committed, 0);
  EXPECT_EQ(counter.Read(kJune2024).spent, 0);
}

TEST(BudgetTest, MovedFromReservationHoldsNothing) {
  LocalBudgetCounter counter;
  ReserveResult r = counter.Reserve(kJune2024, kEstimate, kUnlimitedBudget);
  Reservation moved = std::move(*r);
  *r = Reservation();  // the moved-from one must not release
  EXPECT_EQ(counter.Read(kJune2024).committed, kEstimate);
  EXPECT_TRUE(moved.active());
  moved.Settle(kEstimate);
  EXPECT_EQ(counter.Read(kJune2024).spent, kEstimate);
}

TEST(BudgetTest, NewMonthStartsAtZeroAndOldSettlementsStayInTheirMonth) {
  LocalBudgetCounter counter;
  constexpr int64_t kCap = kEstimate;
  ReserveResult june = counter.Reserve(kJune2024, kEstimate, kCap);
  ASSERT_TRUE(june.has_value());
  EXPECT_FALSE(counter.Reserve(kJune2024, kEstimate, kCap).has_value());
  ReserveResult july = counter.Reserve(kJune2024 + 1, kEstimate, kCap);
  ASSERT_TRUE(july.has_value());
  june->Settle(kEstimate);  // a June request ending in July
  EXPECT_EQ(counter.Read(kJune2024 + 1).committed, kEstimate);
  EXPECT_EQ(counter.Read(kJune2024 + 1).spent, 0);
  // A late June reservation is charged to July, the counter's newest month.
  ReserveResult late = counter.Reserve(kJune2024, 0, kCap);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->month(), kJune2024 + 1);
  EXPECT_FALSE(counter.Reserve(kJune2024, 1, kCap).has_value());
}

// 200 threads race (each trying several times) for a budget that admits exactly 20
// reservations, many times over.
TEST(BudgetTest, ConcurrentReservationsNeverExceedTheCap) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "needs 2+ real threads";
  constexpr int kThreads = 200;
  constexpr int kAdmissible = 20;
  constexpr int kAttemptsPerThread = 2;
  constexpr int kIterations = 30;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    LocalBudgetCounter counter;
    std::vector<std::vector<Reservation>> held(kThreads);
    std::atomic<int> admitted{0};
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        for (int attempt = 0; attempt < kAttemptsPerThread; ++attempt) {
          ReserveResult r = counter.Reserve(kJune2024, kEstimate, kAdmissible * kEstimate);
          if (!r) continue;
          admitted.fetch_add(1);
          held[t].push_back(std::move(*r));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(admitted.load(), kAdmissible) << "iteration " << iteration;
    ASSERT_EQ(counter.Read(kJune2024).committed, kAdmissible * kEstimate);
  }
}

// Two threads each want to hold 15 reservations of a budget that admits 20, reserving and
// giving back in a loop, so they meet at the cap all the time. Lost or torn updates would
// admit more than 20 at once or leave the books non-zero at the end.
TEST(BudgetTest, ConcurrentReserveAndGiveBackNeverOvershoots) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "needs 2+ real threads";
  constexpr int kThreads = 2;
  constexpr int kRounds = 5'000'000;
  constexpr size_t kWantedPerThread = 15;
  constexpr int64_t kAdmissible = 20;
  LocalBudgetCounter counter;
  std::atomic<int64_t> held{0};  // a lower bound of the reservations outstanding
  std::atomic<int64_t> most_held{0};
  std::atomic<int64_t> refused{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::deque<Reservation> mine;
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        if (ReserveResult r = counter.Reserve(kJune2024, kEstimate, kAdmissible * kEstimate)) {
          int64_t now_held = held.fetch_add(1) + 1;
          int64_t most = most_held.load();
          while (now_held > most && !most_held.compare_exchange_weak(most, now_held)) {
          }
          mine.push_back(std::move(*r));
        } else {
          refused.fetch_add(1);
        }
        if (mine.size() >= kWantedPerThread || (!mine.empty() && i % 7 == 0)) {
          held.fetch_sub(1);
          if (i % 2 == 0) {
            mine.front().Settle(0);  // settled, nothing spent
          } else {
            mine.front().Release();
          }
          mine.pop_front();
        }
      }
      held.fetch_sub(static_cast<int64_t>(mine.size()));
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most_held.load(), kAdmissible);
  EXPECT_GT(refused.load(), 0);  // the cap was reached, so the test meant something
  EXPECT_EQ(counter.Read(kJune2024).committed, 0);
  EXPECT_EQ(counter.Read(kJune2024).spent, 0);
}

}  // namespace
}  // namespace turnpike::governance
