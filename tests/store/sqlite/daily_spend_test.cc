// The embedded engine's daily spend counters (store/daily_spend.h): written with the batch
// (rows logged or not, a dropped-rows stand-in counting its requests), one upsert per tenant,
// key, model and day, added to across batches, and read by day range, tenant, key and grouping.
#include "store/daily_spend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/sqlite/engine.h"

namespace turnpike::store::sqlite {
namespace {

// 2026-09-22 00:00:00 UTC, and its day.
constexpr int64_t kMidnightMs = 1'790'035'200'000;
constexpr int64_t kHourMs = 3'600'000;

class DailySpendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-daily-spend-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto opened = OpenEngine((dir_ / "t.db").string(), {});
    ASSERT_TRUE(opened.ok());
    store_ = std::move(opened.value());
    ASSERT_TRUE(store_->Migrate().ok());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  static CallRecord Row(std::string tenant, std::string key, std::string model, int64_t time_ms,
                        int64_t cost) {
    CallRecord r;
    r.request_id = "r";
    r.tenant_id = std::move(tenant);
    r.key_id = std::move(key);
    r.model = std::move(model);
    r.status = 200;
    r.time_ms = time_ms;
    r.prompt_tokens = 10;
    r.completion_tokens = 3;
    r.cost_micros = cost;
    r.month = governance::MonthOf(time_ms / 1000);
    return r;
  }

  // Writes `rows` as one batch (one transaction).
  void Write(const std::vector<CallRecord>& rows, bool log_rows = true) {
    CallBatch batch;
    for (const CallRecord& r : rows) batch.Add(ViewOf(r));
    const CallBatchPart part{&batch, 0, batch.size()};
    ASSERT_TRUE(store_->call_log().WriteCalls(std::span(&part, 1), log_rows, {}).ok());
  }

  std::vector<DailySpendRow> Read(DailySpendQuery q) {
    if (q.from_day.empty()) q.from_day = "2026-09-01";
    if (q.to_day.empty()) q.to_day = "2026-09-30";
    // The engine's call log is also the counters' reader (daily_spend.h), found as the service
    // finds it.
    auto* reader = dynamic_cast<DailySpendReader*>(&store_->call_log());
    EXPECT_NE(reader, nullptr);
    if (reader == nullptr) return {};
    auto rows = reader->QueryDailySpend(q);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows.value() : std::vector<DailySpendRow>{};
  }

  uint64_t SpendWrites() const { return store_->statements().value(StoreOp::kSpendWrite); }

  std::filesystem::path dir_;
  std::unique_ptr<SqliteEngine> store_;
};

TEST(DailySpendDays, FormatAndParseAgree) {
  EXPECT_EQ(FormatDay(DayOf(kMidnightMs)), "2026-09-22");
  EXPECT_EQ(FormatDay(DayOf(kMidnightMs - 1)), "2026-09-21");
  EXPECT_EQ(FormatDay(0), "1970-01-01");
  EXPECT_EQ(ParseDay("2026-09-22"), DayOf(kMidnightMs));
  EXPECT_EQ(ParseDay("1970-01-01"), 0);
  EXPECT_EQ(ParseDay("2026-02-30"), -1);
  EXPECT_EQ(ParseDay("2026-9-21"), -1);
  EXPECT_EQ(ParseDay("2026-09-2x"), -1);
}

TEST_F(DailySpendTest, OneUpsertPerTenantKeyModelAndDayAddedAcrossBatches) {
  const uint64_t before = SpendWrites();
  // Two days (an hour before and after midnight), two models of one key.
  Write({Row("acme", "k1", "a", kMidnightMs - kHourMs, 100),
         Row("acme", "k1", "a", kMidnightMs - kHourMs, 100),
         Row("acme", "k1", "a", kMidnightMs + kHourMs, 40),
         Row("acme", "k1", "b", kMidnightMs + kHourMs, 7)});
  // The tenant and key monthly rows (2) and three daily counters.
  EXPECT_EQ(SpendWrites() - before, 5u);
  Write({Row("acme", "k1", "a", kMidnightMs + 2 * kHourMs, 60)});
  EXPECT_EQ(SpendWrites() - before, 8u);

  const std::vector<DailySpendRow> rows = Read({});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].day, "2026-09-21");
  EXPECT_EQ(rows[0].model, "a");
  EXPECT_EQ(rows[0].cost_micros, 200);
  EXPECT_EQ(rows[0].requests, 2);
  EXPECT_EQ(rows[0].prompt_tokens, 20);
  EXPECT_EQ(rows[0].completion_tokens, 6);
  EXPECT_EQ(rows[1].day, "2026-09-22");
  EXPECT_EQ(rows[1].model, "a");
  EXPECT_EQ(rows[1].cost_micros, 100);  // two batches added
  EXPECT_EQ(rows[1].requests, 2);
  EXPECT_EQ(rows[2].model, "b");
  EXPECT_EQ(rows[2].cost_micros, 7);
  EXPECT_TRUE(rows[0].tenant_id.empty());  // not grouped by tenant
}

TEST_F(DailySpendTest, CountedWithTheLogOffAndForDroppedRowsStandIns) {
  CallRecord stand_in = Row("acme", "k1", "a", kMidnightMs, 900);
  stand_in.dropped_rows = 9;
  stand_in.error = "log_rows_dropped";
  Write({Row("acme", "k1", "a", kMidnightMs, 100), stand_in}, /*log_rows=*/false);
  const std::vector<DailySpendRow> rows = Read({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cost_micros, 1000);
  EXPECT_EQ(rows[0].requests, 10);
}

TEST_F(DailySpendTest, ReadsFilterByRangeTenantAndKeyAndGroupAsAsked) {
  Write({Row("acme", "k1", "a", kMidnightMs, 1), Row("acme", "k2", "a", kMidnightMs, 2),
         Row("beta", "k3", "a", kMidnightMs, 4), Row("beta", "k3", "b", kMidnightMs, 8),
         Row("acme", "k1", "a", kMidnightMs + 24 * kHourMs, 16)});

  DailySpendQuery by_day;
  by_day.by_model = false;
  std::vector<DailySpendRow> rows = Read(by_day);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cost_micros, 15);
  EXPECT_EQ(rows[0].requests, 4);
  EXPECT_EQ(rows[1].day, "2026-09-23");
  EXPECT_EQ(rows[1].cost_micros, 16);

  DailySpendQuery one_day = by_day;
  one_day.from_day = one_day.to_day = "2026-09-23";
  rows = Read(one_day);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].cost_micros, 16);

  DailySpendQuery tenant;
  tenant.tenant_id = "beta";
  rows = Read(tenant);
  ASSERT_EQ(rows.size(), 2u);  // models a and b
  EXPECT_EQ(rows[0].model, "a");
  EXPECT_EQ(rows[0].cost_micros, 4);
  EXPECT_EQ(rows[1].model, "b");

  DailySpendQuery keys;
  keys.by_model = false;
  keys.by_key = true;
  keys.by_tenant = true;
  keys.tenant_id = "acme";
  keys.to_day = "2026-09-22";
  rows = Read(keys);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tenant_id, "acme");
  EXPECT_EQ(rows[0].key_id, "k1");
  EXPECT_EQ(rows[0].cost_micros, 1);
  EXPECT_EQ(rows[1].key_id, "k2");
  EXPECT_EQ(rows[1].cost_micros, 2);

  DailySpendQuery key;
  key.key_id = "k1";
  key.by_model = false;
  rows = Read(key);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cost_micros + rows[1].cost_micros, 17);

  DailySpendQuery few = by_day;
  few.limit = 1;
  EXPECT_EQ(Read(few).size(), 1u);
}

}  // namespace
}  // namespace turnpike::store::sqlite
