// Admission: everything governance decides before a request may go upstream, and the
// accounting when it ends. One call for the auth/limits/budget filters to share.
//
// Admit runs, in order: Authenticate, CheckModel, EstimateMaxCost, the plan's per-request cost
// cap, the key's and the tenant's monthly budgets (Reserve) and the door's extra budget scope
// when it names one (AdmissionRequest::scope_budget: an agent's), then RPM and TPM for the key
// and for the tenant (GCRA). A refusal undoes what earlier steps took (reservations released, rate
// charges refunded), so a refused request consumes nothing. An unset limit is not checked; the
// budgets are always reserved (an unset budget tracks spend without a cap).
//
// Errors in AdmitResult::refusal: those of authenticate.h, and
//   kInvalidRequest (400, param "max_tokens")  the estimate exceeds the plan's per-request cap
//   kQuotaExceeded (429)  the key's, the tenant's or the extra scope's monthly budget cannot hold
//                         the estimate
//   kRateLimited (429)  a rate limit refused (then `requests` or `tokens` holds the refusing
//                       decision, with retry_after for Retry-After); or a leased counter answered
//                       pending (counters.h): its slice is empty until a refill lands (then
//                       AdmitResult::pending is set: the caller may wait, on pending_on
//                       (refill_wait.h), and Admit again)
//   kUnavailable (503)  a leased budget's slice is empty and its shared ledger is unreachable
//
// Completion: call Admission::Complete(usage) exactly once when usage is known (also for a
// stream the client left early: pass what was accounted so far). It settles every budget with
// Cost(usage), corrects both TPM limiters from the estimate to the real tokens, and returns the
// cost. Release() (or destroying the Admission without Complete) releases its reservations and
// refunds its token charge (the request produced nothing). Whichever comes first wins; later
// calls settle nothing (Complete still returns what the usage would cost).
//
// Prices: the model's own entry, else `price_fallback`'s (the upstream model name of the
// model's first deployment, so a public alias is priced as what serves it). A per-query request
// whose plan has a price per query is priced at exactly that price instead: the estimate (and
// so the reservation and the per-request cap check) is the price, and Complete settles the
// price whatever the usage (the token limiters still see the tokens).
//
// Ownership: an Admission points into the snapshot it was admitted under; the request holds that
// snapshot until the Admission is gone. Thread safety: an Admission belongs to one request.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/error.h"
#include "governance/authenticate.h"
#include "governance/cost.h"
#include "governance/counters.h"

namespace turnpike::governance {

struct AdmissionRequest {
  std::string_view raw_key;  // from ExtractApiKey
  std::string_view model;
  int64_t prompt_bytes = 0;  // the request body's size
  std::optional<int64_t> max_tokens;
  int64_t now_unix = 0;             // wall clock, seconds: expiry and the budget month
  Nanos now{0};                     // monotonic clock: rate limits
  std::string_view price_fallback;  // model name to price by when `model` has no price entry
  // One query: priced at the plan's search_query_price_micros, when set, instead of by tokens.
  bool per_query = false;
  // A third budget the door names (an agent's, doors/agents/budgets.h), reserved after the
  // key's and the tenant's under `scope_cap` (kUnlimitedBudget: spend is tracked, never
  // refused) and settled with them; `scope_whose` names it in a refusal ("this agent"). Null:
  // none. The counter must outlive the Admission.
  BudgetCounter* scope_budget = nullptr;
  int64_t scope_cap = kUnlimitedBudget;
  std::string_view scope_whose;
};

// One charge against a rate counter, undone or corrected later.
struct TokenCharge {
  RateCounter* limiter = nullptr;
  int64_t limit = 0;
};

class Admission {
 public:
  Admission() = default;
  Admission(Admission&& other) noexcept;
  Admission& operator=(Admission&& other) noexcept;
  ~Admission() { Abandon(); }

  CostResult Complete(const TokenUsage& usage);
  void Release() { Abandon(); }

  bool active() const { return active_; }
  const Principal& principal() const { return principal_; }
  const CostEstimate& estimate() const { return estimate_; }
  const ModelPrice* price() const { return price_; }  // null: unpriced model
  // Set: the request is priced per query at this many micro-USD (AdmissionRequest::per_query).
  std::optional<int64_t> query_price() const { return query_price_; }

 private:
  friend struct AdmitSteps;
  void Abandon();

  bool active_ = false;
  Principal principal_;
  const ModelPrice* price_ = nullptr;
  std::optional<int64_t> query_price_;
  CostEstimate estimate_;
  Reservation key_budget_;
  Reservation tenant_budget_;
  Reservation scope_budget_;
  TokenCharge key_tokens_;
  TokenCharge tenant_tokens_;
};

struct AdmitResult {
  std::optional<Error> refusal;        // set: answer the client with it
  bool pending = false;                // refused because a leased counter is refilling: may retry
  RefillSource* pending_on = nullptr;  // pending: the counter's refill to wait for (may be null)
  Admission admission;                 // active iff !refusal
  Principal principal;                 // set once the key authenticated (also on a later refusal)
  // For x-ratelimit-*: of the key's and tenant's decisions, the one with fewer remaining
  // (limit 0: no limit configured). On a rate refusal, the refusing decision.
  RateDecision requests;
  RateDecision tokens;
};

AdmitResult Admit(const GovernanceSnapshot& snapshot, SecretVerifier& verifier,
                  const AdmissionRequest& request);

}  // namespace turnpike::governance
