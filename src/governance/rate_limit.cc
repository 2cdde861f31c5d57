#include "governance/rate_limit.h"

#include <algorithm>

namespace turnpike::governance {
namespace {

constexpr int64_t kWindowNs = Nanos(kRateWindow).count();
// Corrections move TAT by at most this much, so absurd usage cannot overflow it.
constexpr int64_t kMaxShiftNs = Nanos(std::chrono::hours(24)).count();

int64_t IntervalNs(int64_t limit) {
  return kWindowNs / std::clamp<int64_t>(limit, 1, kMaxRateLimit);
}

int64_t ShiftNs(int64_t units, int64_t interval_ns) {
  __int128 shift = static_cast<__int128>(std::max<int64_t>(units, 0)) * interval_ns;
  return static_cast<int64_t>(std::min<__int128>(shift, kMaxShiftNs));
}

// The decision's remaining/reset when the limiter's backlog ends at `tat_ns`.
void Describe(int64_t now_ns, int64_t tat_ns, int64_t interval_ns, RateDecision& decision) {
  int64_t backlog_ns = std::max<int64_t>(tat_ns - now_ns, 0);
  decision.reset = Nanos(backlog_ns);
  decision.remaining = std::max<int64_t>(kWindowNs - backlog_ns, 0) / interval_ns;
}

}  // namespace

int64_t RateDecision::RetryAfterSeconds() const {
  constexpr int64_t kSecondNs = Nanos(std::chrono::seconds(1)).count();
  int64_t seconds = (retry_after.count() + kSecondNs - 1) / kSecondNs;
  return std::max<int64_t>(seconds, 1);
}

RateDecision GcraLimiter::Check(Nanos now, int64_t cost, int64_t limit) {
  RateDecision decision;
  decision.limit = limit;
  int64_t now_ns = now.count();
  int64_t interval_ns = IntervalNs(limit);
  int64_t current = tat_ns_.load(std::memory_order_relaxed);
  if (limit <= 0 || cost > std::min(limit, kMaxRateLimit)) {
    decision.exceeds_limit = true;
    Describe(now_ns, current, interval_ns, decision);
    return decision;
  }
  int64_t shift_ns = ShiftNs(cost, interval_ns);
  while (true) {
    int64_t base = std::max(current, now_ns);
    int64_t next = base + shift_ns;
    if (next - now_ns > kWindowNs) {
      decision.retry_after = Nanos(next - kWindowNs - now_ns);
      Describe(now_ns, base, interval_ns, decision);
      return decision;
    }
    if (tat_ns_.compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
      decision.allowed = true;
      Describe(now_ns, next, interval_ns, decision);
      return decision;
    }
  }
}

void GcraLimiter::Correct(int64_t charged, int64_t actual, int64_t limit) {
  int64_t interval_ns = IntervalNs(limit);
  int64_t delta = ShiftNs(actual, interval_ns) - ShiftNs(charged, interval_ns);
  if (delta != 0) tat_ns_.fetch_add(delta, std::memory_order_acq_rel);
}

}  // namespace turnpike::governance
