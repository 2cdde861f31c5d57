#include "governance/snapshot.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fixtures.h"
#include "governance/snapshot_cell.h"

namespace turnpike::governance {
namespace {

SnapshotPtr MustBuild(const SnapshotData& data, const GovernanceSnapshot* previous = nullptr) {
  Result<SnapshotPtr> built = GovernanceSnapshot::Build(data, previous, testing::TestCounters());
  EXPECT_TRUE(built.ok()) << built.error().message;
  return built.ok() ? built.value() : nullptr;
}

std::string BuildError(const SnapshotData& data) {
  Result<SnapshotPtr> built = GovernanceSnapshot::Build(data, nullptr, testing::TestCounters());
  EXPECT_FALSE(built.ok());
  if (built.ok()) return "";
  EXPECT_EQ(built.error().code, ErrorCode::kInvalidRequest);
  return built.error().message;
}

TEST(SnapshotTest, LooksUpEverythingByIdInConstantTime) {
  testing::Fixture f = testing::MakeFixture();
  SnapshotPtr snapshot = MustBuild(f.data);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->key_count(), 4u);
  const KeyEntry* key = snapshot->FindKey(f.data.keys[0].public_id);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->tenant, snapshot->FindTenant("acme"));
  EXPECT_EQ(key->tenant->plan, snapshot->FindPlan("pro"));
  ASSERT_NE(snapshot->FindPrice(testing::kModel), nullptr);
  EXPECT_EQ(snapshot->FindPrice(testing::kModel)->output_micros_per_mtok,
            testing::kPrice.output_micros_per_mtok);
  EXPECT_EQ(snapshot->FindKey("aaaaaaaaaaaa"), nullptr);
  EXPECT_EQ(snapshot->FindTenant("nobody"), nullptr);
  EXPECT_EQ(snapshot->FindPrice("unknown-model"), nullptr);
}

TEST(SnapshotTest, RejectsInconsistentData) {
  testing::Fixture f = testing::MakeFixture();
  SnapshotData data = f.data;
  data.keys.push_back(data.keys[0]);
  EXPECT_NE(BuildError(data).find("duplicate key"), std::string::npos);

  data = f.data;
  data.keys[0].tenant_id = "nobody";
  EXPECT_NE(BuildError(data).find("unknown tenant"), std::string::npos);

  data = f.data;
  data.tenants[0].plan_id = "gold";
  EXPECT_NE(BuildError(data).find("unknown plan"), std::string::npos);

  data = f.data;
  data.keys[0].public_id = "NOT-AN-ID";
  EXPECT_NE(BuildError(data).find("malformed key id"), std::string::npos);

  data = f.data;
  data.plans[0].monthly_budget_micros = -1;
  EXPECT_NE(BuildError(data).find("monthly budget"), std::string::npos);

  data = f.data;
  data.keys[0].rpm = 0;
  EXPECT_NE(BuildError(data).find("RPM"), std::string::npos);

  data = f.data;
  data.prices.push_back(data.prices[0]);
  EXPECT_NE(BuildError(data).find("duplicate model price"), std::string::npos);

  data = f.data;
  data.prices[0].second.max_output_tokens = 0;
  EXPECT_NE(BuildError(data).find("max output tokens"), std::string::npos);
}

TEST(SnapshotTest, CountersCarryOverToTheNextSnapshot) {
  testing::Fixture f = testing::MakeFixture();
  SnapshotPtr first = MustBuild(f.data);
  ASSERT_NE(first, nullptr);
  const KeyEntry* old_key = first->FindKey(f.data.keys[0].public_id);
  ReserveResult spent = old_key->counters->budget.Reserve(0, 500, kUnlimitedBudget);
  ASSERT_TRUE(spent.has_value());
  spent->Settle(400);

  SnapshotData next = f.data;
  next.plans[0].rpm = 10;  // a config change
  GeneratedKey added = testing::MustGenerate();
  next.keys.push_back(testing::MakeKey(added, "acme"));
  SnapshotPtr second = MustBuild(next, first.get());
  ASSERT_NE(second, nullptr);
  const KeyEntry* new_key = second->FindKey(f.data.keys[0].public_id);
  EXPECT_EQ(new_key->counters, old_key->counters);
  EXPECT_EQ(new_key->counters->budget.Read(0).spent, 400);
  EXPECT_EQ(second->FindTenant("acme")->counters, first->FindTenant("acme")->counters);
  EXPECT_NE(second->FindKey(added.public_id)->counters, old_key->counters);
  EXPECT_EQ(second->FindKey(added.public_id)->counters->budget.Read(0).spent, 0);

  SnapshotPtr fresh = MustBuild(next, nullptr);  // no previous: fresh counters
  EXPECT_NE(fresh->FindKey(f.data.keys[0].public_id)->counters, old_key->counters);
}

TEST(SnapshotCellTest, ReaderSeesPublishesAndRequestsKeepTheirSnapshot) {
  testing::Fixture f = testing::MakeFixture();
  SnapshotPtr first = MustBuild(f.data);
  SnapshotCell cell(first);
  SnapshotReader reader(cell);
  SnapshotPtr held = reader.Current();  // a request in flight
  EXPECT_EQ(held.get(), first.get());
  EXPECT_EQ(reader.Current().get(), first.get());

  f.data.keys.pop_back();
  SnapshotPtr second = MustBuild(f.data, first.get());
  GovernanceSnapshot* second_raw = const_cast<GovernanceSnapshot*>(second.get());
  cell.Publish(std::move(second));
  first.reset();
  EXPECT_EQ(cell.version(), 1u);
  EXPECT_EQ(reader.Current().get(), second_raw);
  EXPECT_EQ(held->key_count(), 4u);  // still alive and unchanged
  EXPECT_EQ(reader.Current()->key_count(), 3u);
}

TEST(SnapshotCellTest, ReadersOnOtherThreadsConvergeOnTheLastPublish) {
  testing::Fixture f = testing::MakeFixture();
  SnapshotCell cell(MustBuild(f.data));
  constexpr int kPublishes = 200;
  std::atomic<bool> done{false};
  std::atomic<int> stale_after_done{0};
  std::thread reader_thread([&] {
    SnapshotReader reader(cell);
    while (!done.load()) ASSERT_NE(reader.Current(), nullptr);
    if (reader.Current().get() != cell.Load().get()) stale_after_done.fetch_add(1);
  });
  SnapshotPtr previous = cell.Load();
  for (int i = 0; i < kPublishes; ++i) {
    SnapshotPtr next = MustBuild(f.data, previous.get());
    cell.Publish(next);
    previous = next;
  }
  done.store(true);
  reader_thread.join();
  EXPECT_EQ(stale_after_done.load(), 0);
  EXPECT_EQ(cell.version(), static_cast<uint64_t>(kPublishes));
}

}  // namespace
}  // namespace turnpike::governance
