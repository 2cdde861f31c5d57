// A request that finds its leased slice empty parks until the refill of that counter lands
// (governance/refill_wait.h, core/governance_filter.h), against a fake leased engine whose
// "refill" the test lands by hand. The loop only ever runs what is ready (poll), so every step
// is deterministic: the counts say whether the request waited, was woken, or timed out.
#include "governance/refill_wait.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "../governance/fixtures.h"
#include "core/governance_filter.h"

namespace turnpike::core {
namespace {
namespace net = boost::asio;
namespace gt = governance::testing;
using governance::ReserveStatus;

constexpr std::chrono::milliseconds kLongWait = std::chrono::hours(1);
constexpr int64_t kPlenty = 1'000'000'000;

// A leased budget without Redis: admits against `headroom`; short, it answers `short_answer`
// (kPending while a refill is "under way"). Land() is the engine's refill completing.
struct FakeLeasedBudget final : governance::BudgetCounter, governance::RefillSource {
  governance::ReserveResult Reserve(governance::MonthId month, int64_t estimate, int64_t) override {
    ++reserves;
    if (headroom < estimate) return short_answer;
    headroom -= estimate;
    return Hold(month, estimate);
  }
  governance::BudgetUsage Read(governance::MonthId month) const override { return {month, 0, 0}; }
  void Restore(governance::MonthId, int64_t) override {}
  void Correct(governance::MonthId, int64_t) override {}
  void Settle(governance::MonthId, int64_t estimate, int64_t actual) override {
    headroom += estimate - actual;
  }
  void Release(governance::MonthId, int64_t estimate) override { headroom += estimate; }

  governance::RefillSource* refill_source() override { return this; }
  void Watch(std::weak_ptr<governance::RefillWaiter> waiter) override {
    ++watches;
    // The race the waiter must survive: the refill completed just before this Watch (its
    // WakeAll found nobody to wake).
    headroom += land_before_watch;
    land_before_watch = 0;
    waiters.Add(std::move(waiter));
  }
  void WaitTimedOut() override { ++timeouts; }

  // The refill completes with `amount` more (a failed one: `after` is kUnavailable).
  uint64_t Land(int64_t amount, ReserveStatus after = ReserveStatus::kPending) {
    headroom += amount;
    short_answer = after;
    return waiters.WakeAll();
  }

  int64_t headroom = 0;
  ReserveStatus short_answer = ReserveStatus::kPending;
  int64_t land_before_watch = 0;
  int reserves = 0;
  int watches = 0;
  int timeouts = 0;
  governance::RefillWaiters waiters;
};

struct NoLimit final : governance::RateCounter {
  governance::RateDecision Check(governance::Nanos, int64_t, int64_t limit) override {
    governance::RateDecision d;
    d.allowed = true;
    d.limit = limit;
    return d;
  }
  void Correct(int64_t, int64_t, int64_t) override {}
};

struct FakeScope {
  FakeLeasedBudget budget;
  NoLimit requests;
  NoLimit tokens;
  governance::ScopeCounters view{budget, requests, tokens};
};

// Keys have room to spare; tenants start with an empty slice.
class FakeLeasedCounters final : public governance::Counters {
 public:
  std::shared_ptr<governance::ScopeCounters> MakeScope(governance::ScopeKind kind,
                                                       std::string_view id) override {
    auto scope = std::make_shared<FakeScope>();
    if (kind == governance::ScopeKind::kKey) scope->budget.headroom = kPlenty;
    if (kind == governance::ScopeKind::kTenant) tenants[std::string(id)] = scope;
    governance::ScopeCounters* view = &scope->view;
    return std::shared_ptr<governance::ScopeCounters>(std::move(scope), view);
  }
  std::map<std::string, std::shared_ptr<FakeScope>> tenants;
};

governance::SecretVerifier MustVerifier() {
  Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
  EXPECT_TRUE(verifier.ok());
  return std::move(verifier.value());
}

net::awaitable<FilterStatus> RunLikeADoor(Filter* filter, RequestContext* ctx) {
  FilterStatus status = filter->OnRequest(*ctx);
  if (status == FilterStatus::kSuspend) status = co_await filter->Resume(*ctx);
  co_return status;
}

class RefillWaitTest : public ::testing::Test {
 protected:
  RefillWaitTest() : fixture_(gt::MakeFixture()) {
    Result<governance::SnapshotPtr> built =
        governance::GovernanceSnapshot::Build(fixture_.data, nullptr, counters_);
    EXPECT_TRUE(built.ok());
    cell_ = std::make_unique<governance::SnapshotCell>(built.value());
    bearer_ = "Bearer " + fixture_.active_key;
    ctx_.authorization = bearer_;
    ctx_.billing.model = gt::kModel;
    ctx_.billing.prompt_bytes = 300;
    ctx_.billing.max_tokens = 100;
  }

  FakeLeasedBudget& Tenant() { return counters_.tenants.at("acme")->budget; }

  // Starts the request; runs the loop until nothing is ready (the request parked or finished).
  void Start(std::chrono::milliseconds refill_wait) {
    filter_ =
        std::make_unique<GovernanceFilter>(*cell_, MustVerifier(), SnapshotRefresh{}, refill_wait);
    result_ = net::co_spawn(io_, RunLikeADoor(filter_.get(), &ctx_), net::use_future);
    io_.poll();
  }
  bool Done() { return result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

  gt::Fixture fixture_;
  FakeLeasedCounters counters_;
  std::unique_ptr<governance::SnapshotCell> cell_;
  std::string bearer_;
  RequestContext ctx_;
  net::io_context io_;
  std::unique_ptr<GovernanceFilter> filter_;
  std::future<FilterStatus> result_;
};

TEST_F(RefillWaitTest, AParkedRequestIsWokenByTheRefillAndAdmitted) {
  Start(kLongWait);
  ASSERT_FALSE(Done()) << "parked: nothing to reserve yet";
  EXPECT_EQ(Tenant().watches, 1);
  const int reserves_parked = Tenant().reserves;
  // No refill, no new attempt: nothing polls while it waits.
  io_.poll();
  EXPECT_EQ(Tenant().reserves, reserves_parked);

  EXPECT_EQ(Tenant().Land(kPlenty), 1u) << "one waiter woken";
  io_.poll();
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kContinue);
  EXPECT_TRUE(ctx_.admission.active());
  EXPECT_EQ(Tenant().reserves, reserves_parked + 1) << "one reservation after the wake";
  EXPECT_EQ(Tenant().timeouts, 0);
  filter_->OnComplete(ctx_);
}

TEST_F(RefillWaitTest, TheRefillMayLandFromAnotherThread) {
  Start(kLongWait);
  ASSERT_FALSE(Done());
  std::thread engine([this] { Tenant().Land(kPlenty); });
  engine.join();
  io_.run_one();  // the wake the engine posted
  io_.poll();
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kContinue);
  filter_->OnComplete(ctx_);
}

TEST_F(RefillWaitTest, AFailedRefillAnswersAtOnceNotAtTheEndOfTheWait) {
  Start(kLongWait);
  ASSERT_FALSE(Done());
  EXPECT_EQ(Tenant().Land(0, ReserveStatus::kUnavailable), 1u);
  io_.poll();
  ASSERT_TRUE(Done()) << "answered on the failure, an hour before its bound";
  EXPECT_EQ(result_.get(), FilterStatus::kRespond);
  ASSERT_TRUE(ctx_.refusal);
  EXPECT_EQ(ctx_.refusal->code, ErrorCode::kUnavailable);
  EXPECT_FALSE(ctx_.admission.active());
  EXPECT_EQ(Tenant().timeouts, 0);
}

TEST_F(RefillWaitTest, AnExhaustedLedgerIsA429AtOnce) {
  Start(kLongWait);
  EXPECT_EQ(Tenant().Land(0, ReserveStatus::kRefused), 1u);
  io_.poll();
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kRespond);
  EXPECT_EQ(ctx_.refusal->code, ErrorCode::kQuotaExceeded);
}

TEST_F(RefillWaitTest, ASliceStillTooSmallAfterTheWakeParksAgain) {
  Start(kLongWait);
  ASSERT_FALSE(Done());
  EXPECT_EQ(Tenant().Land(1), 1u);  // far less than the request's estimate
  io_.poll();
  ASSERT_FALSE(Done()) << "reserve before admit: still short, so it waits again";
  EXPECT_EQ(Tenant().watches, 2);
  EXPECT_EQ(Tenant().Land(kPlenty), 1u);
  io_.poll();
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kContinue);
  filter_->OnComplete(ctx_);
}

TEST_F(RefillWaitTest, ARefillThatLandedJustBeforeWatchIsNotMissed) {
  // The engine's WakeAll ran before this waiter was in the list; the re-check after Watch sees
  // the new slice, and the request never parks.
  counters_.tenants.at("acme")->budget.land_before_watch = kPlenty;
  Start(kLongWait);
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kContinue);
  EXPECT_EQ(Tenant().watches, 1);
  EXPECT_EQ(Tenant().waiters.WakeAll(), 0u) << "the request that went on is gone from the list";
  filter_->OnComplete(ctx_);
}

TEST_F(RefillWaitTest, NoRefillWithinTheBoundIsThePending429AndOneTimeout) {
  Start(std::chrono::milliseconds(1));
  io_.run();  // the bound's timer
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kRespond);
  EXPECT_EQ(ctx_.refusal->code, ErrorCode::kRateLimited);
  EXPECT_EQ(Tenant().timeouts, 1);
  EXPECT_EQ(Tenant().Land(kPlenty), 0u) << "a late refill finds the request gone";
}

TEST_F(RefillWaitTest, WithoutAWaitThePendingAnswerIsImmediate) {
  Start(std::chrono::milliseconds(0));
  ASSERT_TRUE(Done());
  EXPECT_EQ(result_.get(), FilterStatus::kRespond);
  EXPECT_EQ(ctx_.refusal->code, ErrorCode::kRateLimited);
  EXPECT_EQ(Tenant().watches, 0);
}

// The list itself: one wake per Watch, gone waiters skipped.
struct CountingWaiter final : governance::RefillWaiter {
  void Wake() override { ++wakes; }
  int wakes = 0;
};

TEST(RefillWaitersTest, WakesEachWaiterOnceAndSkipsTheGone) {
  governance::RefillWaiters waiters;
  auto kept = std::make_shared<CountingWaiter>();
  auto gone = std::make_shared<CountingWaiter>();
  waiters.Add(kept);
  waiters.Add(gone);
  gone.reset();
  EXPECT_EQ(waiters.WakeAll(), 1u);
  EXPECT_EQ(kept->wakes, 1);
  EXPECT_EQ(waiters.WakeAll(), 0u) << "woken once: it watches again if it still waits";
  EXPECT_EQ(kept->wakes, 1);
}

}  // namespace
}  // namespace turnpike::core
