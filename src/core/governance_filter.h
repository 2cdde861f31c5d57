// The governance filter: authentication, model access, the per-request cost cap, budget
// reservations and rate limits (governance/admission.h) before the door's work, and settlement
// after it. Door-neutral: it reads only the credentials and context.billing (what the door
// bills: a model name and the estimate's inputs), never a door's extension. Runs first in a
// chain, so an unauthenticated caller learns nothing about models or routes.
//
// Suspension (filter.h): with a `refresh` (snapshot_ttl 0, read-through for debugging) every
// request first suspends on it — the store thread reloads the snapshot — and is admitted under
// the fresh one when it resumes; its failure is the request's answer. With leased counters
// (fleet mode, redis/lease_counters.h) a request whose budget or rate slice is empty while a
// refill is under way (AdmitResult::pending) suspends too: Resume parks it on its own worker (a
// timer set to `refill_wait`) and asks the counter that pended to wake it when that refill
// lands (governance/refill_wait.h; no polling). Woken, it re-runs admission against the new
// slice: admitted, refused for good (a failed refill: 429/503 at once), or still pending (it
// parks again); when `refill_wait` has passed the pending 429 is the answer. Otherwise
// admission never suspends.
//
// Once admission has decided (admitted or refused, after any wait), the rate decisions go on the
// response through context.response_headers (rate_limit_headers.h): x-ratelimit-* on every
// answer of a key with a limit, Retry-After on a rate refusal that waiting can cure, in every
// door, whatever shape its errors take.
//
// Admission reads only the worker's current snapshot (no I/O, no lock): the key's hash, one
// lookup, two budget CASes and up to four GCRA CASes.
//
// Settlement (OnComplete), exactly once per admitted request:
//   priced per query     (billing.per_query and the plan has a price per query) answered:
//                        Complete, costing exactly the price reserved at admission; failed
//                        (context.error set): Release
//   usage reported       Complete(usage): cost at the model's price, cached tokens as cached
//   no usage, output     Complete(estimate), flagged usage_estimated: the prompt estimate of
//                        cost.h plus ceil(output bytes / 3) completion tokens (the same
//                        deliberately high bytes-per-token ratio as the prompt estimate), so a
//                        stream whose provider sent no usage is never priced at $0
//   no usage, no output  Release: a failed or cancelled request costs nothing
// After a settle that cost something, the tenant's spend is compared against its next budget
// alert threshold (governance/budget_alerts.h; a comparison unless one is crossed).
// Errors (context.refusal, rendered in the door's shape; OpenAI's shown): 401 without a credential
// or with a bad key, 403 revoked/expired/suspended, 404 model not allowed, 400 per-request cap
// (param max_tokens), 429 insufficient_quota (budget) or rate_limit_exceeded (RPM/TPM, with
// Retry-After), 503 with Retry-After: 1 when a leased counter's ledger is unreachable.
//
// Ownership and threads: one per worker (its SecretVerifier and SnapshotReader are the
// worker's own); the cell outlives it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "common/result.h"
#include "core/filter.h"
#include "governance/budget_alerts.h"
#include "governance/keys.h"
#include "governance/snapshot_cell.h"

namespace turnpike::core {

// Reloads the published snapshot before a request is admitted (an empty function: never).
using SnapshotRefresh = std::function<boost::asio::awaitable<Status>()>;

class GovernanceFilter : public Filter {
 public:
  GovernanceFilter(const governance::SnapshotCell& cell, governance::SecretVerifier verifier,
                   SnapshotRefresh refresh = {},
                   std::chrono::milliseconds refill_wait = std::chrono::milliseconds(0),
                   const governance::BudgetAlerts* alerts = nullptr)
      : reader_(cell),
        verifier_(std::move(verifier)),
        refresh_(std::move(refresh)),
        refill_wait_(refill_wait),
        alerts_(alerts) {}

  FilterStatus OnRequest(RequestContext& context) override;
  boost::asio::awaitable<FilterStatus> Resume(RequestContext& context) override;
  void OnComplete(RequestContext& context) override;

 private:
  struct Admitted {
    FilterStatus status;
    governance::RefillSource* pending_on = nullptr;  // kSuspend: where to wait (may be null)
  };
  // kSuspend only when the counters answered pending and a wait is allowed.
  Admitted Admit(RequestContext& context, bool may_wait);
  void CheckAlerts(const governance::Admission& admission) const;

  governance::SnapshotReader reader_;
  governance::SecretVerifier verifier_;
  const SnapshotRefresh refresh_;
  const std::chrono::milliseconds refill_wait_;
  const governance::BudgetAlerts* const alerts_;  // null: no budget alerts
};

}  // namespace turnpike::core
