#include "core/governance_filter.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "common/clock.h"

namespace turnpike::core {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A refill is one Redis round trip (well under a millisecond on a LAN): polling at this step
// keeps the waiting request's extra latency small without a wake-up channel per counter.
constexpr std::chrono::milliseconds kRefillPollInterval{2};

}  // namespace

FilterStatus GovernanceFilter::OnRequest(RequestContext& context) {
  if (refresh_) return FilterStatus::kSuspend;
  return Admit(context, refill_wait_.count() > 0);
}

boost::asio::awaitable<FilterStatus> GovernanceFilter::Resume(RequestContext& context) {
  // context.snapshot is still null when OnRequest suspended for the read-through reload.
  if (refresh_ && context.snapshot == nullptr) {
    Status reloaded = co_await refresh_();
    if (!reloaded.ok()) {
      context.refusal = reloaded.error();
      co_return FilterStatus::kRespond;
    }
    FilterStatus first = Admit(context, refill_wait_.count() > 0);
    if (first != FilterStatus::kSuspend) co_return first;
  }
  const auto until = std::chrono::steady_clock::now() + refill_wait_;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  while (true) {
    timer.expires_after(kRefillPollInterval);
    co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    const bool last = std::chrono::steady_clock::now() + kRefillPollInterval >= until;
    FilterStatus status = Admit(context, !last);
    if (status != FilterStatus::kSuspend) co_return status;
  }
}

FilterStatus GovernanceFilter::Admit(RequestContext& context, bool may_wait) {
  std::optional<std::string_view> key =
      governance::ExtractApiKey(context.authorization, context.x_api_key);
  if (!key) {
    context.refusal =
        Error{ErrorCode::kUnauthorized,
              "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' or "
              "in the 'x-api-key' header.",
              ""};
    return FilterStatus::kRespond;
  }
  context.snapshot = reader_.Current();
  context.now_unix = UnixSeconds();
  governance::AdmissionRequest request;
  request.raw_key = *key;
  request.model = context.billing.model;
  request.prompt_bytes = context.billing.prompt_bytes;
  request.max_tokens = context.billing.max_tokens;
  request.price_fallback = context.billing.price_fallback;
  request.per_query = context.billing.per_query;
  request.now_unix = context.now_unix;
  request.now = std::chrono::duration_cast<governance::Nanos>(
      std::chrono::steady_clock::now().time_since_epoch());
  governance::AdmitResult result = governance::Admit(*context.snapshot, verifier_, request);
  context.principal = result.principal;
  context.rate_requests = result.requests;
  context.rate_tokens = result.tokens;
  if (result.refusal) {
    context.refusal = std::move(result.refusal);
    return result.pending && may_wait ? FilterStatus::kSuspend : FilterStatus::kRespond;
  }
  context.admission = std::move(result.admission);
  return FilterStatus::kContinue;
}

void GovernanceFilter::OnComplete(RequestContext& context) {
  governance::Admission& admission = context.admission;
  if (!admission.active()) return;
  if (admission.query_price()) {
    // Priced per query: a query that was answered costs its price; a failed one nothing.
    if (context.error) {
      admission.Release();
      return;
    }
    // The tokens only correct the TPM limiters: the query's size, as estimated at admission.
    const governance::CostResult cost =
        admission.Complete(governance::TokenUsage{admission.estimate().prompt_tokens, 0, 0, 0});
    context.cost_micros = cost.micros;
    context.unpriced = false;
    return;
  }
  const Usage& u = context.usage;
  governance::TokenUsage usage;
  if (u.prompt_tokens >= 0 || u.completion_tokens >= 0) {
    const int64_t completion = std::max<int64_t>(u.completion_tokens, 0);
    usage = {std::max<int64_t>(u.prompt_tokens, 0), completion,
             std::max<int64_t>(u.cached_tokens, 0), std::max<int64_t>(u.cache_creation_tokens, 0),
             std::clamp<int64_t>(u.reasoning_tokens, 0, completion)};
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

}  // namespace turnpike::core
