// Requests-per-minute and tokens-per-minute limits: what a rate counter (counters.h) means.
// The algorithm is GCRA (the generic cell rate algorithm, a leaky bucket that stores one
// timestamp instead of a count and a refill time); GcraLimiter (local_counters.h) runs it on
// one atomic, a leased engine on its slice of the window.
//
// A limit of L per minute gives each unit (a request, or a token) an emission interval
// T = 60 s / L. The limiter keeps TAT, the theoretical arrival time: the moment by which the
// units admitted so far would have drained at the steady rate. A request of `cost` units is
// admitted iff max(TAT, now) + cost * T - now <= 60 s, i.e. a full minute's worth may arrive
// at once (burst = L) and after that exactly one unit per T. Admission moves TAT forward.
//
// Tokens: admission charges the request's estimated tokens (prompt estimate + max output);
// Correct(charged, actual) moves TAT by the difference once usage is known, so the limiter
// converges on real consumption. Refund(charged) undoes a charge whose request never ran
// (another limiter or the budget refused it).
//
// Rounding: T is rounded down to whole nanoseconds. For L above ~245,000 per minute this can
// admit one unit more per minute than L (< 0.0005%); limits are capped at kMaxRateLimit.
// Time: `now` is the caller's monotonic clock as a duration since its epoch; nothing here reads
// a clock (tests inject time). The limit comes from the caller's snapshot on every call, so a
// plan change applies at once without resetting the state: the backlog is kept as time, so a
// limiter drained at 10/min and raised to 20/min admits again after the new interval (3 s).
#pragma once

#include <chrono>
#include <cstdint>

namespace turnpike::governance {

using Nanos = std::chrono::nanoseconds;

inline constexpr Nanos kRateWindow = std::chrono::minutes(1);
inline constexpr int64_t kMaxRateLimit = 1'000'000'000;  // per minute: T stays >= 60 ns

// What one check decided, with what OpenAI's x-ratelimit-* headers need.
struct RateDecision {
  bool allowed = false;
  // cost > limit: no wait makes this request admissible (answer 429 with no Retry-After
  // promise, or 400 "request too large" as OpenAI does for TPM).
  bool exceeds_limit = false;
  // Not allowed, yet not refused by the limit: a leased engine's slice is empty and a refill is
  // under way (counters.h). The in-process engine never sets it.
  bool pending = false;
  int64_t limit = 0;      // x-ratelimit-limit-*
  int64_t remaining = 0;  // x-ratelimit-remaining-*: units admissible right now, after this one
  Nanos reset{0};         // x-ratelimit-reset-*: until the limiter is full again
  Nanos retry_after{0};   // refused only: the earliest time this request would be admitted

  // Whole seconds for a Retry-After header: retry_after rounded up, at least 1.
  int64_t RetryAfterSeconds() const;
};

}  // namespace turnpike::governance
