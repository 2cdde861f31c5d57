// The counters' shared table (governance/counter_table.h): two mappings of one table (as a
// restart's two processes hold it) count against the same words.
#include "governance/counter_table.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// Fills the table with `n` scopes nobody holds (each found, then released).
void AddIdleScopes(CounterTable& table, int n, const std::string& prefix) {
  for (int i = 0; i < n; ++i) {
    const CounterTable::Found found = table.Find(ScopeKind::kKey, prefix + std::to_string(i));
    ASSERT_NE(found.slot, nullptr) << i;
    CounterTable::Release(*found.slot);
  }
}

TEST(CounterTableTest, AnIdleScopeFoundAgainKeepsItsWords) {
  std::unique_ptr<CounterTable> table = OpenNew();
  CounterTable::Found found = table->Find(ScopeKind::kAgent, "a1");
  found.slot->spent.store(77);
  CounterTable::Release(*found.slot);
  const CounterTable::Found again = table->Find(ScopeKind::kAgent, "a1");
  EXPECT_EQ(again.slot, found.slot);
  EXPECT_TRUE(again.existed);
  EXPECT_EQ(again.slot->spent.load(), 77u);
  EXPECT_EQ(table->reclaimed(), 0u);
}

TEST(CounterTableTest, KeysMadeAndDeletedWithoutEndReuseIdleSlotsAndNeverFillTheTable) {
  std::unique_ptr<CounterTable> table = OpenNew();
  // A held scope with words, among 100,000 made and let go (six tables' worth): it keeps its
  // slot and its words throughout, and every other scope finds a slot.
  CounterTable::Found held = table->Find(ScopeKind::kTenant, "kept");
  held.slot->committed.store(1234);
  AddIdleScopes(*table, 100'000, "churn-");
  EXPECT_LE(table->occupied(), kCounterTableSlots / 4 * 3 + kCounterTableSlots / 16);
  EXPECT_GT(table->reclaimed(), 0u);
  EXPECT_GT(table->freed(), 0u);
  const CounterTable::Found again = table->Find(ScopeKind::kTenant, "kept");
  EXPECT_EQ(again.slot, held.slot);
  EXPECT_TRUE(again.existed);
  EXPECT_EQ(again.slot->committed.load(), 1234u);

  // A scope given a reused slot starts from zero words, as a new one.
  const CounterTable::Found fresh = table->Find(ScopeKind::kKey, "after-the-churn");
  ASSERT_NE(fresh.slot, nullptr);
  EXPECT_FALSE(fresh.existed);
  EXPECT_EQ(fresh.slot->committed.load() + fresh.slot->spent.load(), 0u);
}

TEST(CounterTableTest, ASlotHeldByTheOtherMappingIsNotReused) {
  std::unique_ptr<CounterTable> old_table = OpenNew();
  std::unique_ptr<CounterTable> new_table = MapAgain(*old_table);
  CounterTable::Found old_hold = old_table->Find(ScopeKind::kKey, "k");
  CounterTable::Found new_hold = new_table->Find(ScopeKind::kKey, "k");
  EXPECT_TRUE(new_hold.existed);
  old_hold.slot->spent.store(9);
  ASSERT_EQ(new_hold.slot->spent.load(), 9u) << "one slot, two mappings of it";
  CounterTable::Release(*old_hold.slot);  // the old process lets go (its drain ended)
  AddIdleScopes(*old_table, 40'000, "other-");
  const CounterTable::Found still = new_table->Find(ScopeKind::kKey, "k");
  EXPECT_EQ(still.slot, new_hold.slot);
  EXPECT_EQ(still.slot->spent.load(), 9u);
}

TEST(CounterTableTest, ASlotLeftMidClaimIsRepairedByTheNextClaim) {
  std::unique_ptr<CounterTable> table = OpenNew();
  CounterTable::Found found = table->Find(ScopeKind::kKey, "half");
  // As a process killed while claiming leaves it: the state bits say claiming.
  found.slot->word.store(1);
  const CounterTable::Found after = table->Find(ScopeKind::kKey, "half");
  ASSERT_NE(after.slot, nullptr);
  EXPECT_NE(after.slot, found.slot) << "the repaired slot matches no scope";
  EXPECT_FALSE(after.existed);
  EXPECT_NE(table->Find(ScopeKind::kKey, "another").slot, nullptr);
}

TEST(CounterTableTest, AScopeTheLastCounterLetsGoIsIdle) {
  std::unique_ptr<CounterTable> table = OpenNew();
  LocalCounters counters;
  counters.Share(table.get());
  std::shared_ptr<ScopeCounters> scope = counters.MakeScope(ScopeKind::kKey, "k1");
  CounterSlot* slot = table->Find(ScopeKind::kKey, "k1").slot;
  CounterTable::Release(*slot);  // the test's own hold
  EXPECT_EQ(slot->word.load() >> 2 & 0x3FFF, 1u) << "held by the scope's counters";
  scope.reset();
  EXPECT_EQ(slot->word.load() >> 2 & 0x3FFF, 0u);
}

TEST(CounterTableTest, ATableOfAnotherLayoutIsRefused) {
  // An older binary's table: 16,384 slots and no header.
  const int fd = ::memfd_create("old-layout", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kCounterTableSlots * sizeof(CounterSlot))), 0);
  EXPECT_FALSE(CounterTable::Open(fd).ok());
  // The right size without the header's mark (zeros).
  const int blank = ::memfd_create("blank", MFD_CLOEXEC);
  ASSERT_GE(blank, 0);
  ASSERT_EQ(::ftruncate(blank, static_cast<off_t>(4096 + kCounterTableSlots * sizeof(CounterSlot))),
            0);
  EXPECT_FALSE(CounterTable::Open(blank).ok());
}

// Threads find and release a few shared scopes while another churns through new ones (so the
// table crowds, reuses idle slots and sweeps): whenever a scope is held, every Find of it
// answers the same slot.
TEST(CounterTableTest, ConcurrentFindsAndReleasesAgreeOnOneSlotPerHeldScope) {
  std::unique_ptr<CounterTable> table = OpenNew();
  constexpr int kScopes = 32;
  struct Book {
    std::mutex mu;
    int held = 0;
    CounterSlot* slot = nullptr;
  };
  std::array<Book, kScopes> books;
  std::atomic<int> disagreements{0};
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (int i = 0; !stop.load(); ++i) {
      const CounterTable::Found found = table->Find(ScopeKind::kKey, "churn-" + std::to_string(i));
      if (found.slot != nullptr) CounterTable::Release(*found.slot);
    }
  });
  std::vector<std::thread> users;
  for (int t = 0; t < 3; ++t) {
    users.emplace_back([&, t] {
      std::vector<std::pair<int, CounterSlot*>> mine;
      // At least 30,000 steps, and on until the churn has reused or freed 5,000 slots.
      for (int n = 0; n < 30'000 || (table->reclaimed() + table->freed() < 5'000 && n < 3'000'000);
           ++n) {
        const int i = (n * 7 + t * 13) % kScopes;
        if (n % 3 != 2) {
          const CounterTable::Found found =
              table->Find(ScopeKind::kTenant, "s" + std::to_string(i));
          ASSERT_NE(found.slot, nullptr);
          std::lock_guard lock(books[i].mu);
          if (books[i].held > 0 && books[i].slot != found.slot) disagreements.fetch_add(1);
          books[i].slot = found.slot;
          ++books[i].held;
          mine.emplace_back(i, found.slot);
        } else if (!mine.empty()) {
          const auto [j, slot] = mine.back();
          mine.pop_back();
          std::lock_guard lock(books[j].mu);
          --books[j].held;
          CounterTable::Release(*slot);
        }
      }
      for (const auto& [j, slot] : mine) {
        std::lock_guard lock(books[j].mu);
        --books[j].held;
        CounterTable::Release(*slot);
      }
    });
  }
  for (std::thread& u : users) u.join();
  stop = true;
  churn.join();
  EXPECT_EQ(disagreements.load(), 0);
  EXPECT_GE(table->reclaimed() + table->freed(), 5'000u) << "the churn crowded the table";
}

// A process killed at any point while it claims slots (here: during a loop of claims, at a
// random moment, 100 times) never blocks the next claimer: the claim mutex is robust, and a
// slot it left half-claimed is repaired.
TEST(CounterTableTest, AClaimerKilledAnywhereBlocksNoOne) {
  std::unique_ptr<CounterTable> table = OpenNew();
  std::mt19937 random(7);
  for (int round = 0; round < 100; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int i = 0;; ++i) {
        const std::string id = "r" + std::to_string(round) + "-" + std::to_string(i);
        const CounterTable::Found found = table->Find(ScopeKind::kKey, id);
        if (found.slot != nullptr) CounterTable::Release(*found.slot);
      }
    }
    ::usleep(200 + random() % 2'000);
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    const CounterTable::Found after =
        table->Find(ScopeKind::kTenant, "after-" + std::to_string(round));
    ASSERT_NE(after.slot, nullptr) << round;
    EXPECT_FALSE(after.existed);
  }
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
