// The counters' shared table (governance/counter_table.h): two mappings of one table (as a
// restart's two processes hold it) count against the same words.
#include "governance/counter_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <string>

#include "governance/local_counters.h"

namespace turnpike::governance {
namespace {

constexpr MonthId kJune2024 = (2024 - 1970) * 12 + 5;

std::unique_ptr<CounterTable> OpenNew() {
  Result<std::unique_ptr<CounterTable>> table = CounterTable::Open(-1);
  EXPECT_TRUE(table.ok());
  return std::move(table.value());
}

// A second mapping of `table`, as the restart's successor maps the descriptor it inherits.
std::unique_ptr<CounterTable> MapAgain(const CounterTable& table) {
  Result<std::unique_ptr<CounterTable>> again = CounterTable::Open(::dup(table.fd()));
  EXPECT_TRUE(again.ok());
  return std::move(again.value());
}

TEST(CounterTableTest, FindsOneSlotPerScopeAndSaysWhetherItWasLive) {
  std::unique_ptr<CounterTable> table = OpenNew();
  const CounterTable::Found first = table->Find(ScopeKind::kTenant, "t1");
  ASSERT_NE(first.slot, nullptr);
  EXPECT_FALSE(first.existed);
  const CounterTable::Found again = table->Find(ScopeKind::kTenant, "t1");
  EXPECT_EQ(again.slot, first.slot);
  EXPECT_TRUE(again.existed);
  const CounterTable::Found key = table->Find(ScopeKind::kKey, "t1");  // another kind
  EXPECT_NE(key.slot, first.slot);
  EXPECT_FALSE(key.existed);
}

TEST(CounterTableTest, AnIdTooLongGetsNoSlot) {
  std::unique_ptr<CounterTable> table = OpenNew();
  EXPECT_EQ(table->Find(ScopeKind::kKey, std::string(kCounterIdBytes + 1, 'x')).slot, nullptr);
  EXPECT_NE(table->Find(ScopeKind::kKey, std::string(kCounterIdBytes, 'x')).slot, nullptr);
}

TEST(CounterTableTest, ManyScopesEachGetTheirOwnSlot) {
  std::unique_ptr<CounterTable> table = OpenNew();
  std::set<CounterSlot*> slots;
  for (int i = 0; i < 5'000; ++i) {
    const CounterTable::Found found = table->Find(ScopeKind::kKey, "key-" + std::to_string(i));
    ASSERT_NE(found.slot, nullptr);
    EXPECT_FALSE(found.existed);
    slots.insert(found.slot);
  }
  EXPECT_EQ(slots.size(), 5'000u);
}

TEST(CounterTableTest, AWrongSizedDescriptorIsRefused) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[1]);
  EXPECT_FALSE(CounterTable::Open(pipe_fds[0]).ok());  // Open closes it
}

// The property a restart relies on: what either side reserves, the other sees at once; the
// successor does not overwrite live words with the store's persisted spend.
TEST(CounterTableTest, TwoMappingsShareBudgetsAndTheSuccessorSkipsRestore) {
  std::unique_ptr<CounterTable> old_table = OpenNew();
  LocalCounters old_counters;
  old_counters.Share(old_table.get());
  std::shared_ptr<ScopeCounters> old_scope = old_counters.MakeScope(ScopeKind::kTenant, "t1");
  old_scope->budget.Restore(kJune2024, 1'000);
  ReserveResult held = old_scope->budget.Reserve(kJune2024, 500, 10'000);
  ASSERT_TRUE(held);

  std::unique_ptr<CounterTable> new_table = MapAgain(*old_table);
  LocalCounters new_counters;
  new_counters.Share(new_table.get());
  std::shared_ptr<ScopeCounters> new_scope = new_counters.MakeScope(ScopeKind::kTenant, "t1");
  new_scope->budget.Restore(kJune2024, 1'000);  // the store lags: ignored
  BudgetUsage usage = new_scope->budget.Read(kJune2024);
  EXPECT_EQ(usage.spent, 1'000);
  EXPECT_EQ(usage.committed, 1'500);

  // The cap is shared: 8,500 left, whoever asks.
  ReserveResult theirs = new_scope->budget.Reserve(kJune2024, 8'000, 10'000);
  ASSERT_TRUE(theirs);
  EXPECT_FALSE(old_scope->budget.Reserve(kJune2024, 501, 10'000).has_value());
  held->Settle(300);  // the old process's stream ends during its drain
  ReserveResult more = old_scope->budget.Reserve(kJune2024, 700, 10'000);
  EXPECT_TRUE(more.has_value());
  usage = new_scope->budget.Read(kJune2024);
  EXPECT_EQ(usage.spent, 1'300);
  EXPECT_EQ(usage.committed, 10'000);

  // Rate limits share their words too.
  const Nanos now{1'000'000'000'000};
  EXPECT_TRUE(old_scope->requests.Check(now, 1, 1).allowed);
  EXPECT_FALSE(new_scope->requests.Check(now, 1, 1).allowed);
}

TEST(CounterTableTest, WithoutATableCountersArePrivate) {
  LocalCounters a;
  LocalCounters b;
  std::shared_ptr<ScopeCounters> x = a.MakeScope(ScopeKind::kTenant, "t1");
  std::shared_ptr<ScopeCounters> y = b.MakeScope(ScopeKind::kTenant, "t1");
  ReserveResult held = x->budget.Reserve(kJune2024, 10, 10);
  ASSERT_TRUE(held);
  EXPECT_TRUE(y->budget.Reserve(kJune2024, 10, 10));
}

}  // namespace
}  // namespace turnpike::governance
