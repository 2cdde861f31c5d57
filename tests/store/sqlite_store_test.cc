// SqliteStore against a real SQLite file: migrations, governance rows, the call log and spend
// written in one transaction, paging, reconcile sums, and statement counting.
#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>

namespace turnpike::store {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-store-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<SqliteStore> Open() {
    auto opened = SqliteStore::Open((dir_ / "t.db").string(), false, &counts_);
    EXPECT_TRUE(opened.ok());
    EXPECT_TRUE(opened.value()->Migrate().ok());
    return std::move(opened.value());
  }
  void Seed() {
    governance::Plan plan;
    plan.id = "basic";
    plan.rpm = 10;
    plan.allowed_models = {"a", "b"};
    ASSERT_TRUE(store_->UpsertPlan(plan).ok());
    governance::Tenant tenant;
    tenant.id = "acme";
    tenant.name = "Acme";
    tenant.plan_id = "basic";
    tenant.log_bodies = true;
    ASSERT_TRUE(store_->InsertTenant(tenant).ok());
    governance::Key key;
    key.public_id = "abcdefghijkl";
    key.tenant_id = "acme";
    key.secret_hash.fill(7);
    key.monthly_budget_micros = 5'000'000;
    ASSERT_TRUE(store_->InsertKey(key).ok());
  }
  static CallRecord Row(int64_t cost, governance::MonthId month) {
    CallRecord r;
    r.request_id = "r";
    r.tenant_id = "acme";
    r.key_id = "abcdefghijkl";
    r.model = "a";
    r.status = 200;
    r.cost_micros = cost;
    r.month = month;
    return r;
  }

  std::filesystem::path dir_;
  StatementCounts counts_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, MigrationsApplyOnceAndRecordTheirVersion) {
  EXPECT_EQ(store_->SchemaVersion(), 2);
  const uint64_t before = counts_.value(StoreOp::kMigrate);
  store_.reset();
  store_ = Open();  // a second start applies nothing new
  EXPECT_EQ(store_->SchemaVersion(), 2);
  EXPECT_LT(counts_.value(StoreOp::kMigrate) - before, 10u);
}

TEST_F(SqliteStoreTest, GovernanceRowsRoundTrip) {
  Seed();
  auto rows = store_->LoadGovernance();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->plans.size(), 1u);
  EXPECT_EQ(rows->plans[0].rpm, 10);
  EXPECT_FALSE(rows->plans[0].tpm.has_value());
  EXPECT_EQ(rows->plans[0].allowed_models, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(rows->tenants.size(), 1u);
  EXPECT_TRUE(rows->tenants[0].log_bodies);
  ASSERT_EQ(rows->keys.size(), 1u);
  EXPECT_EQ(rows->keys[0].secret_hash[31], 7);
  EXPECT_EQ(rows->keys[0].monthly_budget_micros, 5'000'000);
  EXPECT_EQ(counts_.value(StoreOp::kSnapshotLoad), 4u);  // one statement per table
}

TEST_F(SqliteStoreTest, DuplicatesAreConflictsAndMissingRowsNotFound) {
  Seed();
  governance::Tenant again;
  again.id = "acme";
  again.plan_id = "basic";
  Status dup = store_->InsertTenant(again);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kConflict);
  again.id = "nobody";
  EXPECT_EQ(store_->UpdateTenant(again).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->SetKeyStatus("zzzzzzzzzzzz", governance::KeyStatus::kRevoked, 1).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(store_->DeletePrice("none").error().code, ErrorCode::kNotFound);
}

TEST_F(SqliteStoreTest, CallsAndSpendAreWrittenTogetherAndPage) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows;
  for (int i = 1; i <= 5; ++i) rows.push_back(Row(i * 100, month));
  const uint64_t transactions = counts_.value(StoreOp::kTransaction);  // migrations' so far
  const std::span<const CallRecord> batch[] = {rows};
  ASSERT_TRUE(store_->WriteCalls(batch, true, {}).ok());
  // One batch: 5 inserts, the month's first row and the tenant's id range noted once each,
  // BEGIN + COMMIT, one upsert per scope.
  EXPECT_EQ(counts_.value(StoreOp::kCallLogInsert), 5u);
  EXPECT_EQ(counts_.value(StoreOp::kCallLogIndex), 2u);
  EXPECT_EQ(counts_.value(StoreOp::kTransaction) - transactions, 2u);
  EXPECT_EQ(counts_.value(StoreOp::kSpendWrite), 2u);

  const std::string months[] = {governance::FormatMonth(month)};
  auto spend = store_->LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  ASSERT_EQ(spend->size(), 2u);
  for (const SpendRow& row : spend.value()) EXPECT_EQ(row.spent_micros, 1500);

  CallQuery q;
  q.limit = 2;
  auto page = store_->QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->at(0).record.cost_micros, 500);  // newest first
  q.before_id = page->back().id;
  auto next = store_->QueryCalls(q);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->at(0).record.cost_micros, 300);

  auto sums = store_->SumCallLog(months[0]);
  ASSERT_TRUE(sums.ok());
  ASSERT_EQ(sums->size(), 2u);
  for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, 1500);
}

TEST_F(SqliteStoreTest, SpendWithoutRowsWhenTheLogIsOff) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows = {Row(250, month), Row(250, month)};
  const std::span<const CallRecord> batch[] = {rows};
  ASSERT_TRUE(store_->WriteCalls(batch, false, {}).ok());
  EXPECT_EQ(counts_.value(StoreOp::kCallLogInsert), 0u);
  const std::string months[] = {governance::FormatMonth(month)};
  auto spend = store_->LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  ASSERT_EQ(spend->size(), 2u);
  EXPECT_EQ(spend->front().spent_micros, 500);
  auto page = store_->QueryCalls(CallQuery{});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->empty());
}

// Reconcile finds a month's rows from the first id noted for it: rows of a month that arrive
// after the next month began (a request that started before midnight) and rows of later
// transactions must all be summed, and each month is noted once, not per transaction.
TEST_F(SqliteStoreTest, ReconcileSumsEveryRowOfAMonthAcrossBatches) {
  Seed();
  const governance::MonthId october = governance::MonthOf(1'790'000'000);
  const governance::MonthId november = october + 1;
  std::vector<CallRecord> first = {Row(100, october), Row(100, october)};
  std::vector<CallRecord> second = {Row(7, november), Row(100, october), Row(7, november)};
  std::vector<CallRecord> third = {Row(100, october)};
  const std::span<const CallRecord> two_batches[] = {first, second};
  ASSERT_TRUE(store_->WriteCalls(two_batches, true, {}).ok());
  const std::span<const CallRecord> one_batch[] = {third};
  ASSERT_TRUE(store_->WriteCalls(one_batch, true, {}).ok());
  EXPECT_EQ(counts_.value(StoreOp::kCallLogIndex), 2u + 2u);  // two months, a block per batch

  for (auto [month, cost] : {std::pair{october, 400}, std::pair{november, 14}}) {
    auto sums = store_->SumCallLog(governance::FormatMonth(month));
    ASSERT_TRUE(sums.ok());
    ASSERT_EQ(sums->size(), 2u);  // the key and the tenant
    for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, cost);
  }
  auto none = store_->SumCallLog(governance::FormatMonth(november + 1));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Rows go in multi-row statements (32 rows each) with single-row ones for the rest; a month
// that begins inside a multi-row statement is noted at its own first row.
TEST_F(SqliteStoreTest, ManyRowsGoInMultiRowStatementsAndMonthsStillSum) {
  Seed();
  const governance::MonthId october = governance::MonthOf(1'790'000'000);
  const governance::MonthId november = october + 1;
  std::vector<CallRecord> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(Row(10, october));
  for (int i = 0; i < 30; ++i) rows.push_back(Row(1, november));
  const std::span<const CallRecord> batch[] = {rows};
  ASSERT_TRUE(store_->WriteCalls(batch, true, {}).ok());
  EXPECT_EQ(counts_.value(StoreOp::kCallLogInsert), 2u + 6u);  // 32 + 32 + 6 x 1
  EXPECT_EQ(counts_.value(StoreOp::kCallLogIndex), 2u + 1u);   // two months, one tenant block
  for (auto [month, cost] : {std::pair{october, 400}, std::pair{november, 30}}) {
    auto sums = store_->SumCallLog(governance::FormatMonth(month));
    ASSERT_TRUE(sums.ok());
    ASSERT_EQ(sums->size(), 2u);
    for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, cost);
  }
  CallQuery q;
  q.limit = 1000;
  auto page = store_->QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 70u);
  EXPECT_EQ(page->back().record.cost_micros, 10);  // oldest first row: October's
  EXPECT_EQ(page->front().record.cost_micros, 1);
}

// A tenant's page walks its id ranges newest first: rows of other tenants in the same batches
// are skipped, pages continue across batches with before_id, and other filters still apply.
TEST_F(SqliteStoreTest, TenantPagesWalkTheTenantsBlocks) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  auto row = [&](std::string tenant, std::string key, int64_t cost) {
    CallRecord r = Row(cost, month);
    r.tenant_id = std::move(tenant);
    r.key_id = std::move(key);
    return r;
  };
  std::vector<CallRecord> first = {row("a", "ka", 1), row("b", "kb", 2), row("a", "ka2", 3),
                                   row("b", "kb", 4)};
  std::vector<CallRecord> second = {row("b", "kb", 5), row("b", "kb", 6)};
  std::vector<CallRecord> third = {row("a", "ka", 7)};
  for (const std::vector<CallRecord>* batch : {&first, &second, &third}) {
    const std::span<const CallRecord> spans[] = {*batch};
    ASSERT_TRUE(store_->WriteCalls(spans, true, {}).ok());
  }
  auto costs = [](const std::vector<CallRow>& rows) {
    std::vector<int64_t> out;
    for (const CallRow& r : rows) out.push_back(r.record.cost_micros);
    return out;
  };
  CallQuery q;
  q.tenant_id = "a";
  q.limit = 2;
  auto page = store_->QueryCalls(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(costs(page.value()), (std::vector<int64_t>{7, 3}));
  q.before_id = page->back().id;
  auto next = store_->QueryCalls(q);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(costs(next.value()), (std::vector<int64_t>{1}));

  q = CallQuery{};
  q.tenant_id = "b";
  auto b = store_->QueryCalls(q);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(costs(b.value()), (std::vector<int64_t>{6, 5, 4, 2}));

  q.tenant_id = "a";
  q.key_id = "ka2";
  auto by_key = store_->QueryCalls(q);
  ASSERT_TRUE(by_key.ok());
  EXPECT_EQ(costs(by_key.value()), (std::vector<int64_t>{3}));

  q = CallQuery{};
  q.tenant_id = "nobody";
  auto none = store_->QueryCalls(q);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Migration 2 replaces the call log's secondary indexes with coarse ones and fills them from
// the rows already there: old rows are still found by tenant and summed by month.
TEST_F(SqliteStoreTest, MigrationTwoIndexesRowsWrittenBeforeIt) {
  store_.reset();
  std::filesystem::remove_all(dir_);
  {
    auto opened = SqliteStore::Open((dir_ / "t.db").string(), false, &counts_);
    ASSERT_TRUE(opened.ok());
    ASSERT_TRUE(opened.value()->MigrateTo(1).ok());
    ASSERT_EQ(opened.value()->SchemaVersion(), 1);
    auto db = Database::Open((dir_ / "t.db").string(), false, &counts_);
    ASSERT_TRUE(db.ok());
    for (auto [tenant, month, cost] : {std::tuple{"a", "2026-10", 1}, std::tuple{"b", "2026-10", 2},
                                       std::tuple{"a", "2026-11", 4}}) {
      auto q = db.value()->Prepare(
          "INSERT INTO call_log (time_ms, request_id, tenant_id, key_id, model, deployment, "
          "status, error, prompt_tokens, completion_tokens, cached_tokens, cost_micros, "
          "estimated, unpriced, total_us, month) "
          "VALUES (1, 'r', ?, 'k', 'm', 'd', 200, '', 0, 0, 0, ?, 0, 0, 0, ?)",
          StoreOp::kAdminWrite);
      ASSERT_TRUE(q.ok());
      q->Bind(1, tenant).Bind(2, cost).Bind(3, month);
      ASSERT_TRUE(q->Run().ok());
    }
  }
  store_ = Open();  // applies migration 2
  EXPECT_EQ(store_->SchemaVersion(), 2);
  CallQuery q;
  q.tenant_id = "a";
  auto page = store_->QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->at(0).record.cost_micros, 4);
  EXPECT_EQ(page->at(1).record.cost_micros, 1);
  auto october = store_->SumCallLog("2026-10");
  ASSERT_TRUE(october.ok());
  int64_t total = 0;
  for (const SpendRow& row : october.value()) {
    if (row.scope == SpendScope::kTenant) total += row.spent_micros;
  }
  EXPECT_EQ(total, 3);
}

}  // namespace
}  // namespace turnpike::store
