// The embedded engine against a real SQLite file: migrations, governance records, the call log
// and spend written in one transaction, paging, reconcile sums, and statement counting.
#include "store/sqlite/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>

#include "store/sqlite/migrations.h"

namespace turnpike::store::sqlite {
namespace {

// Groups of records as batches, one part each: what WriteCalls takes, as the store thread
// hands it over.
class Batches {
 public:
  Batches(std::initializer_list<std::span<const CallRecord>> groups) {
    batches_.reserve(groups.size());
    for (std::span<const CallRecord> group : groups) {
      CallBatch& batch = batches_.emplace_back();
      for (const CallRecord& r : group) batch.Add(ViewOf(r));
    }
    for (const CallBatch& batch : batches_) parts_.push_back({&batch, 0, batch.size()});
  }
  operator CallBatchParts() const { return parts_; }

 private:
  std::vector<CallBatch> batches_;
  std::vector<CallBatchPart> parts_;
};

class SqliteEngineTest : public ::testing::Test {
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
  std::unique_ptr<SqliteEngine> Open() {
    auto opened = OpenEngine((dir_ / "t.db").string(), {});
    EXPECT_TRUE(opened.ok());
    EXPECT_TRUE(opened.value()->Migrate().ok());
    return std::move(opened.value());
  }
  // A second, raw connection to the store's file (rows written or read as SQL).
  std::unique_ptr<Database> Raw() {
    auto db = Database::Open((dir_ / "t.db").string(), false, &raw_counts_);
    EXPECT_TRUE(db.ok());
    return db.ok() ? std::move(db.value()) : nullptr;
  }
  // Closes the store and starts a new file migrated only to schema `version` (a migration's
  // test over rows written by the schema before it); a raw connection to it.
  std::unique_ptr<Database> FreshAt(int version) {
    store_.reset();
    std::filesystem::remove_all(dir_);
    auto opened = OpenEngine((dir_ / "t.db").string(), {});
    if (!opened.ok() || !opened.value()->MigrateTo(version).ok() ||
        opened.value()->SchemaVersion() != version) {
      ADD_FAILURE() << "cannot migrate a new store to version " << version;
      return nullptr;
    }
    return Raw();
  }
  void Seed() {
    governance::Plan plan;
    plan.id = "basic";
    plan.rpm = 10;
    plan.allowed_models = {"a", "b"};
    plan.search_query_price_micros = 2'000;
    ASSERT_TRUE(store_->records().UpsertPlan(plan).ok());
    governance::Tenant tenant;
    tenant.id = "acme";
    tenant.name = "Acme";
    tenant.plan_id = "basic";
    tenant.log_bodies = true;
    ASSERT_TRUE(store_->records().InsertTenant(tenant).ok());
    governance::Key key;
    key.public_id = "abcdefghijkl";
    key.tenant_id = "acme";
    key.secret_hash.fill(7);
    key.monthly_budget_micros = 5'000'000;
    ASSERT_TRUE(store_->records().InsertKey(key).ok());
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

  // What the engine executed (the raw connections count apart).
  const StatementCounts& counts() const { return store_->statements(); }

  std::filesystem::path dir_;
  StatementCounts raw_counts_;
  std::unique_ptr<SqliteEngine> store_;
};

TEST_F(SqliteEngineTest, MigrationsApplyOnceAndRecordTheirVersion) {
  EXPECT_EQ(store_->SchemaVersion(), LatestSchemaVersion());
  store_.reset();
  store_ = Open();  // a second start applies nothing new
  EXPECT_EQ(store_->SchemaVersion(), LatestSchemaVersion());
  EXPECT_LT(counts().value(StoreOp::kMigrate), 10u);  // the new engine's: opening and checking
}

// A plan's budget-alert thresholds: unset (the gateway's), none, or its own list.
TEST_F(SqliteEngineTest, PlansKeepTheirOwnBudgetAlerts) {
  governance::Plan plan;
  plan.id = "a-default";
  ASSERT_TRUE(store_->records().UpsertPlan(plan).ok());
  plan.id = "b-none";
  plan.budget_alerts = std::vector<int>{};
  ASSERT_TRUE(store_->records().UpsertPlan(plan).ok());
  plan.id = "c-own";
  plan.budget_alerts = std::vector<int>{25, 75, 1000};
  ASSERT_TRUE(store_->records().UpsertPlan(plan).ok());
  auto rows = store_->records().LoadAll();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->plans.size(), 3u);
  EXPECT_FALSE(rows->plans[0].budget_alerts.has_value());
  EXPECT_EQ(rows->plans[1].budget_alerts, std::vector<int>{});
  EXPECT_EQ(rows->plans[2].budget_alerts, (std::vector<int>{25, 75, 1000}));
}

TEST_F(SqliteEngineTest, GovernanceRowsRoundTrip) {
  Seed();
  auto rows = store_->records().LoadAll();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->plans.size(), 1u);
  EXPECT_EQ(rows->plans[0].rpm, 10);
  EXPECT_FALSE(rows->plans[0].tpm.has_value());
  EXPECT_EQ(rows->plans[0].allowed_models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rows->plans[0].search_query_price_micros, 2'000);
  ASSERT_EQ(rows->tenants.size(), 1u);
  EXPECT_TRUE(rows->tenants[0].log_bodies);
  ASSERT_EQ(rows->keys.size(), 1u);
  EXPECT_EQ(rows->keys[0].secret_hash[31], 7);
  EXPECT_EQ(rows->keys[0].monthly_budget_micros, 5'000'000);
  EXPECT_EQ(counts().value(StoreOp::kSnapshotLoad), 4u);  // one statement per table
}

TEST_F(SqliteEngineTest, ADeletedKeyIsGoneAndASecondDeleteIsNotFound) {
  Seed();
  ASSERT_TRUE(store_->records().DeleteKey("abcdefghijkl").ok());
  auto rows = store_->records().LoadAll();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->keys.empty());
  EXPECT_EQ(store_->records().DeleteKey("abcdefghijkl").error().code, ErrorCode::kNotFound);
}

TEST_F(SqliteEngineTest, TheStoreCacheMetricIsSampledOnTick) {
  Seed();
  observability::PrometheusWriter before;
  store_->RenderMetrics(before);
  EXPECT_NE(before.Take().find("\nturnpike_store_cache_bytes 0\n"), std::string::npos);
  store_->Tick();
  observability::PrometheusWriter after;
  store_->RenderMetrics(after);
  const std::string text = after.Take();
  const std::string sample = "\nturnpike_store_cache_bytes ";  // not the HELP line
  const size_t at = text.find(sample);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GT(std::stoll(text.substr(at + sample.size())), 0) << text;
}

// The change feed is the file's data version: another connection's commit is reported once,
// the engine's own writes are not, and the first poll marks the starting point.
TEST_F(SqliteEngineTest, ChangeFeedReportsOtherConnectionsCommitsOnce) {
  Result<bool> first = store_->records().PollChanges();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first.value());
  Seed();
  EXPECT_FALSE(store_->records().PollChanges().value());
  std::unique_ptr<Database> db = Raw();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(
      db->Exec("UPDATE tenants SET name = 'Other' WHERE id = 'acme'", StoreOp::kAdminWrite).ok());
  EXPECT_TRUE(store_->records().PollChanges().value());
  EXPECT_FALSE(store_->records().PollChanges().value());
  EXPECT_EQ(counts().value(StoreOp::kChangeCheck), 4u);  // one statement per poll
}

TEST_F(SqliteEngineTest, DuplicatesAreConflictsAndMissingRowsNotFound) {
  Seed();
  governance::Tenant again;
  again.id = "acme";
  again.plan_id = "basic";
  Status dup = store_->records().InsertTenant(again);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kConflict);
  again.id = "nobody";
  EXPECT_EQ(store_->records().UpdateTenant(again).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->records()
                .SetKeyStatus("zzzzzzzzzzzz", governance::KeyStatus::kRevoked, 1)
                .error()
                .code,
            ErrorCode::kNotFound);
  EXPECT_EQ(store_->records().DeletePrice("none").error().code, ErrorCode::kNotFound);
}

// Prices read back as written, the reasoning price included (migration 7); a price written
// before that migration reads its reasoning price as the output price.
TEST_F(SqliteEngineTest, PricesRoundTripWithTheirReasoningPrice) {
  {
    std::unique_ptr<Database> db = FreshAt(6);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("INSERT INTO prices (model, input_micros_per_mtok, "
                         "output_micros_per_mtok, cached_input_micros_per_mtok, "
                         "max_output_tokens, updated_at) VALUES ('old', 1, 2, 3, 4, 5)",
                         StoreOp::kAdminWrite)
                    .ok());
  }
  store_ = Open();  // applies migration 7
  EXPECT_EQ(store_->SchemaVersion(), LatestSchemaVersion());
  PriceOverride thinking{"o", {10, 20, 30, 40, 50, 70}, 9};
  ASSERT_TRUE(store_->records().UpsertPrice(thinking).ok());
  PriceOverride plain{"p", {1, 2, 3, 4}, 9};
  ASSERT_TRUE(store_->records().UpsertPrice(plain).ok());
  auto rows = store_->records().LoadAll();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->prices.size(), 3u);
  EXPECT_EQ(rows->prices[0].model, "o");
  EXPECT_EQ(rows->prices[0].price.cache_write(), 50);
  EXPECT_EQ(rows->prices[0].price.reasoning(), 70);
  EXPECT_EQ(rows->prices[1].model, "old");
  EXPECT_EQ(rows->prices[1].price.reasoning_micros_per_mtok, governance::ModelPrice::kSameAsOutput);
  EXPECT_EQ(rows->prices[1].price.reasoning(), 2);  // as output
  EXPECT_EQ(rows->prices[2].model, "p");
  EXPECT_EQ(rows->prices[2].price.reasoning(), 2);  // as output (stored resolved)
  thinking.price.reasoning_micros_per_mtok = 80;    // an upsert replaces it
  ASSERT_TRUE(store_->records().UpsertPrice(thinking).ok());
  rows = store_->records().LoadAll();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->prices[0].price.reasoning(), 80);
}

TEST_F(SqliteEngineTest, CallsAndSpendAreWrittenTogetherAndPage) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows;
  for (int i = 1; i <= 5; ++i) rows.push_back(Row(i * 100, month));
  const uint64_t transactions = counts().value(StoreOp::kTransaction);  // migrations' so far
  const Batches batch{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  // One batch: 5 inserts, the month's first row and the tenant's id range noted once each,
  // BEGIN + COMMIT, one upsert per scope and one for the day's counter.
  EXPECT_EQ(counts().value(StoreOp::kCallLogInsert), 5u);
  EXPECT_EQ(counts().value(StoreOp::kCallLogIndex), 2u);
  EXPECT_EQ(counts().value(StoreOp::kTransaction) - transactions, 2u);
  EXPECT_EQ(counts().value(StoreOp::kSpendWrite), 3u);  // + one daily counter (daily_spend.h)

  const std::string months[] = {governance::FormatMonth(month)};
  auto spend = store_->call_log().LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  ASSERT_EQ(spend->size(), 2u);
  for (const SpendRow& row : spend.value()) EXPECT_EQ(row.spent_micros, 1500);

  CallQuery q;
  q.limit = 2;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->at(0).record.cost_micros, 500);  // newest first
  q.before_id = page->back().id;
  auto next = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->at(0).record.cost_micros, 300);

  auto sums = store_->call_log().SumCallLog(months[0]);
  ASSERT_TRUE(sums.ok());
  ASSERT_EQ(sums->size(), 2u);
  for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, 1500);
}

TEST_F(SqliteEngineTest, SpendWithoutRowsWhenTheLogIsOff) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows = {Row(250, month), Row(250, month)};
  const Batches batch{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, false, {}).ok());
  EXPECT_EQ(counts().value(StoreOp::kCallLogInsert), 0u);
  const std::string months[] = {governance::FormatMonth(month)};
  auto spend = store_->call_log().LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  ASSERT_EQ(spend->size(), 2u);
  EXPECT_EQ(spend->front().spent_micros, 500);
  auto page = store_->call_log().QueryCalls(CallQuery{});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->empty());
}

// Reconcile finds a month's rows from the first id noted for it: rows of a month that arrive
// after the next month began (a request that started before midnight) and rows of later
// transactions must all be summed, and each month is noted once, not per transaction.
TEST_F(SqliteEngineTest, ReconcileSumsEveryRowOfAMonthAcrossBatches) {
  Seed();
  const governance::MonthId october = governance::MonthOf(1'790'000'000);
  const governance::MonthId november = october + 1;
  std::vector<CallRecord> first = {Row(100, october), Row(100, october)};
  std::vector<CallRecord> second = {Row(7, november), Row(100, october), Row(7, november)};
  std::vector<CallRecord> third = {Row(100, october)};
  const Batches two_batches{first, second};
  ASSERT_TRUE(store_->call_log().WriteCalls(two_batches, true, {}).ok());
  const Batches one_batch{third};
  ASSERT_TRUE(store_->call_log().WriteCalls(one_batch, true, {}).ok());
  EXPECT_EQ(counts().value(StoreOp::kCallLogIndex), 2u + 2u);  // two months, a block per batch

  for (auto [month, cost] : {std::pair{october, 400}, std::pair{november, 14}}) {
    auto sums = store_->call_log().SumCallLog(governance::FormatMonth(month));
    ASSERT_TRUE(sums.ok());
    ASSERT_EQ(sums->size(), 2u);  // the key and the tenant
    for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, cost);
  }
  auto none = store_->call_log().SumCallLog(governance::FormatMonth(november + 1));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Rows go in multi-row statements (32 rows each) with single-row ones for the rest; a month
// that begins inside a multi-row statement is noted at its own first row.
TEST_F(SqliteEngineTest, ManyRowsGoInMultiRowStatementsAndMonthsStillSum) {
  Seed();
  const governance::MonthId october = governance::MonthOf(1'790'000'000);
  const governance::MonthId november = october + 1;
  std::vector<CallRecord> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(Row(10, october));
  for (int i = 0; i < 30; ++i) rows.push_back(Row(1, november));
  const Batches batch{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  EXPECT_EQ(counts().value(StoreOp::kCallLogInsert), 2u + 6u);  // 32 + 32 + 6 x 1
  EXPECT_EQ(counts().value(StoreOp::kCallLogIndex), 2u + 1u);   // two months, one tenant block
  for (auto [month, cost] : {std::pair{october, 400}, std::pair{november, 30}}) {
    auto sums = store_->call_log().SumCallLog(governance::FormatMonth(month));
    ASSERT_TRUE(sums.ok());
    ASSERT_EQ(sums->size(), 2u);
    for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, cost);
  }
  CallQuery q;
  q.limit = 1000;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 70u);
  EXPECT_EQ(page->back().record.cost_micros, 10);  // oldest first row: October's
  EXPECT_EQ(page->front().record.cost_micros, 1);
}

// A tenant's page walks its id ranges newest first: rows of other tenants in the same batches
// are skipped, pages continue across batches with before_id, and other filters still apply.
TEST_F(SqliteEngineTest, TenantPagesWalkTheTenantsBlocks) {
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
    const Batches spans{*batch};
    ASSERT_TRUE(store_->call_log().WriteCalls(spans, true, {}).ok());
  }
  auto costs = [](const std::vector<CallRow>& rows) {
    std::vector<int64_t> out;
    for (const CallRow& r : rows) out.push_back(r.record.cost_micros);
    return out;
  };
  CallQuery q;
  q.tenant_id = "a";
  q.limit = 2;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(costs(page.value()), (std::vector<int64_t>{7, 3}));
  q.before_id = page->back().id;
  auto next = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(costs(next.value()), (std::vector<int64_t>{1}));

  q = CallQuery{};
  q.tenant_id = "b";
  auto b = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(costs(b.value()), (std::vector<int64_t>{6, 5, 4, 2}));

  q.tenant_id = "a";
  q.key_id = "ka2";
  auto by_key = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(by_key.ok());
  EXPECT_EQ(costs(by_key.value()), (std::vector<int64_t>{3}));

  q = CallQuery{};
  q.tenant_id = "nobody";
  auto none = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Migration 2 replaces the call log's secondary indexes with coarse ones and fills them from
// the rows already there: old rows are still found by tenant and summed by month.
TEST_F(SqliteEngineTest, MigrationTwoIndexesRowsWrittenBeforeIt) {
  {
    std::unique_ptr<Database> db = FreshAt(1);
    ASSERT_NE(db, nullptr);
    for (auto [tenant, month, cost] : {std::tuple{"a", "2026-10", 1}, std::tuple{"b", "2026-10", 2},
                                       std::tuple{"a", "2026-11", 4}}) {
      auto q = db->Prepare(
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
  store_ = Open();  // applies migrations 2 to 7
  EXPECT_EQ(store_->SchemaVersion(), LatestSchemaVersion());
  CallQuery q;
  q.tenant_id = "a";
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->at(0).record.cost_micros, 4);
  EXPECT_EQ(page->at(1).record.cost_micros, 1);
  auto october = store_->call_log().SumCallLog("2026-10");
  ASSERT_TRUE(october.ok());
  int64_t total = 0;
  for (const SpendRow& row : october.value()) {
    if (row.scope == SpendScope::kTenant) total += row.spent_micros;
  }
  EXPECT_EQ(total, 3);
}

// Migration 3 moves each row's names and month into call_routes: every column of rows written
// before it reads back the same, through the store and through the `call_log` view.
TEST_F(SqliteEngineTest, MigrationThreeKeepsEveryColumnOfRowsWrittenBeforeIt) {
  {
    std::unique_ptr<Database> db = FreshAt(2);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("INSERT INTO call_log (time_ms, request_id, tenant_id, key_id, model, "
                         "deployment, status, error, prompt_tokens, completion_tokens, "
                         "cached_tokens, cost_micros, estimated, unpriced, ttft_us, total_us, "
                         "overhead_us, month, request_body, dropped_rows, "
                         "cache_creation_tokens) VALUES "
                         "(11, 'r1', 'a', 'k1', 'm1', 'd1', 200, '', 1, 2, 3, 4, 0, 1, 5, 6, "
                         "7, '2026-10', '{}', 0, 8), "
                         "(12, 'r2', 'b', 'k2', 'm2', 'd2', 429, 'rate_limited', 9, 10, 0, 0, "
                         "1, 0, NULL, 13, NULL, '2026-11', NULL, 3, 0), "
                         "(14, 'r3', 'a', 'k1', 'm1', 'd1', 200, '', 15, 16, 0, 17, 0, 0, 18, "
                         "19, 20, '2026-10', NULL, 0, 0); "
                         "INSERT INTO call_log_months (month, first_id) "
                         "VALUES ('2026-10', 1), ('2026-11', 2)",
                         StoreOp::kAdminWrite)
                    .ok());
  }
  store_ = Open();  // applies migrations 3 to 7
  EXPECT_EQ(store_->SchemaVersion(), LatestSchemaVersion());
  CallQuery q;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 3u);
  const CallRecord& b = page->at(1).record;
  EXPECT_EQ(page->at(1).id, 2);
  EXPECT_EQ(b.time_ms, 12);
  EXPECT_EQ(b.request_id, "r2");
  EXPECT_EQ(b.tenant_id, "b");
  EXPECT_EQ(b.key_id, "k2");
  EXPECT_EQ(b.model, "m2");
  EXPECT_EQ(b.deployment, "d2");
  EXPECT_EQ(b.status, 429);
  EXPECT_EQ(b.error, "rate_limited");
  EXPECT_EQ(b.prompt_tokens, 9);
  EXPECT_EQ(b.completion_tokens, 10);
  EXPECT_TRUE(b.estimated);
  EXPECT_FALSE(b.unpriced);
  EXPECT_DOUBLE_EQ(b.ttft_ms, -1);
  EXPECT_DOUBLE_EQ(b.total_ms, 0.013);
  EXPECT_EQ(b.overhead_us, -1);
  EXPECT_EQ(b.request_body, "");
  EXPECT_EQ(b.dropped_rows, 3);
  const CallRecord& a = page->at(2).record;
  EXPECT_EQ(a.tenant_id, "a");
  EXPECT_EQ(a.model, "m1");
  EXPECT_EQ(a.deployment, "d1");
  EXPECT_EQ(a.cached_tokens, 3);
  EXPECT_EQ(a.cost_micros, 4);
  EXPECT_TRUE(a.unpriced);
  EXPECT_DOUBLE_EQ(a.ttft_ms, 0.005);
  EXPECT_EQ(a.overhead_us, 7);
  EXPECT_EQ(a.request_body, "{}");
  EXPECT_EQ(a.cache_creation_tokens, 8);
  EXPECT_EQ(a.reasoning_tokens, 0);  // migration 4: rows from before it reported none
  EXPECT_EQ(page->at(0).record.cost_micros, 17);

  auto october = store_->call_log().SumCallLog("2026-10");
  ASSERT_TRUE(october.ok());
  ASSERT_EQ(october->size(), 2u);  // key k1 and tenant a
  for (const SpendRow& row : october.value()) EXPECT_EQ(row.spent_micros, 21);

  // Two routes for three rows; the view reads the old table's columns in their old order.
  std::unique_ptr<Database> db = Raw();
  ASSERT_NE(db, nullptr);
  auto routes = db->Prepare("SELECT COUNT(*) FROM call_routes", StoreOp::kAdminRead);
  ASSERT_TRUE(routes.ok());
  ASSERT_TRUE(routes->Step().value());
  EXPECT_EQ(routes->Int(0), 2);
  auto view = db->Prepare("SELECT * FROM call_log WHERE id = 2", StoreOp::kAdminRead);
  ASSERT_TRUE(view.ok());
  ASSERT_TRUE(view->Step().value());
  EXPECT_EQ(view->Text(3), "b");
  EXPECT_EQ(view->Text(6), "d2");
  EXPECT_EQ(view->Text(8), "rate_limited");
  EXPECT_EQ(view->Text(18), "2026-11");
  EXPECT_EQ(view->Int(20), 3);
}

// A route is read or added once, then remembered: rows of known routes cost no statement
// beyond their insert. A second store on the same file finds the routes the first added.
TEST_F(SqliteEngineTest, RoutesAreAddedOnceAndFoundAgainAfterReopening) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows;
  for (int i = 0; i < 40; ++i) {
    CallRecord r = Row(1, i < 30 ? month : month + 1);
    r.model = i % 3 == 0 ? "b" : "a";
    rows.push_back(std::move(r));
  }
  const Batches batch{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  // Routes: (a, month), (b, month), (a, month + 1), (b, month + 1): a lookup and an insert each.
  EXPECT_EQ(counts().value(StoreOp::kCallLogRoute), 8u);
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  EXPECT_EQ(counts().value(StoreOp::kCallLogRoute), 8u);

  store_ = Open();
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  EXPECT_EQ(counts().value(StoreOp::kCallLogRoute), 4u);  // the new engine's: found, not added
  CallQuery q;
  q.limit = 1000;
  q.model = "b";
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->size(), 3u * 14u);
}

// A route added in a transaction that rolls back is forgotten with it. SQLite gives the next
// route added the rolled-back id again, so a store that kept the id would file later rows of
// the first route under the second.
TEST_F(SqliteEngineTest, RoutesOfARolledBackTransactionAreForgotten) {
  Seed();
  std::unique_ptr<Database> db = Raw();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TRIGGER fail BEFORE INSERT ON call_log_rows "
                       "WHEN NEW.cost_micros = 666 BEGIN SELECT RAISE(ABORT, 'injected'); END",
                       StoreOp::kMigrate)
                  .ok());
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  CallRecord first = Row(1, month);
  first.model = "first";
  CallRecord failing = Row(666, month);
  failing.model = "first";
  const std::vector<CallRecord> rolled_back = {first, failing};
  const Batches batch{rolled_back};
  EXPECT_FALSE(store_->call_log().WriteCalls(batch, true, {}).ok());
  ASSERT_TRUE(db->Exec("DROP TRIGGER fail", StoreOp::kMigrate).ok());

  CallRecord second = Row(2, month);
  second.model = "second";
  const std::vector<CallRecord> rows = {second, first};
  const Batches retry{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(retry, true, {}).ok());
  CallQuery q;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->at(0).record.model, "first");
  EXPECT_EQ(page->at(0).record.cost_micros, 1);
  EXPECT_EQ(page->at(1).record.model, "second");
}

// Rows whose columns change in every pattern the insert meets (a value repeating, changing,
// going to or from NULL or empty, text growing and shrinking), written in batches of 32-row
// and one-row statements across two transactions, read back column by column: a parameter
// the insert wrongly skipped rebinding would carry the previous row's value.
TEST_F(SqliteEngineTest, EveryColumnOfEveryRowIsWrittenWhenParametersRepeat) {
  Seed();
  const governance::MonthId october = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows;
  for (int i = 0; i < 75; ++i) {
    CallRecord r = Row(i % 3 == 0 ? 0 : i, i < 50 ? october : october + 1);
    r.time_ms = 1'790'000'000'000 + i / 4;
    r.request_id = "req-" + std::to_string(i);
    r.model = i % 5 == 0 ? "a-much-longer-model-name-" + std::to_string(i) : "a";
    r.deployment = i % 7 < 3 ? "" : "dep";
    r.status = i % 11 == 0 ? 429 : 200;
    r.error = i % 11 == 0 ? "rate_limited" : "";
    r.prompt_tokens = i / 2;
    r.completion_tokens = i % 4;
    r.cached_tokens = i % 9 == 0 ? i : 0;
    r.cache_creation_tokens = i % 13 == 0 ? 2 * i : 0;
    r.reasoning_tokens = i % 4 == 3 ? 2 : 0;  // part of completion_tokens (i % 4)
    r.estimated = i % 6 == 0;
    r.unpriced = i % 8 == 0;
    r.ttft_ms = i % 2 == 0 ? -1 : i / 2.0;
    r.total_ms = i % 3;
    r.overhead_us = i % 5 < 2 ? -1 : i;
    r.request_body = i % 10 == 0 ? "{\"i\":" + std::to_string(i) + "}" : "";
    rows.push_back(std::move(r));
  }
  const Batches first{std::span(rows).first(40)};
  const Batches second{std::span(rows).subspan(40)};
  ASSERT_TRUE(store_->call_log().WriteCalls(first, true, {}).ok());
  ASSERT_TRUE(store_->call_log().WriteCalls(second, true, {}).ok());

  CallQuery q;
  q.limit = 1000;
  auto page = store_->call_log().QueryCalls(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const CallRecord& want = rows[i];
    const CallRecord& got = page->at(rows.size() - 1 - i).record;  // newest first
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(got.time_ms, want.time_ms);
    EXPECT_EQ(got.request_id, want.request_id);
    EXPECT_EQ(got.tenant_id, want.tenant_id);
    EXPECT_EQ(got.key_id, want.key_id);
    EXPECT_EQ(got.model, want.model);
    EXPECT_EQ(got.deployment, want.deployment);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.error, want.error);
    EXPECT_EQ(got.prompt_tokens, want.prompt_tokens);
    EXPECT_EQ(got.completion_tokens, want.completion_tokens);
    EXPECT_EQ(got.cached_tokens, want.cached_tokens);
    EXPECT_EQ(got.cache_creation_tokens, want.cache_creation_tokens);
    EXPECT_EQ(got.reasoning_tokens, want.reasoning_tokens);
    EXPECT_EQ(got.cost_micros, want.cost_micros);
    EXPECT_EQ(got.estimated, want.estimated);
    EXPECT_EQ(got.unpriced, want.unpriced);
    EXPECT_DOUBLE_EQ(got.ttft_ms, want.ttft_ms);
    EXPECT_DOUBLE_EQ(got.total_ms, want.total_ms);
    EXPECT_EQ(got.overhead_us, want.overhead_us);
    EXPECT_EQ(got.request_body, want.request_body);
  }
  for (governance::MonthId month : {october, october + 1}) {
    int64_t sum = 0;
    for (const CallRecord& r : rows) sum += r.month == month ? r.cost_micros : 0;
    auto sums = store_->call_log().SumCallLog(governance::FormatMonth(month));
    ASSERT_TRUE(sums.ok());
    ASSERT_EQ(sums->size(), 2u);  // the key and its tenant
    for (const SpendRow& row : sums.value()) EXPECT_EQ(row.spent_micros, sum);
  }
}

// BindIfChanged skips a bind only while it knows what the parameter holds: a plain bind of
// the parameter, or a Reset that clears, makes the next BindIfChanged bind again.
TEST(StatementTest, BindIfChangedForgetsAfterPlainBindsAndClears) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("turnpike-statement-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  StatementCounts counts;
  auto db = Database::Open((dir / "s.db").string(), false, &counts);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db.value()->Exec("CREATE TABLE t (n INTEGER, s TEXT)", StoreOp::kMigrate).ok());
  std::vector<std::string> got;
  {  // the statements go before the database
    auto insert = db.value()->Prepare("INSERT INTO t (n, s) VALUES (?, ?)", StoreOp::kAdminWrite);
    ASSERT_TRUE(insert.ok());
    Statement& q = insert.value();
    using B = Statement::Bindings;
    q.BindIfChanged(1, 5).BindTextIfChanged(2, "x");
    ASSERT_TRUE(q.Run(B::kKeep).ok());  // 5 x
    q.BindIfChanged(1, 5).BindTextIfChanged(2, std::string("yy"));
    ASSERT_TRUE(q.Run(B::kKeep).ok());  // 5 yy
    q.Bind(1, int64_t{7});
    ASSERT_TRUE(q.Run(B::kKeep).ok());  // 7 yy
    q.BindIfChanged(1, 5).BindNullIfChanged(2);
    ASSERT_TRUE(q.Run(B::kClear).ok());  // 5 NULL, then every parameter cleared
    q.BindIfChanged(1, 5).BindTextIfChanged(2, "x");
    ASSERT_TRUE(q.Run(B::kKeep).ok());  // 5 x
    auto read = db.value()->Prepare("SELECT n, s FROM t ORDER BY rowid", StoreOp::kAdminRead);
    ASSERT_TRUE(read.ok());
    for (auto row = read->Step(); row.ok() && row.value(); row = read->Step()) {
      got.push_back(std::to_string(read->Int(0)) + " " +
                    (read->IsNull(1) ? std::string("NULL") : read->Text(1)));
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"5 x", "5 yy", "7 yy", "5 NULL", "5 x"}));
  db.value().reset();
  std::filesystem::remove_all(dir);
}

// Retention: the oldest rows go first, in batches of at most `limit`, up to the first row at or
// after the cutoff; the newest row always stays (its id would be handed out again).
TEST_F(SqliteEngineTest, PurgeDeletesTheOldestRowsInBatchesAndKeepsTheNewest) {
  Seed();
  const governance::MonthId month = governance::MonthOf(1'790'000'000);
  std::vector<CallRecord> rows;
  for (int i = 1; i <= 10; ++i) {
    rows.push_back(Row(100, month));
    rows.back().time_ms = i * 1000;
  }
  const Batches batch{rows};
  ASSERT_TRUE(store_->call_log().WriteCalls(batch, true, {}).ok());
  auto ids = [&] {
    CallQuery q;
    q.limit = 100;
    std::vector<int64_t> out;
    const Result<std::vector<CallRow>> page = store_->call_log().QueryCalls(q);
    for (const CallRow& row : page.value()) out.push_back(row.id);
    return out;
  };
  const std::vector<int64_t> all = ids();  // newest first
  ASSERT_EQ(all.size(), 10u);
  // Rows 1..5 are older than 5,500 ms: 3, then 2, then none.
  EXPECT_EQ(store_->call_log().PurgeBefore(5'500, 3).value(), 3);
  EXPECT_EQ(store_->call_log().PurgeBefore(5'500, 3).value(), 2);
  EXPECT_EQ(store_->call_log().PurgeBefore(5'500, 3).value(), 0);
  EXPECT_EQ(ids(), std::vector<int64_t>(all.begin(), all.begin() + 5));
  // Everything older: every row but the newest.
  EXPECT_EQ(store_->call_log().PurgeBefore(1'000'000, 100).value(), 4);
  EXPECT_EQ(ids(), std::vector<int64_t>{all.front()});
  // The spend rows stay.
  const std::string months[] = {governance::FormatMonth(month)};
  const Result<std::vector<SpendRow>> spend = store_->call_log().LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  EXPECT_EQ(spend->size(), 2u);
  for (const SpendRow& row : spend.value()) EXPECT_EQ(row.spent_micros, 1000);
  EXPECT_GE(counts().value(StoreOp::kCallLogPurge), 4u);
}

}  // namespace
}  // namespace turnpike::store::sqlite
