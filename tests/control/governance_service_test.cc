// GovernanceService over a fake engine (fake_engine.h): the service speaks only the store's
// roles. Start loads the records and publishes; an admin write goes to the records and
// publishes at once; a change the feed reports makes the next tick reload and publish; the
// call log's batches reach WriteCalls; reconcile corrects the spend that drifted.
#include "control/governance_service.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "fake_engine.h"
#include "governance/local_counters.h"

namespace turnpike::control {
namespace {

constexpr char kKeyId[] = "abcdefghijkl";

template <typename T>
boost::asio::awaitable<void> Keep(boost::asio::awaitable<Result<T>> op,
                                  std::optional<Result<T>>* out) {
  Result<T> result = co_await std::move(op);
  out->emplace(std::move(result));
}

// Runs one of the service's operations to completion on a loop of the calling thread.
template <typename T>
Result<T> RunToEnd(boost::asio::awaitable<Result<T>> op) {
  boost::asio::io_context io;
  std::optional<Result<T>> out;
  boost::asio::co_spawn(io, Keep(std::move(op), &out), boost::asio::detached);
  io.run();
  return std::move(*out);
}

// Waits (bounded) for `done`, which the store thread's tick makes true.
template <typename Pred>
bool Eventually(Pred done) {
  for (int i = 0; i < 2'000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

class GovernanceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { StartOver(std::make_unique<FakeEngine>()); }

  void StartOver(std::unique_ptr<FakeEngine> engine) {
    engine_ = engine.get();
    engine_->fake_records().ChangeBehindTheBack([](store::GovernanceRows& rows) {
      governance::Plan plan;
      plan.id = "basic";
      rows.plans.push_back(plan);
      governance::Tenant tenant;
      tenant.id = "acme";
      tenant.name = "Acme";
      tenant.plan_id = "basic";
      rows.tenants.push_back(tenant);
      governance::Key key;
      key.public_id = kKeyId;
      key.tenant_id = "acme";
      key.secret_hash.fill(7);
      rows.keys.push_back(key);
    });
    engine_->fake_call_log().SetAnswers(persisted_, logged_);
    store::StoreThreadOptions options;
    options.tick = std::chrono::milliseconds(1);
    // As app/ does: the engine migrated and its thread built before the service borrows them.
    service_.reset();
    thread_.reset();
    owned_engine_ = std::move(engine);
    ASSERT_TRUE(owned_engine_->Migrate().ok());
    thread_ = std::make_unique<store::StoreThread>(*owned_engine_, options);
    auto started = GovernanceService::Start(config_, *owned_engine_, *thread_, counters_);
    ASSERT_TRUE(started.ok()) << started.error().message;
    service_ = std::move(started.value());
  }

  governance::LocalCounters counters_;
  config::Config config_ = [] {
    config::Config c;
    c.governance.snapshot_ttl = std::chrono::milliseconds(1);
    c.governance.reconcile_interval = std::chrono::milliseconds(0);
    return c;
  }();
  std::vector<store::SpendRow> persisted_;
  std::vector<store::SpendRow> logged_;
  FakeEngine* engine_ = nullptr;  // owned_engine_
  // Destroyed in reverse: the service (which stops the thread), the thread, the engine.
  std::unique_ptr<store::Engine> owned_engine_;
  std::unique_ptr<store::StoreThread> thread_;
  std::unique_ptr<GovernanceService> service_;
};

TEST_F(GovernanceServiceTest, StartLoadsAndPublishes) {
  EXPECT_EQ(engine_->SchemaVersion(), 1);
  const governance::SnapshotPtr snapshot = service_->cell().Load();
  EXPECT_NE(snapshot->FindTenant("acme"), nullptr);
  EXPECT_NE(snapshot->FindKey(kKeyId), nullptr);
  EXPECT_GE(engine_->fake_records().polls(), 1);  // the feed's starting point
}

TEST_F(GovernanceServiceTest, AnAdminWriteGoesToTheRecordsAndPublishesAtOnce) {
  const uint64_t version = service_->cell().version();
  governance::Tenant tenant;
  tenant.id = "beta";
  tenant.name = "Beta";
  tenant.plan_id = "basic";
  Result<governance::Tenant> created = RunToEnd(service_->CreateTenant(tenant));
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(engine_->fake_records().writes(), 1);
  EXPECT_EQ(engine_->fake_records().rows().tenants.size(), 2u);
  EXPECT_NE(service_->cell().Load()->FindTenant("beta"), nullptr);
  EXPECT_GT(service_->cell().version(), version);

  tenant.id = "gamma";
  tenant.plan_id = "none";  // the snapshot would be inconsistent: nothing is written
  Result<governance::Tenant> refused = RunToEnd(service_->CreateTenant(tenant));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(engine_->fake_records().writes(), 1);
  EXPECT_EQ(service_->cell().Load()->FindTenant("gamma"), nullptr);
}

TEST_F(GovernanceServiceTest, AChangeTheFeedReportsIsReloadedAndPublishedOnTheNextTick) {
  engine_->fake_records().ChangeBehindTheBack([](store::GovernanceRows& rows) {
    for (governance::Key& k : rows.keys) k.status = governance::KeyStatus::kRevoked;
  });
  EXPECT_TRUE(Eventually([&] {
    const governance::SnapshotPtr snapshot = service_->cell().Load();
    const governance::KeyEntry* key = snapshot->FindKey(kKeyId);
    return key != nullptr && key->key.status == governance::KeyStatus::kRevoked;
  }));
}

TEST_F(GovernanceServiceTest, CallLogBatchesReachWriteCalls) {
  store::CallBatch batch;
  for (int i = 0; i < 3; ++i) {
    store::CallRecord r;
    r.request_id = "r" + std::to_string(i);
    r.tenant_id = "acme";
    r.key_id = kKeyId;
    r.cost_micros = 10;
    batch.Add(store::ViewOf(r));
  }
  ASSERT_EQ(service_->thread().SubmitRecords(batch), store::SubmitResult::kAccepted);
  service_->Stop();  // writes what is queued
  const std::vector<WrittenBatch> written = engine_->fake_call_log().batches();
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written[0].log_rows);  // call_log.log_store
  ASSERT_EQ(written[0].records.size(), 3u);
  EXPECT_EQ(written[0].records[2].request_id, "r2");
}

TEST_F(GovernanceServiceTest, ReconcileAddsTheDifferenceToDriftedSpend) {
  engine_->fake_call_log().SetAnswers({{store::SpendScope::kKey, kKeyId, "", 100}},
                                      {{store::SpendScope::kKey, kKeyId, "", 300}});
  Result<ReconcileReport> report = RunToEnd(service_->ReconcileNow());
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->scopes_corrected, 2);  // this month and the last
  EXPECT_EQ(report->drift_micros, 400);
  // Both months in one store call: one transaction under one lock, so another replica cannot
  // take the lock between them (that left a month corrected and this answer a kConflict).
  EXPECT_EQ(engine_->fake_call_log().reconcile_calls(), 1);
  const std::vector<store::SpendRow> added = engine_->fake_call_log().spend_added();
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].spent_micros, 200);  // the log's 300 less the row's 100
}

// With a pool (sessions, store/store_thread.h's lanes): the change feed's starting point and
// admin writes on the control session (1), call-log pages and reconcile on a read session
// (2, 3), batches on the engine itself (0).
class PooledGovernanceServiceTest : public GovernanceServiceTest {
 protected:
  void SetUp() override {
    auto engine = std::make_unique<PooledFakeEngine>(4);
    pooled_ = engine.get();
    StartOver(std::move(engine));
  }
  std::array<uint64_t, 4> Uses() const {
    return {pooled_->uses(0), pooled_->uses(1), pooled_->uses(2), pooled_->uses(3)};
  }
  PooledFakeEngine* pooled_ = nullptr;
};

TEST_F(PooledGovernanceServiceTest, EachOperationRunsOnItsLanesSession) {
  ASSERT_EQ(service_->thread().lanes(), 4u);
  EXPECT_GE(pooled_->uses(1), 1u);  // Start: the records loaded and the feed marked there
  // Control ticks keep asking session 1 for its records; the others only when told.
  std::array<uint64_t, 4> before = Uses();
  ASSERT_TRUE(RunToEnd(service_->Calls(store::CallQuery{})).ok());
  std::array<uint64_t, 4> after = Uses();
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2] + after[3] - before[2] - before[3], 1u);

  before = Uses();
  governance::Tenant tenant;
  tenant.id = "beta";
  tenant.name = "Beta";
  tenant.plan_id = "basic";
  ASSERT_TRUE(RunToEnd(service_->CreateTenant(tenant)).ok());
  after = Uses();
  EXPECT_GT(after[1], before[1]);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2] + after[3], before[2] + before[3]);

  // Reconcile on a read session too: the call-log writer (0) does not wait for its sums.
  before = Uses();
  ASSERT_TRUE(RunToEnd(service_->ReconcileNow()).ok());
  after = Uses();
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2] + after[3], before[2] + before[3] + 1);

  store::CallBatch batch;
  store::CallRecord r;
  r.tenant_id = "acme";
  r.key_id = kKeyId;
  batch.Add(store::ViewOf(r));
  before = Uses();
  ASSERT_EQ(service_->thread().SubmitRecords(batch), store::SubmitResult::kAccepted);
  service_->Stop();
  after = Uses();
  EXPECT_EQ(after[0], before[0] + 1);
  EXPECT_EQ(engine_->fake_call_log().batches().size(), 1u);
}

}  // namespace
}  // namespace turnpike::control
