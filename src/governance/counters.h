// Counters: the live budget and rate state of every scope (a tenant, or a key), behind
// interfaces, so that the engine holding it can change (DESIGN.md "counters" role).
//
// A scope (a tenant, a key, or an agent: doors/agents/budgets.h makes those on an agent's first
// turn in the process) has one BudgetCounter (monthly spend, budget.h) and two RateCounters
// (requests and tokens per minute, rate_limit.h), grouped as ScopeCounters. A Counters factory
// makes the ScopeCounters of a scope when a snapshot first names it (GovernanceSnapshot::Build);
// later snapshots hand the same object on, so a config change never resets state. Admission
// (admission.h) reserves a budget before it admits, checks the rate counters, and undoes every
// earlier step when a later one refuses.
//
// Engines: LocalCounters (local_counters.h) keeps each counter in one in-process atomic word.
// A leased engine (fleet mode, redis/lease_counters.h) keeps the authoritative value in Redis,
// keyed by ScopeKind and id: each replica leases a slice of a scope's remaining budget, or of
// its RPM/TPM window, and
// admits locally against that slice exactly as the in-process engine admits against the cap
// (the slice is the local cap). A background refill leases more before the slice runs out and
// gives back what is left when the scope goes idle; the sum of the leases never exceeds the
// cap, so the fleet never overshoots, and a request makes no round trip. A request that finds
// its slice empty while a refill is under way gets kPending (budgets) or a pending RateDecision:
// the governance filter will suspend it until the refill lands (refill_source(): where it waits,
// refill_wait.h). Only a leased engine returns pending.
//
// Ownership: the composition root owns the Counters factory; it must outlive every
// ScopeCounters it made (snapshots hold them through shared_ptr). A Reservation must not
// outlive its counter (the request keeps its snapshot).
// Thread safety: every counter method is safe from any thread, concurrently; MakeScope too.
// A Reservation belongs to one request (one thread).
// Errors: none are returned; a refusal is a value (ReserveStatus, RateDecision). No method
// blocks or allocates on the request path (Reserve, Settle, Release, Check, Correct).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "governance/budget.h"
#include "governance/rate_limit.h"

namespace turnpike::governance {

enum class ScopeKind { kTenant, kKey, kAgent };

enum class ReserveStatus {
  kReserved,     // the estimate is held: admit
  kRefused,      // the cap cannot hold the estimate: answer 429 (insufficient_quota)
  kPending,      // leased engines only: no slice right now, a refill is under way; try again
  kUnavailable,  // leased engines only: the slice is empty and the shared ledger is
                 // unreachable: answer 503 (never admitted on credit)
};

class Reservation;
class ReserveResult;
class RefillSource;  // refill_wait.h

// A scope's monthly budget. Semantics (months, clamping, the admission test, what a settle or
// release of a closed month does) are budget.h's; an engine may only refuse or pend more.
class BudgetCounter {
 public:
  virtual ~BudgetCounter() = default;

  // Holds `estimate` (clamped to [0, kMaxBudgetMicros]) if committed + estimate <= `cap`.
  // An estimate of 0 is admitted while committed is within the cap.
  virtual ReserveResult Reserve(MonthId month, int64_t estimate, int64_t cap) = 0;
  // A fail-open plan's second try (Plan::fail_open), called only after Reserve answered
  // kUnavailable: holds `estimate` against this process's own count (its restored and settled
  // spend plus what it holds) instead of a slice of the shared ledger, so the fleet may
  // overshoot. The in-process engine never answers kUnavailable: its Reserve again.
  virtual ReserveResult ReserveFailOpen(MonthId month, int64_t estimate, int64_t cap);
  // The amounts of the counter's current month (or of `month` if that is newer: zeros).
  virtual BudgetUsage Read(MonthId month) const = 0;
  // Start-up: sets the counter to `spent` in `month` (persisted spend), before any request.
  virtual void Restore(MonthId month, int64_t spent) = 0;
  // Reconciliation: adds `delta` (either sign) to spent and committed if the counter is in
  // `month`; otherwise nothing.
  virtual void Correct(MonthId month, int64_t delta) = 0;
  // Where a request that got kPending waits for the refill (null: this engine never pends).
  virtual RefillSource* refill_source() { return nullptr; }

 protected:
  BudgetCounter() = default;
  BudgetCounter(const BudgetCounter&) = delete;
  BudgetCounter& operator=(const BudgetCounter&) = delete;

  // For Reserve: a reservation of `estimate` charged to `month` on this counter.
  ReserveResult Hold(MonthId month, int64_t estimate);

 private:
  friend class Reservation;
  // Moves a reservation of `estimate` in `month` to spent `actual`.
  virtual void Settle(MonthId month, int64_t estimate, int64_t actual) = 0;
  virtual void Release(MonthId month, int64_t estimate) = 0;
};

// An amount held in a BudgetCounter until Settle or Release; the destructor releases it if
// neither ran. Exactly once: the first Settle or Release wins, later calls do nothing.
// Move-only; a moved-from or default Reservation holds nothing. Inline: Admit and Complete move,
// settle and release two of these per request.
class Reservation {
 public:
  Reservation() = default;
  Reservation(Reservation&& other) noexcept
      : counter_(std::exchange(other.counter_, nullptr)),
        month_(other.month_),
        estimate_(other.estimate_) {}
  Reservation& operator=(Reservation&& other) noexcept {
    if (this != &other) {
      Release();
      counter_ = std::exchange(other.counter_, nullptr);
      month_ = other.month_;
      estimate_ = other.estimate_;
    }
    return *this;
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() { Release(); }

  void Settle(int64_t actual_micros) {
    if (counter_ == nullptr) return;
    std::exchange(counter_, nullptr)->Settle(month_, estimate_, actual_micros);
  }
  void Release() {
    if (counter_ == nullptr) return;
    std::exchange(counter_, nullptr)->Release(month_, estimate_);
  }

  bool active() const { return counter_ != nullptr; }
  int64_t estimate() const { return estimate_; }
  MonthId month() const { return month_; }  // the month charged

 private:
  friend class ReserveResult;
  Reservation(BudgetCounter* counter, MonthId month, int64_t estimate)
      : counter_(counter), month_(month), estimate_(estimate) {}

  BudgetCounter* counter_ = nullptr;
  MonthId month_ = 0;
  int64_t estimate_ = 0;
};

// What Reserve decided, shaped like std::expected<Reservation, ReserveStatus>: true (and a
// Reservation inside) iff kReserved.
class ReserveResult {
 public:
  // Implicit, so that Reserve can `return ReserveStatus::kRefused;`.
  ReserveResult(ReserveStatus status) : status_(status) {}

  ReserveStatus status() const { return status_; }
  bool has_value() const { return status_ == ReserveStatus::kReserved; }
  explicit operator bool() const { return has_value(); }
  Reservation& operator*() { return reservation_; }
  Reservation* operator->() { return &reservation_; }

 private:
  friend class BudgetCounter;
  // Built in place (BudgetCounter::Hold), so a reserve moves no Reservation.
  ReserveResult(BudgetCounter* counter, MonthId month, int64_t estimate)
      : status_(ReserveStatus::kReserved), reservation_(counter, month, estimate) {}

  ReserveStatus status_;
  Reservation reservation_;
};

inline ReserveResult BudgetCounter::ReserveFailOpen(MonthId month, int64_t estimate, int64_t cap) {
  return Reserve(month, estimate, cap);
}

inline ReserveResult BudgetCounter::Hold(MonthId month, int64_t estimate) {
  return ReserveResult(this, month, estimate);
}

// A scope's requests or tokens per minute, with the semantics of rate_limit.h. A leased engine
// answers a decision with `pending` set (and `allowed` not) when its slice is empty.
class RateCounter {
 public:
  virtual ~RateCounter() = default;

  // Admits `cost` units (>= 0) under `limit` per minute (1..kMaxRateLimit; larger is capped,
  // smaller refuses everything) at `now`, or refuses without changing the state.
  virtual RateDecision Check(Nanos now, int64_t cost, int64_t limit) = 0;
  // Replaces an admitted `charged` with `actual` units (both >= 0).
  virtual void Correct(int64_t charged, int64_t actual, int64_t limit) = 0;
  // Undoes an admitted charge whose request never ran.
  void Refund(int64_t charged, int64_t limit) { Correct(charged, 0, limit); }
  // Where a request that got a pending decision waits for the refill (null: never pends).
  virtual RefillSource* refill_source() { return nullptr; }

 protected:
  RateCounter() = default;
  RateCounter(const RateCounter&) = delete;
  RateCounter& operator=(const RateCounter&) = delete;
};

// The live state of one tenant or key; shared by every snapshot that names it. The members
// refer into an object the factory allocated with this one (one allocation per scope).
struct ScopeCounters {
  BudgetCounter& budget;
  RateCounter& requests;
  RateCounter& tokens;
};

// Makes the counters of scopes. GovernanceSnapshot::Build calls MakeScope for each tenant and
// key that its previous snapshot did not have (`id`: the tenant id, or the key's public id;
// valid for the call only). MakeScope never fails and never blocks: a leased engine starts with
// an empty slice. A Build that fails drops the scopes it made.
class Counters {
 public:
  virtual ~Counters() = default;
  virtual std::shared_ptr<ScopeCounters> MakeScope(ScopeKind kind, std::string_view id) = 0;
};

}  // namespace turnpike::governance
