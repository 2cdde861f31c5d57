#include "gateway/llm_handler.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>

#include "gateway/chat_flow.h"
#include "gateway/openai_errors.h"
#include "gateway/server_timing.h"
#include "pipeline/governance_filter.h"
#include "pipeline/route_filter.h"

namespace turnpike::gateway {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::chrono::milliseconds kLogFlushInterval{200};
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";
constexpr uint32_t kSeedMix = 0x9e3779b9u;
constexpr std::string_view kAdminPrefix = "/admin/";
constexpr std::string_view kOpenAi = "openai";
constexpr std::string_view kAnthropic = "anthropic";
constexpr std::string_view kMessagesPath = "/v1/messages";
constexpr std::string_view kOpenAiResponses = "openai_responses";
constexpr std::string_view kOpenAiCompletions = "openai_completions";
constexpr std::string_view kResponsesPath = "/v1/responses";
constexpr std::string_view kCompletionsPath = "/v1/completions";
constexpr std::string_view kEmbeddingsPath = "/v1/embeddings";

std::string_view PathOf(std::string_view target) {
  size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

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

upstream::CallOptions MakeCallOptions(const config::UpstreamConfig& c) {
  upstream::CallOptions o;
  o.connect_timeout = c.connect_timeout;
  o.first_byte_timeout = c.first_byte_timeout;
  o.idle_timeout = c.idle_timeout;
  o.read_buffer_bytes = c.stream_buffer_bytes;
  return o;
}

}  // namespace

LlmHandler::LlmHandler(const GatewayShared& shared, int worker_index, net::io_context& context)
    : shared_(shared),
      context_(context),
      pool_(context, shared.tls,
            upstream::PoolOptions{shared.config.upstream.pool_max_idle_per_origin,
                                  shared.config.upstream.pool_idle_ttl}),
      call_options_(MakeCallOptions(shared.config.upstream)),
      probe_(shared.routes->models().size()),
      rng_(static_cast<uint32_t>(worker_index + 1) * kSeedMix),
      models_body_(ModelsBody()),
      openai_(shared.providers != nullptr ? shared.providers->Find(kOpenAi) : nullptr),
      anthropic_(shared.providers != nullptr ? shared.providers->Find(kAnthropic) : nullptr),
      responses_(shared.providers != nullptr ? shared.providers->Find(kOpenAiResponses) : nullptr),
      completions_(shared.providers != nullptr ? shared.providers->Find(kOpenAiCompletions)
                                               : nullptr) {
  if (openai_ == nullptr) throw std::runtime_error("the provider registry has no openai dialect");
  if (shared.governance != nullptr) {
    Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
    if (!verifier.ok()) throw std::runtime_error(verifier.error().message);
    chain_.Add(std::make_unique<pipeline::GovernanceFilter>(
        shared.governance->cell(), shared.routes, std::move(verifier.value())));
    call_log_ = std::make_unique<store::CallLogBuffer>(shared.governance->thread(),
                                                       shared.governance->buffer_options());
    shared_.probes.call_logs.push_back(call_log_.get());
  }
  chain_.Add(std::make_unique<pipeline::RouteFilter>(shared.routes, shared.config.routing,
                                                     static_cast<uint32_t>(rng_())));
  shared_.probes.gateway.push_back(&probe_);
  shared_.probes.pools.push_back(&pool_.probe());
  if (shared_.access_log != nullptr) {
    access_log_ = std::make_unique<observability::AccessLogBuffer>(*shared_.access_log);
  }
  if (access_log_ || call_log_) {
    const auto every = call_log_
                           ? std::min(kLogFlushInterval, shared.config.call_log.flush_interval)
                           : kLogFlushInterval;
    net::co_spawn(context_, FlushLoop(access_log_.get(), call_log_.get(), every), net::detached);
  }
}

LlmHandler::~LlmHandler() {
  if (access_log_) access_log_->FlushNow();
  if (call_log_) call_log_->Flush(true);
}

void LlmHandler::Shutdown() {
  pool_.Shutdown();
  if (access_log_) access_log_->FlushNow();
  if (call_log_) call_log_->Flush(true);
}

std::string LlmHandler::ModelsBody() const {
  boost::json::array data;
  for (const auto& model : shared_.routes->models()) {
    data.push_back(boost::json::object{
        {"id", model.name}, {"object", "model"}, {"created", 0}, {"owned_by", "turnpike"}});
  }
  return boost::json::serialize(boost::json::object{{"object", "list"}, {"data", std::move(data)}});
}

std::string LlmHandler::RenderError(std::string_view target, const Error& error) const {
  if (shared_.admin != nullptr && target.starts_with(kAdminPrefix)) {
    return shared_.admin->RenderError(target, error);
  }
  if (anthropic_ != nullptr && PathOf(target) == kMessagesPath) {
    return anthropic_->RenderError(error).body;
  }
  return OpenAiErrorBody(error);
}

net::awaitable<void> LlmHandler::Respond(http::Exchange& exchange, pipeline::RequestContext& ctx,
                                         unsigned status, std::string_view content_type,
                                         std::string body) {
  ctx.status = static_cast<int>(status);
  if (shared_.config.server.server_timing) {
    exchange.response_headers().Add("Server-Timing",
                                    ServerTimingHeader(ctx.phases, pipeline::Clock::now()));
  }
  const bool ok = co_await exchange.Respond(status, content_type, std::move(body));
  if (!ok && ctx.status < 400) ctx.status = 499;
}

net::awaitable<void> LlmHandler::RespondError(http::Exchange& exchange,
                                              pipeline::RequestContext& ctx, const Error& error) {
  ctx.error = error.code;
  std::string body = OpenAiErrorBody(error);
  co_await Respond(exchange, ctx, static_cast<unsigned>(HttpStatus(error.code)), kJson,
                   std::move(body));
}

net::awaitable<void> LlmHandler::Handle(http::Exchange& exchange) {
  pipeline::RequestContext ctx;
  ctx.request_id = exchange.request_id();
  ctx.phases.received = exchange.started();
  ctx.bytes_in = exchange.request().body().size();
  const auto& request = exchange.request();
  const std::string_view path = PathOf(request.target());
  const bhttp::verb method = request.method();

  auto method_not_allowed = [&](std::string_view allow) {
    exchange.response_headers().Add("Allow", allow);
    return Error{ErrorCode::kMethodNotAllowed,
                 "Method " + std::string(request.method_string()) + " is not allowed on " +
                     std::string(path) + "; use " + std::string(allow) + ".",
                 ""};
  };

  RouteId route = RouteId::kOther;
  if (shared_.admin != nullptr && path.starts_with(kAdminPrefix)) {
    // The admin API answers for itself (its own error shape and log line).
    co_await shared_.admin->Handle(exchange);
    ctx.status = exchange.response_status();
    route = RouteId::kAdmin;
  } else if (path == "/v1/chat/completions") {
    route = RouteId::kChatCompletions;
    if (method != bhttp::verb::post) {
      const Error error = method_not_allowed("POST");
      co_await RespondError(exchange, ctx, error);
    } else {
      ChatFlow flow(*this, exchange, ctx, ClientApi::kOpenAiChat, *openai_);
      co_await flow.Run();
    }
  } else if (anthropic_ != nullptr && path == kMessagesPath) {
    route = RouteId::kMessages;
    ChatFlow flow(*this, exchange, ctx, ClientApi::kAnthropicMessages, *anthropic_);
    if (method != bhttp::verb::post) {
      const Error error = method_not_allowed("POST");
      co_await flow.Fail(error);
    } else {
      co_await flow.Run();
    }
  } else if (path == kEmbeddingsPath) {
    route = RouteId::kEmbeddings;
    ChatFlow flow(*this, exchange, ctx, ClientApi::kOpenAiEmbeddings, *openai_);
    if (method != bhttp::verb::post) {
      const Error error = method_not_allowed("POST");
      co_await flow.Fail(error);
    } else {
      co_await flow.Run();
    }
  } else if ((responses_ != nullptr && path == kResponsesPath) ||
             (completions_ != nullptr && path == kCompletionsPath)) {
    const bool responses = path == kResponsesPath;
    route = responses ? RouteId::kResponses : RouteId::kCompletions;
    ChatFlow flow(*this, exchange, ctx,
                  responses ? ClientApi::kOpenAiResponses : ClientApi::kOpenAiCompletions,
                  responses ? *responses_ : *completions_);
    if (method != bhttp::verb::post) {
      const Error error = method_not_allowed("POST");
      co_await flow.Fail(error);
    } else {
      co_await flow.Run();
    }
  } else if (path == "/v1/models" || path == "/healthz" || path == "/readyz" ||
             path == "/metrics") {
    route = path == "/v1/models" ? RouteId::kModels
            : path == "/metrics" ? RouteId::kMetrics
                                 : RouteId::kHealth;
    if (method != bhttp::verb::get && method != bhttp::verb::head) {
      const Error error = method_not_allowed("GET");
      co_await RespondError(exchange, ctx, error);
    } else if (!request.body().empty()) {
      const Error error{ErrorCode::kInvalidRequest, "A GET request must not have a body.", ""};
      co_await RespondError(exchange, ctx, error);
    } else {
      co_await AnswerGet(exchange, ctx, route, path);
    }
  } else {
    const Error error{
        ErrorCode::kNotFound,
        "Invalid URL (" + std::string(request.method_string()) + " " + std::string(path) + ")", ""};
    co_await RespondError(exchange, ctx, error);
  }
  Finish(exchange, ctx, route);
}

net::awaitable<void> LlmHandler::AnswerGet(http::Exchange& exchange, pipeline::RequestContext& ctx,
                                           RouteId route, std::string_view path) {
  // Bodies are named before co_await (GCC 12 mishandles temporaries in co_await expressions).
  std::string body;
  unsigned status = 200;
  std::string_view content_type = kJson;
  if (route == RouteId::kModels) {
    body = models_body_;
  } else if (route == RouteId::kMetrics) {
    body = RenderMetrics(shared_.probes);
    content_type = kPrometheusText;
  } else if (path == "/readyz" && exchange.draining()) {
    status = 503;
    body = R"({"status":"draining"})";
  } else {
    body = R"({"status":"ok"})";
  }
  co_await Respond(exchange, ctx, status, content_type, std::move(body));
}

void LlmHandler::Finish(http::Exchange& exchange, pipeline::RequestContext& ctx, RouteId route) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  pipeline::Phases& p = ctx.phases;
  p.done = pipeline::Clock::now();
  if (p.client_head == pipeline::Clock::time_point{}) p.client_head = exchange.head_sent_at();
  const size_t model_slot = ctx.model_entry ? ctx.model_entry->index : probe_.unknown_model_slot();
  probe_.CountRequest(route, model_slot, ctx.status);
  probe_.duration.Observe(p.done - p.received);

  // Gateway overhead: request read -> upstream request written, minus a new connection's
  // connect time; plus upstream head -> client head. Only for requests that went upstream.
  int64_t overhead_us = -1;
  if (p.upstream_sent != pipeline::Clock::time_point{}) {
    auto pre = p.upstream_sent - p.received;
    if (p.upstream_connected != pipeline::Clock::time_point{}) {
      pre -= p.upstream_connected - p.admitted;
    }
    auto post = p.client_head > p.upstream_head ? p.client_head - p.upstream_head
                                                : pipeline::Clock::duration{};
    overhead_us = duration_cast<microseconds>(pre + post).count();
    probe_.overhead.Observe(pre + post);
    if (p.upstream_head != pipeline::Clock::time_point{}) {
      probe_.upstream_ttfb.Observe(p.upstream_head - p.upstream_sent);
    }
  }
  if (p.first_token != pipeline::Clock::time_point{}) {
    probe_.ttft.Observe(p.first_token - p.received);
  }
  for (size_t i = 0; i < kPhaseCount; ++i) {
    const auto d = PhaseDuration(p, static_cast<Phase>(i));
    if (d >= pipeline::Clock::duration::zero()) probe_.phases[i].Observe(d);
  }
  if (ctx.status == 499) probe_.client_cancels.Add();
  if (call_log_ && ctx.principal.tenant != nullptr) LogCall(exchange, ctx, overhead_us);

  if (!access_log_) return;
  observability::AccessRecord r;
  r.time = std::chrono::system_clock::now() -
           std::chrono::duration_cast<std::chrono::system_clock::duration>(p.done - p.received);
  r.request_id = ctx.request_id;
  r.method = exchange.request().method_string();
  r.path = PathOf(exchange.request().target());
  r.status = ctx.status;
  r.model = ctx.model;
  r.deployment = ctx.deployment ? std::string_view(ctx.deployment->name) : std::string_view{};
  r.upstream_status = ctx.upstream_status;
  r.attempts = ctx.attempts_made;
  r.stream = ctx.stream;
  r.bytes_in = ctx.bytes_in;
  r.bytes_out = exchange.bytes_sent();
  r.total_ms = std::chrono::duration<double, std::milli>(p.done - p.received).count();
  r.overhead_us = overhead_us;
  r.upstream_ttfb_ms =
      p.upstream_head != pipeline::Clock::time_point{}
          ? std::chrono::duration<double, std::milli>(p.upstream_head - p.upstream_sent).count()
          : -1;
  r.ttft_ms = p.first_token != pipeline::Clock::time_point{}
                  ? std::chrono::duration<double, std::milli>(p.first_token - p.received).count()
                  : -1;
  r.prompt_tokens = ctx.usage.prompt_tokens;
  r.completion_tokens = ctx.usage.completion_tokens;
  r.cached_tokens = ctx.usage.cached_tokens;
  r.finish_reason = ctx.finish_reason;
  r.error = ctx.error ? ErrorCodeName(*ctx.error) : std::string_view{};
  const std::string client = exchange.client_address();
  r.client = client;
  access_log_->Append(r);
}

}  // namespace turnpike::gateway

namespace turnpike::gateway {

void LlmHandler::LogCall(const http::Exchange& exchange, const pipeline::RequestContext& ctx,
                         int64_t overhead_us) {
  const pipeline::Phases& p = ctx.phases;
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
  if (ctx.deployment != nullptr) r.deployment = ctx.deployment->name;
  r.status = ctx.status;
  if (ctx.error) r.error = ErrorCodeName(*ctx.error);
  r.prompt_tokens = std::max<int64_t>(ctx.usage.prompt_tokens, 0);
  r.completion_tokens = std::max<int64_t>(ctx.usage.completion_tokens, 0);
  r.cached_tokens = std::max<int64_t>(ctx.usage.cached_tokens, 0);
  r.cache_creation_tokens = std::max<int64_t>(ctx.usage.cache_creation_tokens, 0);
  r.cost_micros = ctx.cost_micros;
  r.estimated = ctx.usage_estimated;
  r.unpriced = ctx.unpriced;
  r.ttft_ms = p.first_token != pipeline::Clock::time_point{}
                  ? std::chrono::duration<double, std::milli>(p.first_token - p.received).count()
                  : -1;
  r.total_ms = std::chrono::duration<double, std::milli>(p.done - p.received).count();
  r.overhead_us = overhead_us;
  r.month = governance::MonthOf(ctx.now_unix);
  if (principal.tenant->tenant.log_bodies) r.request_body = exchange.request().body();
  call_log_->Add(r);
}

}  // namespace turnpike::gateway
