// Monthly spend budgets with reserve-before-admit (DESIGN.md "Rules of the hot path" 5).
//
// A BudgetCounter is one scope (a tenant, or a key) in the current UTC calendar month; all
// amounts are integer micro-USD. Admission reserves the request's maximum cost; the end of the
// request settles the actual cost (or releases the reservation if nothing was spent). The
// admission test is spent + reserved + estimate <= cap, decided on one 64-bit word holding
// (month, spent + reserved), so two workers can never both take the last of a budget.
//
// Why atomics here: this is the one place where several worker threads update the same state
// on the request path (one tenant's requests land on every worker). A lock would serialize
// workers; a per-worker split would need a lease protocol (the fleet design, later). A CAS loop
// on one word is lock-free, needs no allocation, and costs one contended cache line per
// request. Spent alone is kept in a second word for reporting and persistence; reading both is
// not a consistent snapshot (reserved = committed - spent is approximate while requests run).
//
// The ledger: no map is looked up on the request path. GovernanceSnapshot::Build creates one
// counter per tenant and per key and hands the same objects on to the next snapshot, so a
// config change never resets spend (snapshot.h). The month is part of the counter's word: the
// first reservation of a new month starts it at zero. A reservation made under an older month
// than the counter's (a worker whose clock read happened just before midnight) is charged to
// the newer month; settling or releasing a reservation whose month has passed changes nothing
// here (its spend belongs to a closed month: the call log and the reconcile job account it).
//
// Limits: amounts and caps up to kMaxBudgetMicros (2^47 - 1, ~140 million USD per scope and
// month); months up to year 7431.
//
// Thread safety: BudgetCounter is safe from any thread. A Reservation belongs to one request
// (one thread) and must not outlive the counter it came from (the request keeps its snapshot).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "governance/cost.h"

namespace turnpike::governance {

// Months since 1970-01, UTC.
using MonthId = uint32_t;

MonthId MonthOf(int64_t unix_seconds);
std::string FormatMonth(MonthId month);  // "YYYY-MM"

inline constexpr int64_t kMaxBudgetMicros = kMaxCostMicros;
inline constexpr int64_t kUnlimitedBudget = kMaxBudgetMicros;  // a cap that never refuses

class Reservation;

struct BudgetUsage {
  MonthId month = 0;      // the month the counter is in
  int64_t spent = 0;      // settled this month
  int64_t committed = 0;  // spent + outstanding reservations
};

class BudgetCounter {
 public:
  BudgetCounter() = default;
  BudgetCounter(const BudgetCounter&) = delete;
  BudgetCounter& operator=(const BudgetCounter&) = delete;

  // Reserves `estimate` (clamped to [0, kMaxBudgetMicros]) if committed + estimate <= `cap`.
  // nullopt: refused (the caller answers 429). An estimate of 0 is admitted while committed
  // is within the cap.
  std::optional<Reservation> Reserve(MonthId month, int64_t estimate, int64_t cap);

  // The amounts of the counter's current month (or of `month` if that is newer: zeros).
  BudgetUsage Read(MonthId month) const;

  // Start-up: sets the counter to `spent` in `month` (persisted spend). Call before any request
  // can reach the counter.
  void Restore(MonthId month, int64_t spent);
  // Reconciliation: adds `delta` (either sign) to spent and committed if the counter is in
  // `month`; otherwise nothing.
  void Correct(MonthId month, int64_t delta);

 private:
  friend class Reservation;
  // Moves a reservation of `estimate` in `month` to spent `actual`.
  void Settle(MonthId month, int64_t estimate, int64_t actual);
  void Release(MonthId month, int64_t estimate);

  std::atomic<uint64_t> committed_word_{0};  // month << kAmountBits | spent + reserved
  std::atomic<uint64_t> spent_word_{0};      // month << kAmountBits | spent
};

// An amount held in a BudgetCounter until Settle or Release; the destructor releases it if
// neither ran. Exactly once: the first Settle or Release wins, later calls do nothing.
// Move-only; a moved-from or default Reservation holds nothing.
class Reservation {
 public:
  Reservation() = default;
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { Release(); }

  void Settle(int64_t actual_micros);
  void Release();

  bool active() const { return counter_ != nullptr; }
  int64_t estimate() const { return estimate_; }
  MonthId month() const { return month_; }  // the month charged

 private:
  friend class BudgetCounter;
  Reservation(BudgetCounter* counter, MonthId month, int64_t estimate)
      : counter_(counter), month_(month), estimate_(estimate) {}

  BudgetCounter* counter_ = nullptr;
  MonthId month_ = 0;
  int64_t estimate_ = 0;
};

}  // namespace turnpike::governance
