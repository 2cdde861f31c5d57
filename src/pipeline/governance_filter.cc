#include "pipeline/governance_filter.h"

#include <algorithm>
#include <chrono>

#include "common/clock.h"

namespace turnpike::pipeline {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

FilterStatus GovernanceFilter::OnRequest(RequestContext& context, Error& error) {
  std::optional<std::string_view> key =
      governance::ExtractApiKey(context.authorization, context.x_api_key);
  if (!key) {
    error = Error{ErrorCode::kUnauthorized,
                  "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' or "
                  "in the 'x-api-key' header.",
                  ""};
    return FilterStatus::kRespond;
  }
  context.snapshot = reader_.Current();
  context.now_unix = UnixSeconds();
  governance::AdmissionRequest request;
  request.raw_key = *key;
  request.model = context.model;
  request.prompt_bytes = context.prompt_bytes;
  request.max_tokens = context.max_tokens;
  request.now_unix = context.now_unix;
  request.now = std::chrono::duration_cast<governance::Nanos>(
      std::chrono::steady_clock::now().time_since_epoch());
  if (const ModelEntry* entry = routes_->Find(context.model)) {
    request.price_fallback = entry->deployments.front().upstream_model;
  }
  governance::AdmitResult result = governance::Admit(*context.snapshot, verifier_, request);
  context.principal = result.principal;
  context.rate_requests = result.requests;
  context.rate_tokens = result.tokens;
  if (result.refusal) {
    error = std::move(*result.refusal);
    return FilterStatus::kRespond;
  }
  context.admission = std::move(result.admission);
  return FilterStatus::kContinue;
}

void GovernanceFilter::OnComplete(RequestContext& context) {
  governance::Admission& admission = context.admission;
  if (!admission.active()) return;
  const Usage& u = context.usage;
  governance::TokenUsage usage;
  if (u.prompt_tokens >= 0 || u.completion_tokens >= 0) {
    usage = {std::max<int64_t>(u.prompt_tokens, 0), std::max<int64_t>(u.completion_tokens, 0),
             std::max<int64_t>(u.cached_tokens, 0), std::max<int64_t>(u.cache_creation_tokens, 0)};
  } else if (context.output_bytes > 0) {
    usage = {admission.estimate().prompt_tokens,
             CeilDiv(context.output_bytes, governance::kPromptBytesPerToken), 0};
    context.usage = {usage.prompt_tokens, usage.completion_tokens, 0};
    context.usage_estimated = true;
  } else {
    admission.Release();
    context.unpriced = admission.price() == nullptr;
    return;
  }
  const governance::CostResult cost = admission.Complete(usage);
  context.cost_micros = cost.micros;
  context.unpriced = cost.unpriced;
}

}  // namespace turnpike::pipeline
