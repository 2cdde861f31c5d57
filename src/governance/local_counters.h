// The in-process counters engine (one machine): every budget and rate counter is an atomic
// word in this process's memory, authoritative for this node (DESIGN.md "Threading and state").
//
// Why atomics: this is the one place where several worker threads update the same state on the
// request path (one tenant's requests land on every worker). A lock would serialize workers; a
// per-worker split would need a lease protocol (the leased engine, counters.h). A CAS loop on
// one word is lock-free, needs no allocation, and costs one contended cache line per request.
//
// LocalBudgetCounter keeps (month, spent + reserved) in one 64-bit word, so the admission test
// and the month rollover are decided by one CAS; spent alone is kept in a second word for
// reporting and persistence (reserved = committed - spent is approximate while requests run).
// GcraLimiter keeps TAT (rate_limit.h) in one atomic, updated by a CAS loop (admission) or one
// fetch_add (corrections). Neither ever answers pending.
//
// Shared words (Share): with a CounterTable (counter_table.h) each scope's words live in shared
// memory instead, so that a rolling restart's two processes count against the same words; a
// counter whose words another process made live skips Restore (the words already hold the
// spend, and what is reserved; the store's persisted spend holds less).
//
// Ownership: LocalCounters borrows the table; the ScopeCounters it makes own their counters (or
// point into the table, which must outlive them) and do not refer back to it. Thread safety:
// everything here is safe from any thread; Share before the first MakeScope.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "governance/counter_table.h"
#include "governance/counters.h"

namespace turnpike::governance {

class LocalBudgetCounter final : public BudgetCounter {
 public:
  LocalBudgetCounter() = default;
  // Counts in `committed` and `spent` (a CounterSlot's); `adopted`: they are live already.
  LocalBudgetCounter(std::atomic<uint64_t>& committed, std::atomic<uint64_t>& spent, bool adopted)
      : committed_word_(&committed), spent_word_(&spent), adopted_(adopted) {}

  ReserveResult Reserve(MonthId month, int64_t estimate, int64_t cap) override;
  BudgetUsage Read(MonthId month) const override;
  void Restore(MonthId month, int64_t spent) override;
  void Correct(MonthId month, int64_t delta) override;

 private:
  void Settle(MonthId month, int64_t estimate, int64_t actual) override;
  void Release(MonthId month, int64_t estimate) override;

  std::atomic<uint64_t> own_committed_{0};
  std::atomic<uint64_t> own_spent_{0};
  std::atomic<uint64_t>* const committed_word_ = &own_committed_;  // month << 48 | spent + reserved
  std::atomic<uint64_t>* const spent_word_ = &own_spent_;          // month << 48 | spent
  const bool adopted_ = false;
};

class GcraLimiter final : public RateCounter {
 public:
  GcraLimiter() = default;
  explicit GcraLimiter(std::atomic<int64_t>& tat_ns) : tat_ns_(&tat_ns) {}

  RateDecision Check(Nanos now, int64_t cost, int64_t limit) override;
  void Correct(int64_t charged, int64_t actual, int64_t limit) override;

 private:
  std::atomic<int64_t> own_tat_ns_{0};
  std::atomic<int64_t>* const tat_ns_ = &own_tat_ns_;
};

// Makes in-process ScopeCounters: one allocation per scope holding its three counters.
class LocalCounters final : public Counters {
 public:
  // Later scopes keep their words in `table` (null: in this process's memory).
  void Share(CounterTable* table) { table_ = table; }
  std::shared_ptr<ScopeCounters> MakeScope(ScopeKind kind, std::string_view id) override;

 private:
  CounterTable* table_ = nullptr;
};

}  // namespace turnpike::governance
