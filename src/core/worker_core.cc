#include "core/worker_core.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <stdexcept>

#include "common/clock.h"
#include "core/request_trace.h"
#include "core/server_timing.h"
#include "governance/authenticate.h"

namespace turnpike::core {
namespace net = boost::asio;

namespace {
constexpr std::chrono::milliseconds kLogFlushInterval{200};

// Flushes the worker's access-log and call-log buffers periodically, so a quiet worker's
// lines still reach their sinks. The timer lives on this frame, which the worker's event loop
// owns.
net::awaitable<void> FlushLoop(observability::AccessLogBuffer* access_log,
                               store::CallLogBuffer* call_log, std::chrono::milliseconds every) {
  net::steady_timer timer(co_await net::this_coro::executor);
  for (;;) {
    timer.expires_after(every);
    auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    if (ec) co_return;
    if (access_log != nullptr) access_log->FlushNow();
    if (call_log != nullptr) call_log->Flush();
  }
}

int64_t UnixMillis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

WorkerCore::WorkerCore(const CoreShared& shared, net::io_context& context)
    : shared_(shared), probe_(shared.router.labels().size(), shared.model_count) {
  if (shared.tls != nullptr) {
    pool_.emplace(context, *shared.tls, shared.pool_options);
    shared.probes.pools.push_back(&pool_->probe());
  }
  if (shared.call_log != nullptr) {
    call_log_ = std::make_unique<store::CallLogBuffer>(*shared.call_log, shared.call_log_options);
    shared.probes.call_logs.push_back(call_log_.get());
  }
  shared.probes.requests.push_back(&probe_);
  if (shared.access_log != nullptr) {
    access_log_ = std::make_unique<observability::AccessLogBuffer>(*shared.access_log);
  }
  if (access_log_ || call_log_) {
    const auto every =
        call_log_ ? std::min(kLogFlushInterval, shared.call_log_flush) : kLogFlushInterval;
    net::co_spawn(context, FlushLoop(access_log_.get(), call_log_.get(), every), net::detached);
  }
}

WorkerCore::~WorkerCore() {
  if (access_log_) access_log_->FlushNow();
  if (call_log_) call_log_->Flush(true);
}

Door* WorkerCore::HandOffTarget(std::string_view key) const {
  const int door = shared_.handoffs.Find(key);
  if (door < 0 || doors_ == nullptr) return nullptr;
  return (*doors_)[static_cast<size_t>(door)].get();
}

void WorkerCore::Shutdown() {
  if (pool_) pool_->Shutdown();
  if (access_log_) access_log_->FlushNow();
  if (call_log_) call_log_->Flush(true);
}

std::unique_ptr<Filter> WorkerCore::MakeGovernanceFilter() const {
  if (shared_.governance == nullptr) return nullptr;
  Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
  if (!verifier.ok()) throw std::runtime_error(verifier.error().message);
  return std::make_unique<GovernanceFilter>(*shared_.governance, std::move(verifier.value()),
                                            shared_.refresh, shared_.refill_wait,
                                            shared_.budget_alerts);
}

Result<governance::Principal> WorkerCore::Authenticate(RequestContext& ctx) {
  if (shared_.governance == nullptr) {
    return Error{ErrorCode::kUnavailable, "This route needs governance on (a tenant's key).", ""};
  }
  std::optional<std::string_view> key = governance::ExtractApiKey(ctx.authorization, ctx.x_api_key);
  if (!key) {
    return Error{ErrorCode::kUnauthorized,
                 "You didn't provide an API key. Send it as 'Authorization: Bearer <key>' or in "
                 "the 'x-api-key' header.",
                 ""};
  }
  if (!reader_) reader_.emplace(*shared_.governance);
  if (!verifier_) {
    Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
    if (!verifier.ok()) return verifier.error();
    verifier_.emplace(std::move(verifier.value()));
  }
  ctx.snapshot = reader_->Current();
  ctx.now_unix = UnixSeconds();
  return governance::Authenticate(*ctx.snapshot, *key, ctx.now_unix, *verifier_);
}

void WorkerCore::Start(http::Exchange& exchange, const RouteMatch& match,
                       RequestContext& ctx) const {
  ctx.request_id = exchange.request_id();
  ctx.response_headers = &exchange.response_headers();
  ctx.phases.received = exchange.started();
  ctx.bytes_in = exchange.request().body().size();
  ctx.route_slot = match.slot;
  if (shared_.tracer != nullptr) BeginTrace(*shared_.tracer, exchange, ctx);
}

void WorkerCore::ReadCredentials(const http::Exchange& exchange, RequestContext& ctx) {
  const auto& request = exchange.request();
  ctx.authorization = http::FieldValue(request, boost::beast::http::field::authorization);
  ctx.x_api_key = http::FieldValue(request, "x-api-key");
}

net::awaitable<void> WorkerCore::Respond(http::Exchange& exchange, RequestContext& ctx,
                                         unsigned status, std::string_view content_type,
                                         std::string body) {
  ctx.status = static_cast<int>(status);
  AddServerTiming(exchange, ctx);
  // Every door's 503 (a store past fleet.outage_deadline, a shared ledger or Qdrant down)
  // says when to try again, unless its handler said so already.
  if (status == 503 && exchange.response_headers().Find("retry-after").empty()) {
    exchange.response_headers().Add("Retry-After", int64_t{1});
  }
  const bool ok = co_await exchange.Respond(status, content_type, std::move(body));
  if (!ok && ctx.status < 400) ctx.status = 499;
}

void WorkerCore::AddServerTiming(http::Exchange& exchange, const RequestContext& ctx) const {
  if (!shared_.server_timing) return;
  exchange.response_headers().Add("Server-Timing", ServerTimingHeader(ctx.phases, Clock::now()));
}

net::awaitable<void> WorkerCore::AnswerFromChain(http::Exchange& exchange, RequestContext& ctx,
                                                 const RenderError& render_error,
                                                 std::string_view error_content_type) {
  const bool head = exchange.request().method() == boost::beast::http::verb::head;
  if (!ctx.answer) {
    const Error refusal = ctx.refusal.value_or(
        Error{ErrorCode::kInternal, "A filter refused the request without a reason.", ""});
    ErrorReply reply = render_error(refusal);
    ctx.error = refusal.code;
    if (head) reply.body.clear();
    co_await Respond(exchange, ctx, static_cast<unsigned>(reply.status), error_content_type,
                     std::move(reply.body));
    co_return;
  }
  Answer& answer = *ctx.answer;
  if (!answer.header_lines.empty()) exchange.response_headers().AddLines(answer.header_lines);
  if (answer.stream == nullptr) {
    if (head) answer.body.clear();
    co_await Respond(exchange, ctx, answer.status, answer.content_type, std::move(answer.body));
    co_return;
  }
  ctx.status = static_cast<int>(answer.status);
  AddServerTiming(exchange, ctx);
  bool ok = co_await exchange.StartStream(answer.status, answer.content_type);
  if (ok && !head) ok = co_await answer.stream->WriteBody(exchange, ctx);
  if (ok) ok = co_await exchange.EndStream();
  if (!ok && ctx.status < 400) ctx.status = 499;
}

net::awaitable<void> WorkerCore::RespondError(http::Exchange& exchange, RequestContext& ctx,
                                              ErrorCode code, ErrorReply reply) {
  ctx.error = code;
  co_await Respond(exchange, ctx, static_cast<unsigned>(reply.status), kJsonContentType,
                   std::move(reply.body));
}

OwnedExchangeRecord OwnedExchangeRecord::Own(const http::Exchange& exchange) {
  OwnedExchangeRecord r;
  r.head_sent_at = exchange.head_sent_at();
  r.method = std::string(exchange.request().method_string());
  r.path = std::string(exchange.path());
  r.request_body = exchange.request().body();
  r.client = exchange.client_address();
  r.request_id = std::string(exchange.request_id());
  r.bytes_sent = exchange.bytes_sent();
  return r;
}

void WorkerCore::Finish(const http::Exchange& exchange, RequestContext& ctx) {
  // The client's address is a new string: read only when the access log needs it.
  const std::string client = access_log_ ? exchange.client_address() : std::string();
  const ExchangeRecord record{exchange.head_sent_at(),
                              exchange.request().method_string(),
                              exchange.path(),
                              exchange.request().body(),
                              client,
                              exchange.bytes_sent()};
  Finish(record, ctx);
}

void WorkerCore::Finish(const ExchangeRecord& exchange, RequestContext& ctx) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  Phases& p = ctx.phases;
  p.done = Clock::now();
  if (p.client_head == Clock::time_point{}) p.client_head = exchange.head_sent_at;
  const size_t model_slot =
      ctx.model_slot != kUnknownModel ? ctx.model_slot : probe_.unknown_model_slot();
  probe_.CountRequest(ctx.route_slot, model_slot, ctx.status);
  probe_.duration.Observe(p.done - p.received);

  // Gateway overhead: request read -> upstream request written, minus a new connection's
  // connect time; plus upstream head -> client head. Only for requests that went upstream.
  int64_t overhead_us = -1;
  if (p.upstream_sent != Clock::time_point{}) {
    auto pre = p.upstream_sent - p.received;
    if (p.upstream_connected != Clock::time_point{}) pre -= p.upstream_connected - p.admitted;
    auto post =
        p.client_head > p.upstream_head ? p.client_head - p.upstream_head : Clock::duration{};
    overhead_us = duration_cast<microseconds>(pre + post).count();
    probe_.overhead.Observe(pre + post);
    if (p.upstream_head != Clock::time_point{}) {
      probe_.upstream_ttfb.Observe(p.upstream_head - p.upstream_sent);
    }
  }
  if (p.first_token != Clock::time_point{}) probe_.ttft.Observe(p.first_token - p.received);
  for (size_t i = 0; i < kPhaseCount; ++i) {
    const auto d = PhaseDuration(p, static_cast<Phase>(i));
    if (d >= Clock::duration::zero()) probe_.phases[i].Observe(d);
  }
  if (ctx.status == 499) probe_.client_cancels.Add();
  if (call_log_ && ctx.principal.tenant != nullptr) LogCall(exchange, ctx, overhead_us);
  if (shared_.tracer != nullptr) RecordTrace(*shared_.tracer, exchange, ctx);

  if (!access_log_) return;
  observability::AccessRecord r;
  r.time = std::chrono::system_clock::now() -
           std::chrono::duration_cast<std::chrono::system_clock::duration>(p.done - p.received);
  r.request_id = ctx.request_id;
  r.method = exchange.method;
  r.path = exchange.path;
  r.status = ctx.status;
  r.model = ctx.model;
  r.deployment = ctx.deployment;
  r.upstream_status = ctx.upstream_status;
  r.attempts = ctx.attempts_made;
  r.stream = ctx.stream;
  r.bytes_in = ctx.bytes_in;
  r.bytes_out = exchange.bytes_sent;
  r.total_ms = std::chrono::duration<double, std::milli>(p.done - p.received).count();
  r.overhead_us = overhead_us;
  r.upstream_ttfb_ms =
      p.upstream_head != Clock::time_point{}
          ? std::chrono::duration<double, std::milli>(p.upstream_head - p.upstream_sent).count()
          : -1;
  r.ttft_ms = p.first_token != Clock::time_point{}
                  ? std::chrono::duration<double, std::milli>(p.first_token - p.received).count()
                  : -1;
  r.prompt_tokens = ctx.usage.prompt_tokens;
  r.completion_tokens = ctx.usage.completion_tokens;
  r.cached_tokens = ctx.usage.cached_tokens;
  r.finish_reason = ctx.finish_reason;
  r.error = ctx.error ? ErrorCodeName(*ctx.error) : std::string_view{};
  r.client = exchange.client;
  access_log_->Append(r);
}

void WorkerCore::LogCall(const ExchangeRecord& exchange, const RequestContext& ctx,
                         int64_t overhead_us) {
  const Phases& p = ctx.phases;
  const governance::Principal& principal = ctx.principal;
  // Views of the request's texts; the buffer copies them into its batch (call_record.h).
  store::CallRecordView r;
  const auto now = std::chrono::system_clock::now();
  r.time_ms = UnixMillis(now) -
              std::chrono::duration_cast<std::chrono::milliseconds>(p.done - p.received).count();
  r.request_id = ctx.request_id;
  r.tenant_id = principal.tenant->tenant.id;
  r.key_id = principal.key->key.public_id;
  r.model = ctx.model;
  r.deployment = ctx.deployment;
  r.status = ctx.status;
  if (ctx.error) r.error = ErrorCodeName(*ctx.error);
  r.prompt_tokens = std::max<int64_t>(ctx.usage.prompt_tokens, 0);
  r.completion_tokens = std::max<int64_t>(ctx.usage.completion_tokens, 0);
  r.cached_tokens = std::max<int64_t>(ctx.usage.cached_tokens, 0);
  r.cache_creation_tokens = std::max<int64_t>(ctx.usage.cache_creation_tokens, 0);
  r.reasoning_tokens = std::max<int64_t>(ctx.usage.reasoning_tokens, 0);
  r.cost_micros = ctx.cost_micros;
  r.estimated = ctx.usage_estimated;
  r.unpriced = ctx.unpriced;
  r.ttft_ms = p.first_token != Clock::time_point{}
                  ? std::chrono::duration<double, std::milli>(p.first_token - p.received).count()
                  : -1;
  r.total_ms = std::chrono::duration<double, std::milli>(p.done - p.received).count();
  r.overhead_us = overhead_us;
  r.month = governance::MonthOf(ctx.now_unix);
  r.cache_status = ctx.cache_status;
  r.agent_id = ctx.turn.agent_id;
  r.agent_version = ctx.turn.agent_version;
  r.response_id = ctx.turn.response_id;
  r.guard_replacements = ctx.turn.guard_replacements;
  if (principal.tenant->tenant.log_bodies) r.request_body = exchange.request_body;
  call_log_->Add(r);
}

}  // namespace turnpike::core
