#include "governance/admission.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace turnpike::governance {
namespace {

constexpr int64_t kOneRequest = 1;

Error RateLimited(std::string message) {
  return Error{ErrorCode::kRateLimited, std::move(message), ""};
}

// A budget that refused (spent) or pended (a leased counter's empty slice).
Error BudgetRefusal(ReserveStatus status, std::string_view whose) {
  // kPending reaches the client only when the governance filter's bounded wait for the refill
  // ran out (core/governance_filter.h): retryable.
  if (status == ReserveStatus::kPending) {
    return RateLimited("The monthly budget of " + std::string(whose) +
                       " is being refilled; please try again shortly.");
  }
  if (status == ReserveStatus::kUnavailable) {
    return Error{ErrorCode::kUnavailable,
                 "The shared budget ledger is unreachable and this replica holds no budget "
                 "lease for " +
                     std::string(whose) + "; please try again shortly.",
                 ""};
  }
  return Error{ErrorCode::kQuotaExceeded,
               "You exceeded the monthly budget of " + std::string(whose) +
                   "; the request was not sent upstream.",
               ""};
}

// One rate limit to check: a limiter with its configured limit (unset: not checked).
struct RateStep {
  RateCounter* limiter;
  std::optional<int64_t> limit;
  int64_t cost;
  bool tokens;  // TPM (else RPM)
};

// The decision to show in headers: the tighter of two.
void KeepTighter(const RateDecision& decision, RateDecision& shown) {
  if (shown.limit == 0 || decision.remaining < shown.remaining) shown = decision;
}

std::string RateMessage(const RateStep& step, const RateDecision& decision) {
  std::string unit = step.tokens ? "tokens" : "requests";
  if (decision.exceeds_limit) {
    return "Request too large: it needs " + std::to_string(step.cost) + " " + unit +
           " per minute and the limit is " + std::to_string(decision.limit) + ".";
  }
  return "Rate limit reached for " + unit + " per minute (limit " + std::to_string(decision.limit) +
         "). Please try again in " + std::to_string(decision.RetryAfterSeconds()) + "s.";
}

}  // namespace

// Admit's steps, with access to Admission's members.
struct AdmitSteps {
  static void Run(const GovernanceSnapshot& snapshot, SecretVerifier& verifier,
                  const AdmissionRequest& request, AdmitResult& result);
};

void AdmitSteps::Run(const GovernanceSnapshot& snapshot, SecretVerifier& verifier,
                     const AdmissionRequest& request, AdmitResult& result) {
  Result<Principal> principal = Authenticate(snapshot, request.raw_key, request.now_unix, verifier);
  if (!principal.ok()) {
    result.refusal = principal.error();
    return;
  }
  result.principal = principal.value();
  if (Status model = CheckModel(principal.value(), request.model); !model.ok()) {
    result.refusal = model.error();
    return;
  }
  const Plan& plan = *principal->plan;
  const KeyEntry& key = *principal->key;
  const TenantEntry& tenant = *principal->tenant;
  const ModelPrice* price = snapshot.FindPrice(request.model);
  if (price == nullptr && !request.price_fallback.empty()) {
    price = snapshot.FindPrice(request.price_fallback);
  }
  CostEstimate estimate = EstimateMaxCost(request.prompt_bytes, request.max_tokens, price);
  std::optional<int64_t> query_price;
  if (request.per_query && plan.search_query_price_micros) {
    query_price = *plan.search_query_price_micros;
    estimate.micros = *query_price;
    estimate.unpriced = false;
  }
  if (plan.max_request_cost_micros && estimate.micros > *plan.max_request_cost_micros) {
    result.refusal = Error{ErrorCode::kInvalidRequest,
                           "The request's maximum cost exceeds the per-request limit of the "
                           "plan; lower max_tokens or the prompt size.",
                           "max_tokens"};
    return;
  }

  MonthId month = MonthOf(request.now_unix);
  const int64_t key_cap = key.key.monthly_budget_micros.value_or(kUnlimitedBudget);
  ReserveResult key_budget = key.counters->budget.Reserve(month, estimate.micros, key_cap);
  if (plan.fail_open && key_budget.status() == ReserveStatus::kUnavailable) {
    key_budget = key.counters->budget.ReserveFailOpen(month, estimate.micros, key_cap);
  }
  if (!key_budget) {
    result.pending = key_budget.status() == ReserveStatus::kPending;
    if (result.pending) result.pending_on = key.counters->budget.refill_source();
    result.refusal = BudgetRefusal(key_budget.status(), "this API key");
    return;
  }
  const int64_t tenant_cap = plan.monthly_budget_micros.value_or(kUnlimitedBudget);
  ReserveResult tenant_budget = tenant.counters->budget.Reserve(month, estimate.micros, tenant_cap);
  if (plan.fail_open && tenant_budget.status() == ReserveStatus::kUnavailable) {
    tenant_budget = tenant.counters->budget.ReserveFailOpen(month, estimate.micros, tenant_cap);
  }
  if (!tenant_budget) {
    result.pending = tenant_budget.status() == ReserveStatus::kPending;
    if (result.pending) result.pending_on = tenant.counters->budget.refill_source();
    result.refusal = BudgetRefusal(tenant_budget.status(), "your organization");
    return;
  }
  ReserveResult scope_budget = ReserveStatus::kReserved;
  if (request.scope_budget != nullptr) {
    scope_budget = request.scope_budget->Reserve(month, estimate.micros, request.scope_cap);
    if (plan.fail_open && scope_budget.status() == ReserveStatus::kUnavailable) {
      scope_budget =
          request.scope_budget->ReserveFailOpen(month, estimate.micros, request.scope_cap);
    }
    if (!scope_budget) {
      result.pending = scope_budget.status() == ReserveStatus::kPending;
      if (result.pending) result.pending_on = request.scope_budget->refill_source();
      result.refusal = BudgetRefusal(scope_budget.status(), request.scope_whose);
      return;
    }
  }

  const std::array<RateStep, 4> steps = {{
      {&key.counters->requests, key.key.rpm, kOneRequest, false},
      {&tenant.counters->requests, plan.rpm, kOneRequest, false},
      {&key.counters->tokens, key.key.tpm, estimate.total_tokens(), true},
      {&tenant.counters->tokens, plan.tpm, estimate.total_tokens(), true},
  }};
  for (size_t i = 0; i < steps.size(); ++i) {
    const RateStep& step = steps[i];
    if (!step.limit) continue;
    RateDecision decision = step.limiter->Check(request.now, step.cost, *step.limit);
    RateDecision& shown = step.tokens ? result.tokens : result.requests;
    if (!decision.allowed) {
      result.pending = decision.pending;
      if (decision.pending) result.pending_on = step.limiter->refill_source();
      for (size_t j = 0; j < i; ++j) {
        if (steps[j].limit) steps[j].limiter->Refund(steps[j].cost, *steps[j].limit);
      }
      shown = decision;
      result.refusal = RateLimited(RateMessage(step, decision));
      return;
    }
    KeepTighter(decision, shown);
  }

  Admission& admission = result.admission;
  admission.active_ = true;
  admission.principal_ = principal.value();
  admission.price_ = price;
  admission.query_price_ = query_price;
  admission.estimate_ = estimate;
  admission.key_budget_ = std::move(*key_budget);
  admission.tenant_budget_ = std::move(*tenant_budget);
  admission.scope_budget_ = std::move(*scope_budget);
  if (key.key.tpm) admission.key_tokens_ = {&key.counters->tokens, *key.key.tpm};
  if (plan.tpm) admission.tenant_tokens_ = {&tenant.counters->tokens, *plan.tpm};
}

AdmitResult Admit(const GovernanceSnapshot& snapshot, SecretVerifier& verifier,
                  const AdmissionRequest& request) {
  AdmitResult result;
  AdmitSteps::Run(snapshot, verifier, request, result);
  return result;
}

Admission::Admission(Admission&& other) noexcept { *this = std::move(other); }

Admission& Admission::operator=(Admission&& other) noexcept {
  if (this == &other) return *this;
  Abandon();
  active_ = std::exchange(other.active_, false);
  principal_ = other.principal_;
  price_ = other.price_;
  query_price_ = other.query_price_;
  estimate_ = other.estimate_;
  key_budget_ = std::move(other.key_budget_);
  tenant_budget_ = std::move(other.tenant_budget_);
  scope_budget_ = std::move(other.scope_budget_);
  key_tokens_ = std::exchange(other.key_tokens_, {});
  tenant_tokens_ = std::exchange(other.tenant_tokens_, {});
  return *this;
}

CostResult Admission::Complete(const TokenUsage& usage) {
  CostResult cost = query_price_ ? CostResult{*query_price_, false} : Cost(usage, price_);
  if (!std::exchange(active_, false)) return cost;
  key_budget_.Settle(cost.micros);
  tenant_budget_.Settle(cost.micros);
  scope_budget_.Settle(cost.micros);
  int64_t actual_tokens =
      std::max<int64_t>(usage.prompt_tokens, 0) + std::max<int64_t>(usage.completion_tokens, 0);
  for (const TokenCharge& charge : {key_tokens_, tenant_tokens_}) {
    if (charge.limiter != nullptr) {
      charge.limiter->Correct(estimate_.total_tokens(), actual_tokens, charge.limit);
    }
  }
  return cost;
}

void Admission::Abandon() {
  if (!std::exchange(active_, false)) return;
  key_budget_.Release();
  tenant_budget_.Release();
  scope_budget_.Release();
  for (const TokenCharge& charge : {key_tokens_, tenant_tokens_}) {
    if (charge.limiter != nullptr) charge.limiter->Refund(estimate_.total_tokens(), charge.limit);
  }
}

}  // namespace turnpike::governance
