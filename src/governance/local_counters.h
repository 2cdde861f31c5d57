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
// Ownership: LocalCounters holds nothing; the ScopeCounters it makes own their counters and do
// not refer back to it. Thread safety: everything here is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "governance/counters.h"

namespace turnpike::governance {

class LocalBudgetCounter final : public BudgetCounter {
 public:
  LocalBudgetCounter() = default;

  ReserveResult Reserve(MonthId month, int64_t estimate, int64_t cap) override;
  BudgetUsage Read(MonthId month) const override;
  void Restore(MonthId month, int64_t spent) override;
  void Correct(MonthId month, int64_t delta) override;

 private:
  void Settle(MonthId month, int64_t estimate, int64_t actual) override;
  void Release(MonthId month, int64_t estimate) override;

  std::atomic<uint64_t> committed_word_{0};  // month << kAmountBits | spent + reserved
  std::atomic<uint64_t> spent_word_{0};      // month << kAmountBits | spent
};

class GcraLimiter final : public RateCounter {
 public:
  GcraLimiter() = default;

  RateDecision Check(Nanos now, int64_t cost, int64_t limit) override;
  void Correct(int64_t charged, int64_t actual, int64_t limit) override;

 private:
  std::atomic<int64_t> tat_ns_{0};
};

// Makes in-process ScopeCounters: one allocation per scope holding its three counters.
class LocalCounters final : public Counters {
 public:
  std::shared_ptr<ScopeCounters> MakeScope(ScopeKind kind, std::string_view id) override;
};

}  // namespace turnpike::governance
