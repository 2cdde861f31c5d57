#include "core/governance_filter.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <memory>
#include <tuple>

#include "common/clock.h"
#include "core/rate_limit_headers.h"
#include "governance/refill_wait.h"

namespace turnpike::core {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// After Watch on a counter, admission is re-run once (a refill that landed before Watch;
// refill_wait.h). A request that pends on yet another counter each time is re-checked at most
// this many times before it parks anyway (a wake from any counter it watches, or the bound).
constexpr int kMaxRechecks = 4;

// Retry-After of a 503 from an unreachable shared ledger: a Redis reconnect is tried every
// 50 ms .. 1 s (redis/client.h).
constexpr int64_t kUnavailableRetryAfterS = 1;

// A request parked on a refill. The engine holds it weakly (refill_wait.h) and wakes it from its
// own thread; the wake only posts to the request's worker, where `timer` lives.
class ParkedRequest final : public governance::RefillWaiter,
                            public std::enable_shared_from_this<ParkedRequest> {
 public:
  explicit ParkedRequest(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}

  void Wake() override {
    // Weak: a wake still queued when the request went on must not keep it alive (so the engine
    // can never find it again and post to a worker that is shutting down).
    boost::asio::post(executor_, [weak = weak_from_this()] {
      std::shared_ptr<ParkedRequest> self = weak.lock();
      if (self != nullptr && self->timer != nullptr) self->timer->cancel();
    });
  }

  // The worker's thread only: set while Resume may wait on it, null once Resume returned (a
  // late wake then does nothing).
  boost::asio::steady_timer* timer = nullptr;

 private:
  const boost::asio::any_io_executor executor_;
};

struct Unpark {
  ParkedRequest& parked;
  ~Unpark() { parked.timer = nullptr; }
};

// Admission decided (anything but kSuspend, once per request): its rate decisions go on the
// response, whichever door answers and however (rate_limit_headers.h).
FilterStatus Decided(RequestContext& context, FilterStatus status) {
  if (status == FilterStatus::kSuspend || context.response_headers == nullptr) return status;
  const bool rate_refused = status == FilterStatus::kRespond && context.refusal &&
                            context.refusal->code == ErrorCode::kRateLimited;
  AddRateLimitHeaders(*context.response_headers, context.rate_requests, context.rate_tokens,
                      rate_refused);
  // A leased counter's ledger unreachable (Redis down or frozen): a retry may be admitted as
  // soon as it is back (docs/RELIABILITY.md "Store and Redis outages").
  if (status == FilterStatus::kRespond && context.refusal &&
      context.refusal->code == ErrorCode::kUnavailable) {
    context.response_headers->Add("Retry-After", int64_t{kUnavailableRetryAfterS});
  }
  return status;
}

}  // namespace

FilterStatus GovernanceFilter::OnRequest(RequestContext& context) {
  if (refresh_) return FilterStatus::kSuspend;
  return Decided(context, Admit(context, refill_wait_.count() > 0).status);
}

boost::asio::awaitable<FilterStatus> GovernanceFilter::Resume(RequestContext& context) {
  // context.snapshot is still null when OnRequest suspended for the read-through reload.
  if (refresh_ && context.snapshot == nullptr) {
    Status reloaded = co_await refresh_();
    if (!reloaded.ok()) {
      context.refusal = reloaded.error();
      co_return Decided(context, FilterStatus::kRespond);
    }
    FilterStatus first = Admit(context, refill_wait_.count() > 0).status;
    if (first != FilterStatus::kSuspend) co_return Decided(context, first);
  }
  // Pending: park until a refill of the counter that pended lands (then look again: reserve
  // before admit) or refill_wait passes (then the pending 429 is the answer).
  boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  boost::asio::steady_timer timer(executor);
  timer.expires_after(refill_wait_);
  auto parked = std::make_shared<ParkedRequest>(executor);
  parked->timer = &timer;
  Unpark unpark{*parked};
  governance::RefillSource* watched = nullptr;  // watched since the last wake
  int rechecks = 0;
  while (true) {
    Admitted admitted = Admit(context, /*may_wait=*/true);
    if (admitted.status != FilterStatus::kSuspend) co_return Decided(context, admitted.status);
    governance::RefillSource* source = admitted.pending_on;
    if (source != nullptr && source != watched && rechecks < kMaxRechecks) {
      source->Watch(parked);
      watched = source;
      ++rechecks;
      continue;
    }
    std::tuple<boost::system::error_code> waited =
        co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    watched = nullptr;
    rechecks = 0;
    if (std::get<0>(waited) != boost::asio::error::operation_aborted) {
      // The bound passed: one last look, and the pending refusal if it is still pending.
      if (source != nullptr) source->WaitTimedOut();
      co_return Decided(context, Admit(context, /*may_wait=*/false).status);
    }
  }
}

GovernanceFilter::Admitted GovernanceFilter::Admit(RequestContext& context, bool may_wait) {
  std::optional<std::string_view> key =
      governance::ExtractApiKey(context.authorization, context.x_api_key);
  if (!key) {
    context.refusal =
        Error{ErrorCode::kUnauthorized,
              "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' or "
              "in the 'x-api-key' header.",
              ""};
    return {FilterStatus::kRespond};
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
  request.scope_budget = context.billing.scope_budget;
  request.scope_cap = context.billing.scope_cap;
  request.scope_whose = context.billing.scope_whose;
  request.now_unix = context.now_unix;
  request.now = std::chrono::duration_cast<governance::Nanos>(
      std::chrono::steady_clock::now().time_since_epoch());
  governance::AdmitResult result = governance::Admit(*context.snapshot, verifier_, request);
  context.principal = result.principal;
  context.rate_requests = result.requests;
  context.rate_tokens = result.tokens;
  if (result.refusal) {
    context.refusal = std::move(result.refusal);
    if (result.pending && may_wait) return {FilterStatus::kSuspend, result.pending_on};
    return {FilterStatus::kRespond};
  }
  context.refusal.reset();  // a pending refusal from an earlier try is not the answer
  context.admission = std::move(result.admission);
  return {FilterStatus::kContinue};
}

void GovernanceFilter::OnComplete(RequestContext& context) {
  governance::Admission& admission = context.admission;
  if (!admission.active()) return;
  if (context.cache_status == store::CacheStatus::kHit ||
      context.cache_status == store::CacheStatus::kCoalesced) {
    admission.Release();  // answered without an upstream call of its own: nothing to bill
    return;
  }
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
    CheckAlerts(admission);
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
  if (cost.micros > 0) CheckAlerts(admission);
}

void GovernanceFilter::CheckAlerts(const governance::Admission& admission) const {
  const governance::TenantEntry* tenant = admission.principal().tenant;
  if (alerts_ != nullptr && tenant != nullptr) alerts_->Check(*tenant);
}

}  // namespace turnpike::core
