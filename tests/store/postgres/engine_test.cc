// The PostgreSQL engine against a real PostgreSQL 15: a throwaway cluster per test binary
// (initdb into a temporary directory, a free loopback port; as the `postgres` user when run as
// root, which initdb requires). Migrations (twice, and a newer schema refused), the records
// round trip with the admin API's errors, the change feed between two engines, and the call
// log: rows and spend in one transaction (COPY), a batch spooled while the server is down,
// replayed on recovery, and replayed again without writing anything twice; spend summed per
// scope; reconcile's additions, one replica at a time; COPY's transaction with the statements
// around it; a spooled batch of the earlier (array) format refused and counted. Skipped only where
// the PostgreSQL 15 binaries are absent; CI installs them.
#include "store/postgres/engine.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "cluster.h"
#include "store/postgres/call_log_columns.h"
#include "store/postgres/migrations.h"

namespace turnpike::store::postgres {
namespace {

namespace fs = std::filesystem;

// A plan with only its id set (the rest at their defaults).
governance::Plan PlanNamed(std::string id) {
  governance::Plan plan;
  plan.id = std::move(id);
  return plan;
}

class Batches {
 public:
  explicit Batches(const std::vector<CallRecord>& records) {
    for (const CallRecord& r : records) batch_.Add(ViewOf(r));
    part_ = {&batch_, 0, batch_.size()};
  }
  operator CallBatchParts() const { return {&part_, 1}; }

 private:
  CallBatch batch_;
  CallBatchPart part_;
};

CallRecord Record(const std::string& request_id, int64_t cost) {
  CallRecord r;
  r.time_ms = 1'796'000'000'000;
  r.request_id = request_id;
  r.tenant_id = "t1";
  r.key_id = "k1";
  r.model = "m";
  r.deployment = "openai:0";
  r.status = 200;
  r.prompt_tokens = 21;
  r.completion_tokens = 16;
  r.cost_micros = cost;
  r.total_ms = 3.5;
  r.month = governance::MonthOf(1'796'000'000);
  return r;
}

class PostgresEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = Cluster::Get();
    if (cluster_ == nullptr) GTEST_SKIP() << "PostgreSQL 15 binaries absent";
    db_ = cluster_->Fresh();
    spool_ = (fs::temp_directory_path() /
              ("turnpike-pg-unit-" + std::to_string(::getpid()) + "-" + db_ + ".spool"))
                 .string();
  }
  void TearDown() override { fs::remove(spool_); }

  std::unique_ptr<PostgresEngine> Open(int pool = 1) {
    EngineOptions o;
    o.url = cluster_->Url(db_);
    o.pool = pool;
    o.spool_path = spool_;
    o.timeout = std::chrono::milliseconds(2'000);
    auto opened = OpenEngine(o);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_TRUE(opened.value()->Migrate().ok());
    return std::move(opened.value());
  }
  // The database as a binary of schema `version` left it.
  Status MigrateTo(int version) {
    StatementCounts counts;
    ConnectionOptions o;
    o.url = cluster_->Url(db_);
    Connection c(o, &counts);
    return Migrate(c, version);
  }
  int64_t Count(PostgresEngine& e) {
    CallQuery q;
    q.limit = 1000;
    auto rows = e.call_log().QueryCalls(q);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? static_cast<int64_t>(rows->size()) : -1;
  }
  int64_t TenantSpend(PostgresEngine& e) {
    const std::vector<std::string> months = {governance::FormatMonth(Record("x", 0).month)};
    auto spend = e.call_log().LoadSpend(months);
    EXPECT_TRUE(spend.ok());
    for (const SpendRow& row : spend.value()) {
      if (row.scope == SpendScope::kTenant) return row.spent_micros;
    }
    return 0;
  }

  Cluster* cluster_ = nullptr;
  std::string db_;
  std::string spool_;
};

TEST_F(PostgresEngineTest, MigratesOnceAndRefusesANewerSchema) {
  auto engine = Open();
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  EXPECT_TRUE(engine->Migrate().ok());  // again: nothing to do
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  ASSERT_TRUE(cluster_->Psql(
      "INSERT INTO schema_migrations (role, version, applied_at) VALUES ('core', 99, 0)", db_));
  Status refused = engine->Migrate();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("newer than this binary"), std::string::npos);
}

TEST_F(PostgresEngineTest, AVersionTwoDatabaseUpgradesWithItsCallLog) {
  // A database as a version-2 binary left it: the call log one table, ids from its sequence.
  ASSERT_TRUE(MigrateTo(2).ok());
  ASSERT_TRUE(cluster_->Psql(
      "INSERT INTO call_log (time_ms, request_id, tenant_id, key_id, model, deployment, status, "
      "error, prompt_tokens, completion_tokens, cached_tokens, cache_creation_tokens, "
      "cost_micros, estimated, unpriced, total_us, month, dropped_rows) VALUES "
      "(1796000000000, 'r-old', 't1', 'k1', 'm', 'openai:0', 200, '', 1, 1, 0, 0, 1, 0, 0, 1, "
      "'2026-12', 0), "
      "(1796000000001, 'r-old-2', 't2', 'k2', 'm', 'openai:0', 200, '', 1, 1, 0, 0, 3, 0, 0, 1, "
      "'2026-12', 0)",
      db_));
  auto engine = Open();
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  CallRecord thinking = Record("r-think", 10);
  thinking.reasoning_tokens = 5;
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({thinking}), true, {}).ok());
  CallQuery all;
  all.limit = 10;
  auto rows = engine->call_log().QueryCalls(all);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  // Newest first: the new row's id is above the old ones (its block starts past them).
  std::vector<std::string> order;
  std::map<std::string, int64_t> reasoning;
  for (const CallRow& row : rows.value()) {
    order.push_back(row.record.request_id);
    reasoning[row.record.request_id] = row.record.reasoning_tokens;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"r-think", "r-old-2", "r-old"}));
  EXPECT_EQ(reasoning,
            (std::map<std::string, int64_t>{{"r-old", 0}, {"r-old-2", 0}, {"r-think", 5}}));
  // The old rows are found by tenant (their blocks were made by the migration), and summed.
  CallQuery t1;
  t1.limit = 10;
  t1.tenant_id = "t1";
  auto mine = engine->call_log().QueryCalls(t1);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ(mine.value()[1].record.request_id, "r-old");
  auto sums = engine->call_log().SumCallLog("2026-12");
  ASSERT_TRUE(sums.ok());
  std::map<std::string, int64_t> tenant_sums;
  for (const SpendRow& row : sums.value()) {
    if (row.scope == SpendScope::kTenant) tenant_sums[row.scope_id] = row.spent_micros;
  }
  EXPECT_EQ(tenant_sums, (std::map<std::string, int64_t>{{"t1", 1}, {"t2", 3}}));
}

TEST_F(PostgresEngineTest, ATenantsRowsArePagedThroughItsBlocksNewestFirst) {
  auto engine = Open();
  // 300 batches (more than one round of blocks): t1 in every third, t2 in all, under routes
  // of several keys and months; one batch with a tab and a backslash in its tenant's id.
  std::vector<std::string> t1_ids;
  for (int b = 0; b < 300; ++b) {
    std::vector<CallRecord> rows;
    for (int i = 0; i < 3; ++i) {
      CallRecord r = Record("b" + std::to_string(b) + "-" + std::to_string(i), 1);
      r.tenant_id = (b % 3 == 0 && i != 1) ? "t1" : "t2";
      r.key_id = "k" + std::to_string(i);
      if (b % 2 == 0) r.month = governance::MonthOf(1'798'000'000);
      if (r.tenant_id == "t1") t1_ids.push_back(r.request_id);
      rows.push_back(r);
    }
    if (b == 7) rows[0].tenant_id = "odd\t\\one";
    ASSERT_TRUE(engine->call_log().WriteCalls(Batches(rows), true, {}).ok());
  }
  std::reverse(t1_ids.begin(), t1_ids.end());
  CallQuery q;
  q.tenant_id = "t1";
  q.limit = 1000;
  auto all = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(all.ok()) << all.error().message;
  std::vector<std::string> got;
  for (const CallRow& row : all.value()) got.push_back(row.record.request_id);
  EXPECT_EQ(got, t1_ids);
  // Page by page (before_id), 7 at a time: the same rows in the same order.
  std::vector<std::string> paged;
  q.limit = 7;
  while (true) {
    auto page = engine->call_log().QueryCalls(q);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const CallRow& row : page.value()) paged.push_back(row.record.request_id);
    q.before_id = page->back().id;
  }
  EXPECT_EQ(paged, t1_ids);
  CallQuery odd;
  odd.tenant_id = "odd\t\\one";
  odd.limit = 10;
  auto one = engine->call_log().QueryCalls(odd);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one.value()[0].record.tenant_id, "odd\t\\one");
  EXPECT_EQ(one.value()[0].record.request_id, "b7-0");
  // Each month's rows are summed from its first id.
  auto even =
      engine->call_log().SumCallLog(governance::FormatMonth(governance::MonthOf(1'798'000'000)));
  ASSERT_TRUE(even.ok());
  int64_t keys = 0;
  for (const SpendRow& row : even.value()) {
    if (row.scope == SpendScope::kKey) keys += row.spent_micros;
  }
  EXPECT_EQ(keys, 150 * 3);
}

TEST_F(PostgresEngineTest, ABatchOfMoreRowsThanAChunkHoldsIsSplitAndReadBackWhole) {
  auto engine = Open();
  // 10,000 rows in one batch: three chunks (4,096 rows at most each). Two tenants
  // alternate; the optional columns are NULL in some rows; the texts carry what COPY's
  // binary arrays must keep as is (tab, newline, quote, backslash, braces, commas,
  // non-ASCII) and a NUL, which PostgreSQL text cannot hold and is dropped.
  std::vector<CallRecord> rows;
  int64_t cost_t2 = 0;
  for (int i = 0; i < 10'000; ++i) {
    CallRecord r = Record("r" + std::to_string(i), i % 7);
    r.tenant_id = i % 2 == 0 ? "t1" : "t2";
    if (r.tenant_id == "t2") cost_t2 += r.cost_micros;
    r.ttft_ms = i % 3 == 0 ? -1 : 1.5;
    r.overhead_us = i % 5 == 0 ? -1 : i;
    if (i % 1000 == 1) r.request_body = "{\"a\":\"x\ty\nz \\\" {b,c} é\"}";
    if (i == 4097) r.error = std::string("nul\0here", 8);
    r.status = i % 11 == 0 ? 500 : 200;
    rows.push_back(r);
  }
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches(rows), true, {}).ok());
  StatementCounts counts;
  ConnectionOptions o;
  o.url = cluster_->Url(db_);
  Connection c(o, &counts);
  auto one = [&c](const std::string& sql) {
    Result<Rows> r = c.Run(sql, Params{}, StoreOp::kAdminRead);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->Int(0, 0) : -1;
  };
  EXPECT_EQ(one("SELECT COUNT(*) FROM call_log_chunks"), 3);
  EXPECT_EQ(one("SELECT MAX(n) FROM call_log_chunks"), 4096);
  EXPECT_EQ(one("SELECT COUNT(*) FROM call_log"), 10'000);
  EXPECT_EQ(one("SELECT COUNT(DISTINCT id) FROM call_log"), 10'000);
  EXPECT_EQ(one("SELECT MAX(id) - MIN(id) FROM call_log"), 9'999);  // contiguous ids
  // Newest first, every field as written, across the chunks' boundaries.
  CallQuery all;
  all.limit = 10'000;
  auto read = engine->call_log().QueryCalls(all);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 10'000u);
  for (size_t k = 0; k < read->size(); ++k) {
    const CallRecord& want = rows[rows.size() - 1 - k];
    const CallRecord& got = read.value()[k].record;
    ASSERT_EQ(got.request_id, want.request_id);
    EXPECT_EQ(got.tenant_id, want.tenant_id);
    EXPECT_EQ(got.cost_micros, want.cost_micros);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.ttft_ms, want.ttft_ms) << want.request_id;
    EXPECT_EQ(got.overhead_us, want.overhead_us) << want.request_id;
    EXPECT_EQ(got.request_body, want.request_body) << want.request_id;
    if (want.request_id == "r4097") {
      EXPECT_EQ(got.error, "nulhere");
    }
    if (k > 0) {
      EXPECT_EQ(read.value()[k - 1].id - 1, read.value()[k].id);
    }
  }
  // A tenant's page and the pages after it, 1,000 at a time, over the boundaries; a filter.
  CallQuery t2;
  t2.tenant_id = "t2";
  t2.limit = 1000;
  std::vector<std::string> paged;
  while (true) {
    auto page = engine->call_log().QueryCalls(t2);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const CallRow& row : page.value()) paged.push_back(row.record.request_id);
    t2.before_id = page->back().id;
  }
  ASSERT_EQ(paged.size(), 5'000u);
  EXPECT_EQ(paged.front(), "r9999");
  EXPECT_EQ(paged.back(), "r1");
  CallQuery failed;
  failed.status = 500;
  failed.limit = 10'000;
  auto errors = engine->call_log().QueryCalls(failed);
  ASSERT_TRUE(errors.ok());
  EXPECT_EQ(errors->size(), 910u);  // i % 11 == 0 for i < 10,000
  auto sums = engine->call_log().SumCallLog(governance::FormatMonth(rows[0].month));
  ASSERT_TRUE(sums.ok());
  std::map<std::string, int64_t> tenants;
  for (const SpendRow& row : sums.value()) {
    if (row.scope == SpendScope::kTenant) tenants[row.scope_id] = row.spent_micros;
  }
  EXPECT_EQ(tenants["t2"], cost_t2);
}

TEST_F(PostgresEngineTest, AVersionSixDatabaseMovesItsRowsIntoChunksKeepingTheirIds) {
  // Rows as a version-6 binary wrote them: two batches (blocks 1 and 2), ids block * 2^20 +
  // place, one row per tenant range; and a run of ids from an older sequence.
  ASSERT_TRUE(MigrateTo(6).ok());
  std::string sql =
      "INSERT INTO call_routes (id, tenant_id, key_id, model, deployment, month) VALUES "
      "(1, 't1', 'k1', 'm', 'openai:0', '2026-12'), (2, 't2', 'k2', 'm', 'openai:0', "
      "'2026-12'); INSERT INTO call_log_rows SELECT id, CASE WHEN id % 2 = 0 THEN 1 ELSE 2 END, "
      "1796000000000, 'r' || id, 200, '', 1, 1, 0, 0, 5, 0, 0, NULL, 1, NULL, NULL, 0, 0 FROM "
      "(SELECT generate_series(7, 9) AS id UNION ALL SELECT 1048576 + generate_series(0, 4999) "
      "UNION ALL SELECT 2097152 + generate_series(0, 2)) s; INSERT INTO call_log_blocks VALUES "
      "('t1', 7, 9), ('t2', 7, 9), ('t1', 1048576, 1053575), ('t2', 1048577, 1053575), "
      "('t1', 2097152, 2097154), ('t2', 2097153, 2097153); INSERT INTO call_log_months VALUES "
      "('2026-12', 7); SELECT setval('call_routes_id_seq', 2); "
      "SELECT setval('call_log_block_seq', 2)";
  ASSERT_TRUE(cluster_->Psql(sql, db_));
  auto engine = Open();
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({Record("new", 1)}), true, {}).ok());
  CallQuery t1;
  t1.tenant_id = "t1";
  t1.limit = 10'000;
  auto mine = engine->call_log().QueryCalls(t1);
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  // Every even id (t1's) once, newest first, each still its id; the new row on top.
  ASSERT_EQ(mine->size(), 1u + 1 + 2500 + 2);
  EXPECT_EQ(mine.value()[0].record.request_id, "new");
  EXPECT_EQ(mine.value()[1].id, 2097154);
  EXPECT_EQ(mine.value()[1].record.request_id, "r2097154");
  EXPECT_EQ(mine.value().back().id, 8);
  for (size_t k = 1; k < mine->size(); ++k) {
    EXPECT_EQ(mine.value()[k].record.request_id, "r" + std::to_string(mine.value()[k].id));
  }
  auto sums = engine->call_log().SumCallLog("2026-12");
  ASSERT_TRUE(sums.ok());
  int64_t total = 0;
  for (const SpendRow& row : sums.value()) {
    if (row.scope == SpendScope::kTenant) total += row.spent_micros;
  }
  EXPECT_EQ(total, 5 * (3 + 5000 + 3));  // the new row is in Record's month, not 2026-12
}

// A plan's budget-alert thresholds: unset (the gateway's), none, or its own list.
TEST_F(PostgresEngineTest, PlansKeepTheirOwnBudgetAlerts) {
  auto engine = Open();
  GovernanceRecords& r = engine->records();
  governance::Plan plan;
  plan.id = "a-default";
  ASSERT_TRUE(r.UpsertPlan(plan).ok());
  plan.id = "b-none";
  plan.budget_alerts = std::vector<int>{};
  ASSERT_TRUE(r.UpsertPlan(plan).ok());
  plan.id = "c-own";
  plan.budget_alerts = std::vector<int>{25, 75, 1000};
  ASSERT_TRUE(r.UpsertPlan(plan).ok());
  auto rows = r.LoadAll();
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->plans.size(), 3u);
  EXPECT_FALSE(rows->plans[0].budget_alerts.has_value());
  EXPECT_EQ(rows->plans[1].budget_alerts, std::vector<int>{});
  EXPECT_EQ(rows->plans[2].budget_alerts, (std::vector<int>{25, 75, 1000}));
}

TEST_F(PostgresEngineTest, RecordsRoundTripWithTheAdminErrors) {
  auto engine = Open();
  GovernanceRecords& r = engine->records();
  governance::Plan plan{"p1", 5'000'000, 60, std::nullopt, {"a", "b"}, std::nullopt, 2'000};
  ASSERT_TRUE(r.UpsertPlan(plan).ok());
  governance::Tenant tenant;
  tenant.id = "t1";
  tenant.name = "T \"one\"";
  tenant.plan_id = "p1";
  ASSERT_TRUE(r.InsertTenant(tenant).ok());
  Status dup = r.InsertTenant(tenant);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kConflict);
  governance::Tenant missing = tenant;
  missing.id = "nope";
  EXPECT_EQ(r.UpdateTenant(missing).error().code, ErrorCode::kNotFound);
  governance::Key key;
  key.public_id = "k1";
  key.tenant_id = "t1";
  key.name = "n";
  for (size_t i = 0; i < key.secret_hash.size(); ++i)
    key.secret_hash[i] = static_cast<uint8_t>(i * 7);
  key.tpm = 1000;
  ASSERT_TRUE(r.InsertKey(key).ok());
  ASSERT_TRUE(r.SetKeyStatus("k1", governance::KeyStatus::kRevoked, 123).ok());
  EXPECT_EQ(r.SetKeyStatus("k9", governance::KeyStatus::kRevoked, 1).error().code,
            ErrorCode::kNotFound);
  PriceOverride price{"m", {1, 2, 3, 4, governance::ModelPrice::kSameAsInput}, 9};
  ASSERT_TRUE(r.UpsertPrice(price).ok());
  PriceOverride thinking{"o", {1, 2, 3, 4, governance::ModelPrice::kSameAsInput, 7}, 9};
  ASSERT_TRUE(r.UpsertPrice(thinking).ok());
  EXPECT_EQ(r.DeletePrice("other").error().code, ErrorCode::kNotFound);

  auto rows = r.LoadAll();
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->plans.size(), 1u);
  EXPECT_EQ(rows->plans[0].allowed_models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rows->plans[0].search_query_price_micros, 2'000);
  EXPECT_EQ(rows->plans[0].rpm, 60);
  EXPECT_FALSE(rows->plans[0].tpm.has_value());
  ASSERT_EQ(rows->tenants.size(), 1u);
  EXPECT_EQ(rows->tenants[0].name, "T \"one\"");
  ASSERT_EQ(rows->keys.size(), 1u);
  EXPECT_EQ(rows->keys[0].secret_hash, key.secret_hash);
  EXPECT_EQ(rows->keys[0].status, governance::KeyStatus::kRevoked);
  EXPECT_EQ(rows->keys[0].tpm, 1000);
  ASSERT_EQ(rows->prices.size(), 2u);
  EXPECT_EQ(rows->prices[0].price.output_micros_per_mtok, 2);
  EXPECT_EQ(rows->prices[0].price.cache_write(), 1);  // as input
  EXPECT_EQ(rows->prices[0].price.reasoning(), 2);    // as output
  EXPECT_EQ(rows->prices[1].model, "o");
  EXPECT_EQ(rows->prices[1].price.reasoning(), 7);

  ASSERT_TRUE(r.DeleteKey("k1").ok());
  EXPECT_EQ(r.DeleteKey("k1").error().code, ErrorCode::kNotFound);
  rows = r.LoadAll();
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_TRUE(rows->keys.empty());
}

TEST_F(PostgresEngineTest, AnotherWritersChangeIsNotifiedAndPolled) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a->records().PollChanges().ok());  // marks the start
  EXPECT_FALSE(a->records().PollChanges().value());
  ASSERT_TRUE(a->records().Notified().ok());  // starts listening (reports true once)
  ASSERT_TRUE(b->records().UpsertPlan(PlanNamed("p2")).ok());
  bool notified = false;
  for (int i = 0; i < 200 && !notified; ++i) {
    Result<bool> n = a->records().Notified();
    ASSERT_TRUE(n.ok());
    notified = n.value();
    if (!notified) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(notified);
  EXPECT_TRUE(a->records().PollChanges().value());
  EXPECT_FALSE(a->records().PollChanges().value());
  // Its own writes are reported neither by the notification channel nor by the poll (their
  // writer publishes them); an upsert (two triggers fire) and a delete that finds nothing (rolled
  // back) among them.
  ASSERT_TRUE(a->records().UpsertPlan(PlanNamed("p3")).ok());
  EXPECT_EQ(a->records().DeleteKey("no-such-key").error().code, ErrorCode::kNotFound);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(a->records().Notified().value());
  EXPECT_FALSE(a->records().PollChanges().value());
}

// Another writer's change that lands between the previous poll and an own write is still
// reported by the next poll: the own write does not absorb it.
TEST_F(PostgresEngineTest, AnOwnWriteNeverHidesAnotherWritersChangeFromThePoll) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a->records().PollChanges().ok());  // marks the start
  ASSERT_TRUE(b->records().UpsertPlan(PlanNamed("p1")).ok());
  ASSERT_TRUE(a->records().UpsertPlan(PlanNamed("p2")).ok());
  EXPECT_TRUE(a->records().PollChanges().value());
  EXPECT_FALSE(a->records().PollChanges().value());
  // And the other way round: an own write, then another writer's.
  ASSERT_TRUE(a->records().UpsertPlan(PlanNamed("p3")).ok());
  ASSERT_TRUE(b->records().UpsertPlan(PlanNamed("p4")).ok());
  EXPECT_TRUE(a->records().PollChanges().value());
}

// store.pool: the engine is session 0; each further session is a connection (a backend) of its
// own that reads what the others wrote, and refuses to migrate.
TEST_F(PostgresEngineTest, APoolsSessionsAreConnectionsOfTheirOwn) {
  auto engine = Open(3);
  ASSERT_EQ(engine->sessions(), 3u);
  EXPECT_EQ(&engine->session(0), engine.get());
  std::set<std::string> backends;
  for (size_t i = 1; i < engine->sessions(); ++i) {
    auto& session = dynamic_cast<Session&>(engine->session(i));
    auto pid = session.connection().Run("SELECT pg_backend_pid()", Params{}, StoreOp::kAdminRead);
    ASSERT_TRUE(pid.ok()) << pid.error().message;
    backends.insert(pid->Text(0, 0));
    EXPECT_FALSE(session.Migrate().ok());
    EXPECT_EQ(session.SchemaVersion(), engine->SchemaVersion());
  }
  EXPECT_EQ(backends.size(), 2u);
  ASSERT_TRUE(engine->session(1).records().UpsertPlan(PlanNamed("p1")).ok());
  auto rows = engine->session(2).records().LoadAll();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->plans.size(), 1u);
  EXPECT_EQ(rows->plans[0].id, "p1");
  const std::vector<SpendRow> none;
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({Record("r1", 5)}), true, none).ok());
  CallQuery q;
  auto calls = engine->session(2).call_log().QueryCalls(q);
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ(calls->at(0).record.request_id, "r1");
  // Every session counts into the engine's one statement count.
  EXPECT_GE(engine->statements().value(StoreOp::kAdminRead), 3u);
}

TEST_F(PostgresEngineTest, RowsAndSpendInOneTransactionSpooledWhileDownReplayedOnce) {
  auto engine = Open();
  const uint64_t before = engine->statements().value(StoreOp::kCallLogInsert);
  ASSERT_TRUE(
      engine->call_log().WriteCalls(Batches({Record("r1", 10), Record("r2", 20)}), true, {}).ok());
  // Two round trips: the key and the COPY, then the rows and the spend.
  EXPECT_EQ(engine->statements().value(StoreOp::kCallLogInsert) - before, 2u);
  EXPECT_EQ(Count(*engine), 2);
  EXPECT_EQ(TenantSpend(*engine), 30);
  // A client's "\u0000" in a model name cannot fail a batch: PostgreSQL text holds no NUL.
  // COPY's own delimiters in a text come back as they were.
  CallRecord nul = Record("r-nul", 0);
  nul.model = std::string("a\0b\"c\\\t\n\r\\N", 11);
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({nul}), true, {}).ok());
  CallQuery newest;
  newest.limit = 1;
  auto last = engine->call_log().QueryCalls(newest);
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(last.value()[0].record.model, "ab\"c\\\t\n\r\\N");
  EXPECT_EQ(last.value()[0].record.ttft_ms, -1);  // NULL through COPY
  EXPECT_TRUE(last.value()[0].record.request_body.empty());
  EXPECT_EQ(last.value()[0].record.request_id, "r-nul");
  auto sums = engine->call_log().SumCallLog(governance::FormatMonth(Record("x", 0).month));
  ASSERT_TRUE(sums.ok());
  EXPECT_EQ(sums->size(), 2u);  // the key's and the tenant's
  EXPECT_EQ(Count(*engine), 3);

  ASSERT_TRUE(cluster_->Stop());
  // Down: the batch goes to the spool, the write succeeds, an admin write is unavailable.
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({Record("r3", 300)}), true, {}).ok());
  EXPECT_TRUE(fs::exists(spool_));
  EXPECT_EQ(engine->records().UpsertPlan(PlanNamed("p")).error().code, ErrorCode::kUnavailable);
  fs::copy_file(spool_, spool_ + ".copy");
  ASSERT_TRUE(cluster_->Start());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past the reconnect backoff
  engine->Tick();
  EXPECT_FALSE(fs::exists(spool_));
  EXPECT_EQ(Count(*engine), 4);
  EXPECT_EQ(TenantSpend(*engine), 330);

  // The same spool again (as after a crash before its rewrite): nothing is written twice.
  engine.reset();
  fs::rename(spool_ + ".copy", spool_);
  auto again = Open();  // Migrate replays what the spool holds
  EXPECT_FALSE(fs::exists(spool_));
  EXPECT_EQ(Count(*again), 4);
  EXPECT_EQ(TenantSpend(*again), 330);
}

TEST_F(PostgresEngineTest, SpendIsSummedPerScopeWithOrWithoutRows) {
  auto engine = Open();
  auto of = [](const std::string& id, const std::string& tenant, const std::string& key,
               int64_t cost) {
    CallRecord r = Record(id, cost);
    r.tenant_id = tenant;
    r.key_id = key;
    return r;
  };
  // Keys interleaved, a zero cost between them, two tenants; then the same without rows
  // (log_store off) and with spend the caller carries.
  ASSERT_TRUE(engine->call_log()
                  .WriteCalls(Batches({of("a", "t1", "k1", 1), of("b", "t1", "k2", 10),
                                       of("c", "t1", "k1", 100), of("d", "t1", "k1", 0),
                                       of("e", "t2", "k3", 1000)}),
                              true, {})
                  .ok());
  const std::string month = governance::FormatMonth(Record("x", 0).month);
  const std::vector<SpendRow> carried = {{SpendScope::kKey, "k2", month, 20000}};
  ASSERT_TRUE(engine->call_log()
                  .WriteCalls(Batches({of("f", "t2", "k3", 3000), of("g", "t1", "k1", 500)}), false,
                              carried)
                  .ok());
  EXPECT_EQ(Count(*engine), 5);
  const std::vector<std::string> months = {month};
  auto spend = engine->call_log().LoadSpend(months);
  ASSERT_TRUE(spend.ok());
  std::map<std::string, int64_t> got;
  for (const SpendRow& row : spend.value()) {
    got[(row.scope == SpendScope::kTenant ? "tenant:" : "key:") + row.scope_id] += row.spent_micros;
  }
  const std::map<std::string, int64_t> want = {{"tenant:t1", 611},
                                               {"tenant:t2", 4000},
                                               {"key:k1", 601},
                                               {"key:k2", 20010},
                                               {"key:k3", 4000}};
  EXPECT_EQ(got, want);
}

TEST_F(PostgresEngineTest, ASpooledBatchOfTheEarlierFormatIsRefusedAndCounted) {
  {
    // What a binary of the array statement spooled: the key, 4 spend and 21 column arrays.
    Spool old(spool_, 1 << 20);
    Params p;
    p.Add("old-0");
    for (int i = 0; i < 25; ++i) p.Add("{}");
    ASSERT_TRUE(old.Append(p, 3).ok());
  }
  EngineOptions o;
  o.url = cluster_->Url(db_);
  o.spool_path = spool_;
  auto engine = std::move(OpenEngine(o).value());
  // Migrate replays the spool: the entry is refused (its rows lost, reported once), not kept.
  Status migrated = engine->Migrate();
  ASSERT_FALSE(migrated.ok());
  EXPECT_NE(migrated.error().message.find("another format"), std::string::npos);
  EXPECT_FALSE(fs::exists(spool_));
  EXPECT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Count(*engine), 0);
  observability::PrometheusWriter w;
  engine->RenderMetrics(w);
  EXPECT_NE(w.Take().find("turnpike_store_spool_lost_rows_total 3"), std::string::npos);
}

TEST_F(PostgresEngineTest, ABatchSpooledBySchemaSixIsReplayedIntoChunks) {
  // What a schema-6 binary spooled while the server was down: the key, the rows as COPY text
  // of the 22 columns (route first; \N for NULL; COPY's escapes in texts), the spend arrays.
  // An upgrade replays it: no row lost, none twice.
  const std::string rows =
      "t1\tk1\tm\topenai:0\t2026-12\t1796000000000\tr-a\t200\t\t21\t16\t0\t0\t7\t0\t0\t\\N\t"
      "3500\t\\N\t\\N\t0\t0\n"
      "t1\tk1\tm\topenai:0\t2026-12\t1796000000001\tr-b\t500\tup\\tstream\\\\x\t1\t2\t0\t0\t5\t"
      "1\t0\t1500\t2000\t40\t{\"a\":1}\t0\t9\n";
  {
    Spool old(spool_, 1 << 20);
    Params p;
    p.Add("call-log-batch-6").Add("old-batch-1").Add(rows);
    p.Add("{\"tenant\",\"key\"}")
        .Add("{\"t1\",\"k1\"}")
        .Add("{\"2026-12\",\"2026-12\"}")
        .Add("{12,12}");
    ASSERT_TRUE(old.Append(p, 2).ok());
    ASSERT_TRUE(old.Append(p, 2).ok());  // twice, as after a crash before the spool's rewrite
  }
  auto engine = Open();  // Migrate replays the spool
  EXPECT_FALSE(fs::exists(spool_));
  CallQuery q;
  q.limit = 10;
  auto read = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  const CallRecord& b = read.value()[0].record;
  const CallRecord& a = read.value()[1].record;
  EXPECT_EQ(a.request_id, "r-a");
  EXPECT_EQ(a.ttft_ms, -1);
  EXPECT_EQ(a.overhead_us, -1);
  EXPECT_EQ(a.cost_micros, 7);
  EXPECT_EQ(b.request_id, "r-b");
  EXPECT_EQ(b.status, 500);
  EXPECT_EQ(b.error, "up\tstream\\x");
  EXPECT_TRUE(b.estimated);
  EXPECT_EQ(b.ttft_ms, 1.5);
  EXPECT_EQ(b.overhead_us, 40);
  EXPECT_EQ(b.request_body, "{\"a\":1}");
  EXPECT_EQ(b.reasoning_tokens, 9);
  EXPECT_EQ(b.tenant_id, "t1");
  auto spend = engine->call_log().LoadSpend(std::vector<std::string>{"2026-12"});
  ASSERT_TRUE(spend.ok());
  int64_t tenant = 0;
  for (const SpendRow& row : spend.value()) {
    if (row.scope == SpendScope::kTenant) tenant += row.spent_micros;
  }
  EXPECT_EQ(tenant, 12);  // once
  observability::PrometheusWriter w;
  engine->RenderMetrics(w);
  EXPECT_NE(w.Take().find("turnpike_store_spool_lost_rows_total 0"), std::string::npos);
}

// Another replica's reconcile, as far as the store can tell: a session holding reconcile's
// advisory lock in a transaction, from Hold() until Release().
class ReconcileLockHolder {
 public:
  explicit ReconcileLockHolder(const std::string& url) : connection_(Options(url), &counts_) {}
  bool Hold() {
    return connection_.Script("BEGIN; SELECT pg_advisory_xact_lock(7463726532)", StoreOp::kMigrate)
        .ok();
  }
  bool Release() { return connection_.Script("COMMIT", StoreOp::kMigrate).ok(); }

 private:
  static ConnectionOptions Options(const std::string& url) {
    ConnectionOptions o;
    o.url = url;
    return o;
  }
  StatementCounts counts_;
  Connection connection_;
};

TEST_F(PostgresEngineTest, ReconcileAddsTheDriftOnceOneReplicaAtATime) {
  auto a = Open();
  auto b = Open();  // another replica over the same database
  const std::string month = governance::FormatMonth(Record("x", 0).month);
  ASSERT_TRUE(
      a->call_log().WriteCalls(Batches({Record("r1", 10), Record("r2", 20)}), true, {}).ok());
  // Someone edits the spend table behind the replicas' backs: +1000 on the tenant row.
  ASSERT_TRUE(cluster_->Psql(
      "UPDATE spend SET spent_micros = spent_micros + 1000 WHERE scope = 'tenant'", db_));
  // While another replica's reconcile holds the lock: kConflict at once, nothing changed.
  ReconcileLockHolder holder(cluster_->Url(db_));
  ASSERT_TRUE(holder.Hold());
  auto busy = a->call_log().ReconcileSpend(std::span<const std::string>(&month, 1));
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kConflict);
  EXPECT_EQ(TenantSpend(*a), 1030);
  ASSERT_TRUE(holder.Release());
  // Then the edit is taken out, and a batch another replica commits is on both sides.
  ASSERT_TRUE(b->call_log().WriteCalls(Batches({Record("r3", 5)}), true, {}).ok());
  auto fixed = a->call_log().ReconcileSpend(std::span<const std::string>(&month, 1));
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  ASSERT_EQ(fixed->size(), 1u);
  EXPECT_EQ(fixed.value()[0].scope, SpendScope::kTenant);
  EXPECT_EQ(fixed.value()[0].spent_micros, -1000);
  EXPECT_EQ(TenantSpend(*a), 35);
  // Drift again, then two replicas reconcile at once: it is taken out once, not twice.
  ASSERT_TRUE(
      cluster_->Psql("UPDATE spend SET spent_micros = spent_micros - 7 WHERE scope = 'key'", db_));
  Result<std::vector<SpendRow>> first = Error{ErrorCode::kInternal, "not run", ""};
  Result<std::vector<SpendRow>> second = Error{ErrorCode::kInternal, "not run", ""};
  std::thread one(
      [&] { first = a->call_log().ReconcileSpend(std::span<const std::string>(&month, 1)); });
  std::thread two(
      [&] { second = b->call_log().ReconcileSpend(std::span<const std::string>(&month, 1)); });
  one.join();
  two.join();
  // Each either ran or found the other running (kConflict); the drift went once.
  size_t corrections = 0;
  for (const auto* r : {&first, &second}) {
    if (r->ok()) {
      corrections += r->value().size();
    } else {
      EXPECT_EQ(r->error().code, ErrorCode::kConflict);
    }
  }
  EXPECT_TRUE(first.ok() || second.ok());
  EXPECT_EQ(corrections, 1u);
  const std::string months[] = {month};
  auto spend = a->call_log().LoadSpend(months);
  auto logged = a->call_log().SumCallLog(month);
  ASSERT_TRUE(spend.ok() && logged.ok());
  std::map<std::pair<SpendScope, std::string>, int64_t> rows, sums;
  for (const SpendRow& r : spend.value()) rows[{r.scope, r.scope_id}] = r.spent_micros;
  for (const SpendRow& r : logged.value()) sums[{r.scope, r.scope_id}] = r.spent_micros;
  EXPECT_EQ(rows, sums);
  auto none = b->call_log().ReconcileSpend(std::span<const std::string>(&month, 1));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Two months in one reconcile: one transaction, so one lock for both (a replica that took the
// lock between them made the other answer kConflict with a month already corrected), and both
// months' drift added.
TEST_F(PostgresEngineTest, ReconcileTakesItsMonthsInOneTransaction) {
  auto a = Open();
  const governance::MonthId now = Record("x", 0).month;
  ASSERT_TRUE(a->call_log().WriteCalls(Batches({Record("r1", 10)}), true, {}).ok());
  ASSERT_TRUE(cluster_->Psql(
      "UPDATE spend SET spent_micros = spent_micros + 1000 WHERE scope = 'tenant'", db_));
  // Last month: a spend row the call log has nothing for.
  const std::string months[] = {governance::FormatMonth(now), governance::FormatMonth(now - 1)};
  ASSERT_TRUE(
      cluster_->Psql("INSERT INTO spend (scope, scope_id, month, spent_micros) VALUES "
                     "('tenant', 't1', '" +
                         months[1] + "', 5)",
                     db_));
  const uint64_t before = a->statements().value(StoreOp::kReconcile);
  auto fixed = a->call_log().ReconcileSpend(months);
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  // BEGIN, the lock, one statement per month, COMMIT.
  EXPECT_EQ(a->statements().value(StoreOp::kReconcile) - before, 3u + 2u);
  std::map<std::string, int64_t> by_month;
  for (const SpendRow& row : fixed.value()) by_month[row.month] += row.spent_micros;
  EXPECT_EQ(by_month[months[0]], -1000);
  EXPECT_EQ(by_month[months[1]], -5);
  // And under another's lock: kConflict, neither month touched.
  ASSERT_TRUE(cluster_->Psql(
      "UPDATE spend SET spent_micros = spent_micros + 7 WHERE scope = 'tenant'", db_));
  ReconcileLockHolder holder(cluster_->Url(db_));
  ASSERT_TRUE(holder.Hold());
  auto busy = a->call_log().ReconcileSpend(months);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kConflict);
  ASSERT_TRUE(holder.Release());
  auto again = a->call_log().ReconcileSpend(months);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 2u);  // the +7 in each month's tenant row
}

TEST_F(PostgresEngineTest, CopyInIsOneTransactionWithTheStatementsAroundIt) {
  StatementCounts counts;
  ConnectionOptions o;
  o.url = cluster_->Url(db_);
  Connection c(o, &counts);
  ASSERT_TRUE(c.Script("CREATE TABLE x (v BIGINT PRIMARY KEY, t TEXT)", StoreOp::kMigrate).ok());
  auto count = [&c] {
    Result<Rows> rows = c.Run("SELECT count(*) FROM x", Params{}, StoreOp::kAdminRead);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->Int(0, 0) : -1;
  };
  auto rows = [](std::string text) {
    return Connection::CopyData(
        [text](const Rows&) -> Result<std::string_view> { return std::string_view(text); });
  };
  // A statement after the COPY fails: the row before it and the copied rows are not kept.
  Status failed = c.CopyIn("INSERT INTO x VALUES (1, 'a'); COPY x FROM STDIN; SELECT 1 / 0",
                           rows("2\tb\n3\t\\N\n"), StoreOp::kCallLogInsert);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
  EXPECT_NE(failed.error().message.find("division by zero"), std::string::npos);
  EXPECT_EQ(count(), 0);
  // Bad data fails the COPY itself, the same way.
  Status bad = c.CopyIn("INSERT INTO x VALUES (1, 'a'); COPY x FROM STDIN", rows("2\tb\nnope\tc\n"),
                        StoreOp::kCallLogInsert);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(count(), 0);
  // All good: everything kept, two round trips (1 + 1 per CopyIn above, 2 here).
  // The rows are built from the result of the statement before the COPY (its RETURNING).
  std::string built;
  ASSERT_TRUE(c.CopyIn(
                   "INSERT INTO x VALUES (1, 'a') RETURNING v + 1; COPY x FROM STDIN; SELECT 1",
                   [&built](const Rows& before) -> Result<std::string_view> {
                     const int64_t next = before.Int(0, 0);
                     built = std::to_string(next) + "\tb\n" + std::to_string(next + 1) + "\t\\N\n";
                     return std::string_view(built);
                   },
                   StoreOp::kCallLogInsert)
                  .ok());
  EXPECT_EQ(count(), 3);
  EXPECT_EQ(counts.value(StoreOp::kCallLogInsert), 2u + 2u + 2u);
  // The rows cannot be given: the COPY and its transaction are abandoned, with that error.
  Status refused = c.CopyIn(
      "INSERT INTO x VALUES (9, 'z'); COPY x FROM STDIN",
      [](const Rows&) -> Result<std::string_view> {
        return Error{ErrorCode::kInternal, "no rows for you", ""};
      },
      StoreOp::kCallLogInsert);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "no rows for you");
  EXPECT_EQ(count(), 3);
  EXPECT_EQ(counts.value(StoreOp::kCallLogInsert), 2u + 2u + 2u + 2u);
  // A first statement failing (a key seen before: kConflict) ends it before the COPY.
  Status again = c.CopyIn("INSERT INTO x VALUES (1, 'a'); COPY x FROM STDIN", rows("4\td\n"),
                          StoreOp::kCallLogInsert);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kConflict);
  EXPECT_EQ(counts.value(StoreOp::kCallLogInsert), 2u + 2u + 2u + 2u + 1u);
  EXPECT_EQ(count(), 3);
}

TEST_F(PostgresEngineTest, APipelineWithAFailingStatementLeavesTheConnectionUsable) {
  StatementCounts counts;
  for (bool pipeline : {true, false}) {
    ConnectionOptions o;
    o.url = cluster_->Url(db_);
    o.pipeline = pipeline;
    Connection c(o, &counts);
    const Params none;
    const std::array<Query, 3> queries = {Query{"SELECT 1", &none},
                                          Query{"SELECT * FROM no_such_table", &none},
                                          Query{"SELECT 2", &none}};
    Result<std::vector<Rows>> failed = c.RunAll(queries, StoreOp::kAdminRead);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
    EXPECT_NE(failed.error().message.find("no_such_table"), std::string::npos);
    const std::array<Query, 2> good = {Query{"SELECT 3", &none}, Query{"SELECT 4", &none}};
    Result<std::vector<Rows>> fine = c.RunAll(good, StoreOp::kAdminRead);
    ASSERT_TRUE(fine.ok()) << fine.error().message;
    ASSERT_EQ(fine->size(), 2u);
    EXPECT_EQ(fine.value()[1].Int(0, 0), 4);
  }
  // Pipelined: one round trip per RunAll (1 + 1); one by one: one per statement, stopping at
  // the first that fails (2 + 2).
  EXPECT_EQ(counts.value(StoreOp::kAdminRead), 1u + 1u + 2u + 2u);
}

// Migration 8's fields, set and unset, through the batch, COPY's chunk arrays and the reader.
CallRecord AgentRecord(const std::string& request_id) {
  CallRecord r = Record(request_id, 9);
  r.cache_status = CacheStatus::kCoalesced;
  r.agent_id = "support-bot";
  r.agent_version = 12;
  r.response_id = "resp_" + request_id;
  r.guard_replacements = 3;
  r.flags = call_flags::kStreamed | call_flags::kGuardBlocked;
  return r;
}

void ExpectUnset(const CallRecord& r) {
  EXPECT_EQ(r.cache_status, CacheStatus::kNone);
  EXPECT_EQ(r.agent_id, "");
  EXPECT_EQ(r.agent_version, 0);
  EXPECT_EQ(r.response_id, "");
  EXPECT_EQ(r.guard_replacements, 0);
  EXPECT_EQ(r.flags, 0u);
}

void ExpectAgentFields(const CallRecord& r, const std::string& request_id) {
  EXPECT_EQ(r.request_id, request_id);
  EXPECT_EQ(r.cache_status, CacheStatus::kCoalesced);
  EXPECT_EQ(r.agent_id, "support-bot");
  EXPECT_EQ(r.agent_version, 12);
  EXPECT_EQ(r.response_id, "resp_" + request_id);
  EXPECT_EQ(r.guard_replacements, 3);
  EXPECT_EQ(r.flags, call_flags::kStreamed | call_flags::kGuardBlocked);
}

TEST_F(PostgresEngineTest, MigrationEightsFieldsRoundTripSetAndUnset) {
  auto engine = Open();
  ASSERT_TRUE(
      engine->call_log().WriteCalls(Batches({AgentRecord("r1"), Record("r2", 1)}), true, {}).ok());
  CallQuery q;
  auto read = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  ExpectAgentFields(read.value()[1].record, "r1");
  ExpectUnset(read.value()[0].record);
  EXPECT_EQ(read.value()[1].record.cost_micros, 9);
}

// A database made by the binary before store roles (schema 7, schema_migrations (version)):
// upgraded in place, its versions the core role's, its rows read with migration 8's defaults.
TEST_F(PostgresEngineTest, ADatabaseOfSchemaSevenBeforeRolesUpgradesInPlace) {
  ASSERT_TRUE(MigrateTo(7).ok());
  {
    StatementCounts counts;
    ConnectionOptions o;
    o.url = cluster_->Url(db_);
    Connection c(o, &counts);
    ASSERT_TRUE(c.Script("DROP TABLE schema_migrations; CREATE TABLE schema_migrations (version "
                         "INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL); INSERT INTO "
                         "schema_migrations SELECT g, 0 FROM generate_series(1, 7) g; INSERT "
                         "INTO call_routes (id, tenant_id, key_id, model, deployment, month) "
                         "VALUES (1, 't1', 'k1', 'm', 'd', '2026-12'); INSERT INTO "
                         "call_log_chunks VALUES (1048576, 1, '{1}', '{5}', '{old}', '{200}', "
                         "'{\"\"}', '{1}', '{2}', '{0}', '{0}', '{3}', '{0}', '{0}', '{NULL}', "
                         "'{4000}', '{NULL}', '{NULL}', '{0}', '{0}')",
                         StoreOp::kAdminWrite)
                    .ok());
    EXPECT_EQ(SchemaVersion(c).value(), 7);  // read from the table before roles
  }
  auto engine = Open();
  EXPECT_EQ(engine->SchemaVersion(), LatestSchemaVersion());
  EXPECT_EQ(engine->RoleVersion("core"), LatestSchemaVersion());
  StatementCounts counts;
  ConnectionOptions o;
  o.url = cluster_->Url(db_);
  Connection c(o, &counts);
  auto roles = c.Run(
      "SELECT role, COUNT(*), MIN(version), MAX(version) FROM schema_migrations "
      "GROUP BY role",
      Params{}, StoreOp::kAdminRead);
  ASSERT_TRUE(roles.ok()) << roles.error().message;
  ASSERT_EQ(roles->size(), 1);
  EXPECT_EQ(roles->Text(0, 0), "core");
  EXPECT_EQ(roles->Int(0, 1), LatestSchemaVersion());
  EXPECT_EQ(roles->Int(0, 2), 1);
  ASSERT_TRUE(engine->call_log().WriteCalls(Batches({AgentRecord("new")}), true, {}).ok());
  CallQuery q;
  auto read = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  const CallRow& old = read.value()[1];
  EXPECT_EQ(old.id, 1048576);
  EXPECT_EQ(old.record.request_id, "old");
  EXPECT_EQ(old.record.cost_micros, 3);
  EXPECT_EQ(old.record.tenant_id, "t1");
  ExpectUnset(old.record);
  ExpectAgentFields(read.value()[0].record, "new");
  // The view reads the old chunk's missing arrays as defaults too.
  auto view = c.Run("SELECT cache_status, agent_id, flags FROM call_log WHERE id = 1048576",
                    Params{}, StoreOp::kAdminRead);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_EQ(view->size(), 1);
  EXPECT_EQ(view->Int(0, 0), 0);
  EXPECT_FALSE(view->IsNull(0, 1));
  EXPECT_EQ(view->Text(0, 1), "");
  EXPECT_EQ(view->Int(0, 2), 0);
}

// A batch a binary of schema 7 spooled (chunks of its 17 arrays) is copied in naming only
// those columns: its rows read migration 8's fields as unset.
TEST_F(PostgresEngineTest, ABatchSpooledBySchemaSevenIsReplayedWithDefaults) {
  using columns::ArrayElements;
  using columns::ElementType;
  using columns::PutU32;
  std::string chunks;
  {
    std::array<ArrayElements, 17> arrays;
    const std::array<ElementType, 17> types = {
        ElementType::kInt8, ElementType::kText, ElementType::kInt8, ElementType::kText,
        ElementType::kInt8, ElementType::kInt8, ElementType::kInt8, ElementType::kInt8,
        ElementType::kInt8, ElementType::kInt8, ElementType::kInt8, ElementType::kInt8,
        ElementType::kInt8, ElementType::kInt8, ElementType::kText, ElementType::kInt8,
        ElementType::kInt8};
    for (int row = 0; row < 2; ++row) {
      // time_ms, request_id, status, error, prompt, completion, cached, cache_creation, cost,
      // estimated, unpriced, ttft_us, total_us, overhead_us, request_body, dropped, reasoning
      arrays[0].Int(1'796'000'000'000 + row);
      arrays[1].Text(row == 0 ? "s7-a" : "s7-b");
      arrays[2].Int(200);
      arrays[3].Text("");
      for (int c = 4; c < 8; ++c) arrays[static_cast<size_t>(c)].Int(1);
      arrays[8].Int(6);
      arrays[9].Int(0);
      arrays[10].Int(0);
      arrays[11].Null();
      arrays[12].Int(3'500);
      arrays[13].Null();
      arrays[14].Null();
      arrays[15].Int(0);
      arrays[16].Int(0);
    }
    std::string body;
    PutU32(body, 0);  // both rows' route: line 0
    PutU32(body, 0);
    for (size_t c = 0; c < arrays.size(); ++c) arrays[c].AppendField(body, types[c]);
    PutU32(chunks, 2);
    PutU32(chunks, static_cast<uint32_t>(body.size()));
    chunks += body;
  }
  {
    Spool old(spool_, 1 << 20);
    Params p;
    p.Add("call-log-batch-7").Add("s7-batch-1").Add("t1\tk1\tm\topenai:0\t2026-12\n").Add(chunks);
    p.Add("{\"tenant\",\"key\"}")
        .Add("{\"t1\",\"k1\"}")
        .Add("{\"2026-12\",\"2026-12\"}")
        .Add("{12,12}");
    ASSERT_TRUE(old.Append(p, 2).ok());
  }
  auto engine = Open();  // Migrate replays the spool
  EXPECT_FALSE(fs::exists(spool_));
  CallQuery q;
  auto read = engine->call_log().QueryCalls(q);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ(read.value()[0].record.request_id, "s7-b");
  EXPECT_EQ(read.value()[1].record.request_id, "s7-a");
  EXPECT_EQ(read.value()[1].record.cost_micros, 6);
  EXPECT_EQ(read.value()[1].record.tenant_id, "t1");
  for (const CallRow& row : read.value()) ExpectUnset(row.record);
  observability::PrometheusWriter w;
  engine->RenderMetrics(w);
  EXPECT_NE(w.Take().find("turnpike_store_spool_lost_rows_total 0"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::store::postgres
