#include "redis/lease_rate.h"

#include <algorithm>

#include "redis/lease_counters.h"

namespace turnpike::redis {
using governance::RateDecision;

RateDecision LeaseRateCounter::Check(governance::Nanos, int64_t cost, int64_t limit) {
  RateDecision decision;
  decision.limit = limit;
  if (limit <= 0 || cost > std::min(limit, governance::kMaxRateLimit)) {
    decision.exceeds_limit = true;
    return decision;
  }
  limit_.store(std::min(limit, governance::kMaxRateLimit), std::memory_order_relaxed);
  int64_t units = units_.load(std::memory_order_relaxed);
  while (units >= cost) {
    if (units_.compare_exchange_weak(units, units - cost, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      uses_.fetch_add(1, std::memory_order_relaxed);
      decision.allowed = true;
      decision.remaining = units - cost;
      if (units - cost < std::max(low_water_.load(std::memory_order_relaxed), cost)) {
        RequestRefill(0);
      }
      return decision;
    }
  }
  const auto state = static_cast<LedgerState>(state_.load(std::memory_order_acquire));
  const bool recent = NowNs() - state_at_ns_.load(std::memory_order_relaxed) < kRetryNs;
  if (state != LedgerState::kOk && recent) {
    // The shared window is full (retry when the script said), or Redis is unreachable and the
    // leased units are spent: refused, never admitted on credit.
    decision.retry_after = governance::Nanos(
        state == LedgerState::kExhausted ? retry_ns_.load(std::memory_order_relaxed) : kRetryNs);
    return decision;
  }
  RequestRefill(cost - std::max<int64_t>(units, 0));
  decision.pending = true;
  return decision;
}

void LeaseRateCounter::Correct(int64_t charged, int64_t actual, int64_t) {
  const int64_t delta = std::max<int64_t>(charged, 0) - std::max<int64_t>(actual, 0);
  if (delta != 0) units_.fetch_add(delta, std::memory_order_acq_rel);
}

void LeaseRateCounter::Watch(std::weak_ptr<governance::RefillWaiter> waiter) {
  waiters_.Add(std::move(waiter));
}

void LeaseRateCounter::WaitTimedOut() {
  engine_.wait_timeouts_.fetch_add(1, std::memory_order_relaxed);
}

void LeaseRateCounter::RequestRefill(int64_t need) {
  int64_t current = need_.load(std::memory_order_relaxed);
  while (need > current && !need_.compare_exchange_weak(current, need)) {
  }
  refill_wanted_.store(true, std::memory_order_release);
  if (inflight_.exchange(true, std::memory_order_acq_rel)) return;
  std::shared_ptr<LeaseRateCounter> strong = self.lock();
  if (!strong) {
    inflight_.store(false);
    return;
  }
  engine_.PostRate(std::move(strong));
}

}  // namespace turnpike::redis
