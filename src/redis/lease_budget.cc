#include "redis/lease_budget.h"

#include <algorithm>

#include "redis/lease_counters.h"

namespace turnpike::redis {
using governance::BudgetUsage;
using governance::MonthId;
using governance::ReserveResult;
using governance::ReserveStatus;

namespace {

int64_t Clamp(int64_t v) { return std::clamp<int64_t>(v, 0, governance::kMaxBudgetMicros); }

void AtomicMax(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

ReserveResult LeaseBudgetCounter::Reserve(MonthId month, int64_t estimate, int64_t cap) {
  estimate = Clamp(estimate);
  cap = Clamp(cap);
  cap_.store(cap, std::memory_order_relaxed);
  const MonthId current = month_.load(std::memory_order_acquire);
  if (cap >= governance::kUnlimitedBudget) {
    // No cap: nothing to lease; spend is still reported when a cap appears.
    headroom_.fetch_sub(estimate, std::memory_order_relaxed);
    reserved_.fetch_add(estimate, std::memory_order_relaxed);
    return Hold(std::max(month, current), estimate);
  }
  const int64_t now = NowNs();
  if (month > current || now >= deadline_ns_.load(std::memory_order_acquire)) {
    if (month > current) {
      uint32_t want = want_month_.load(std::memory_order_relaxed);
      while (month > want && !want_month_.compare_exchange_weak(want, month)) {
      }
    }
    RequestRefill(estimate);
    return state_.load() == static_cast<int>(LedgerState::kUnavailable)
               ? ReserveStatus::kUnavailable
               : ReserveStatus::kPending;
  }
  int64_t h = headroom_.load(std::memory_order_relaxed);
  while (h >= estimate) {
    if (headroom_.compare_exchange_weak(h, h - estimate, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
      reserved_.fetch_add(estimate, std::memory_order_relaxed);
      uses_.fetch_add(1, std::memory_order_relaxed);
      if (h - estimate < std::max(low_water_.load(std::memory_order_relaxed), estimate)) {
        RequestRefill(0);
      }
      return Hold(current, estimate);
    }
  }
  const auto state = static_cast<LedgerState>(state_.load(std::memory_order_acquire));
  const bool recent = now - state_at_ns_.load(std::memory_order_relaxed) < kRetryNs;
  if (state != LedgerState::kOk && recent) {
    switch (state) {
      case LedgerState::kExhausted:
        return ReserveStatus::kRefused;
      case LedgerState::kUnavailable:
        return ReserveStatus::kUnavailable;
      default:
        return ReserveStatus::kPending;  // settling after a Redis restart: retried shortly
    }
  }
  RequestRefill(estimate - h);
  return ReserveStatus::kPending;
}

ReserveResult LeaseBudgetCounter::ReserveFailOpen(MonthId month, int64_t estimate, int64_t cap) {
  estimate = Clamp(estimate);
  cap = Clamp(cap);
  const MonthId current = month_.load(std::memory_order_acquire);
  if (month > current) return ReserveStatus::kUnavailable;  // no count of that month here
  // Reserve-before-admit on this replica's own count: a compare-and-swap on reserved_ so two
  // requests cannot both take the last room.
  const int64_t spent = spent_local_.load(std::memory_order_relaxed);
  int64_t held = reserved_.load(std::memory_order_relaxed);
  while (true) {
    if (spent + std::max<int64_t>(held, 0) + estimate > cap) return ReserveStatus::kRefused;
    if (reserved_.compare_exchange_weak(held, held + estimate, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
      break;
    }
  }
  headroom_.fetch_sub(estimate, std::memory_order_relaxed);
  engine_.fail_open_admitted_.fetch_add(1, std::memory_order_relaxed);
  return Hold(current, estimate);
}

void LeaseBudgetCounter::Watch(std::weak_ptr<governance::RefillWaiter> waiter) {
  waiters_.Add(std::move(waiter));
}

void LeaseBudgetCounter::WaitTimedOut() {
  engine_.wait_timeouts_.fetch_add(1, std::memory_order_relaxed);
}

void LeaseBudgetCounter::RequestRefill(int64_t need) {
  AtomicMax(need_, need);
  refill_wanted_.store(true, std::memory_order_release);
  if (inflight_.exchange(true, std::memory_order_acq_rel)) return;
  std::shared_ptr<LeaseBudgetCounter> strong = self.lock();
  if (!strong) {
    inflight_.store(false);
    return;
  }
  engine_.Post(std::move(strong));
}

BudgetUsage LeaseBudgetCounter::Read(MonthId month) const {
  BudgetUsage usage;
  usage.month = std::max(month, month_.load(std::memory_order_acquire));
  usage.spent = spent_local_.load(std::memory_order_relaxed);
  usage.committed = usage.spent + std::max<int64_t>(reserved_.load(std::memory_order_relaxed), 0);
  return usage;
}

void LeaseBudgetCounter::Restore(MonthId month, int64_t spent) {
  base_month_.store(month);
  base_spent_.store(Clamp(spent));
  spent_local_.store(Clamp(spent));
}

void LeaseBudgetCounter::Correct(MonthId month, int64_t delta) {
  if (month != month_.load(std::memory_order_acquire)) return;
  spent_local_.fetch_add(delta, std::memory_order_relaxed);
  if (delta <= 0) return;  // the ledger only learns more spend: never frees budget on a guess
  unreported_.fetch_add(delta, std::memory_order_relaxed);
  headroom_.fetch_sub(delta, std::memory_order_relaxed);
}

void LeaseBudgetCounter::Settle(MonthId month, int64_t estimate, int64_t actual) {
  actual = Clamp(actual);
  reserved_.fetch_sub(estimate, std::memory_order_relaxed);
  if (month != month_.load(std::memory_order_acquire) &&
      cap_.load(std::memory_order_relaxed) < governance::kUnlimitedBudget) {
    return;  // a closed month: the call log has it (budget.h)
  }
  if (actual > estimate) engine_.over_reservation_.fetch_add(1, std::memory_order_relaxed);
  spent_local_.fetch_add(actual, std::memory_order_relaxed);
  unreported_.fetch_add(actual, std::memory_order_relaxed);
  headroom_.fetch_add(estimate - actual, std::memory_order_acq_rel);
}

void LeaseBudgetCounter::Release(MonthId month, int64_t estimate) {
  reserved_.fetch_sub(estimate, std::memory_order_relaxed);
  if (month != month_.load(std::memory_order_acquire) &&
      cap_.load(std::memory_order_relaxed) < governance::kUnlimitedBudget) {
    return;
  }
  headroom_.fetch_add(estimate, std::memory_order_acq_rel);
}

}  // namespace turnpike::redis
