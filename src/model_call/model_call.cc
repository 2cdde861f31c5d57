#include "model_call/model_call.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "providers/openai/stream_codec.h"
#include "stream/chat_accumulator.h"

namespace turnpike::model_call {

upstream::CallOptions CallOptionsFrom(const config::UpstreamConfig& c) {
  upstream::CallOptions o;
  o.connect_timeout = c.connect_timeout;
  o.first_byte_timeout = c.first_byte_timeout;
  o.idle_timeout = c.idle_timeout;
  o.read_buffer_bytes = c.stream_buffer_bytes;
  return o;
}

namespace net = boost::asio;

namespace {
constexpr size_t kMaxRetryableBody = 64 * 1024;
constexpr std::string_view kJson = "application/json";

bool IsRetryable(unsigned status) { return status == 429 || status >= 500; }

bool ContentTypeIs(std::string_view value, std::string_view type) {
  return value.size() >= type.size() && value.substr(0, type.size()) == type;
}

int64_t OutputBytes(const providers::Response& response) {
  int64_t bytes = static_cast<int64_t>(response.text.size());
  for (const providers::ToolCall& call : response.tool_calls) {
    bytes += static_cast<int64_t>(call.name.size() + call.arguments.size());
  }
  return bytes;
}

core::Usage UsageOf(const providers::TokenUsage& u) {
  return {u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_creation_tokens,
          u.reasoning_tokens};
}

// Ends the attempt in flight (its connection back to the pool, or closed) when Run returns,
// whichever way.
class AttemptScope {
 public:
  AttemptScope(std::optional<upstream::Call>& attempt, std::optional<StreamPump>& pump)
      : attempt_(attempt), pump_(pump) {}
  ~AttemptScope() {
    pump_.reset();
    attempt_.reset();
  }
  AttemptScope(const AttemptScope&) = delete;
  AttemptScope& operator=(const AttemptScope&) = delete;

 private:
  std::optional<upstream::Call>& attempt_;
  std::optional<StreamPump>& pump_;
};
}  // namespace

void ModelCall::Abandon() {
  abandoned_ = true;
  if (ServesClient()) return;  // another client is still served: keep reading for it
  if (timer_ != nullptr) timer_->cancel();
  if (attempt_) attempt_->Cancel();
}

bool ModelCall::ServesClient() const {
  for (const AnswerSink* sink : sinks_) {
    // The leader's own sink stops serving once its client left.
    if (sink->serves_client() && !(abandoned_ && sink == leader_)) return true;
  }
  return false;
}

CallEnd ModelCall::Abandoned() {
  ctx_.status = 499;
  ctx_.error = ErrorCode::kUpstreamUnavailable;
  return CallEnd::kAbandoned;
}

CallEnd ModelCall::Failed(const Error& error) {
  failure_.error = error;
  failure_.answer.reset();
  return CallEnd::kFailed;
}

net::awaitable<bool> ModelCall::Sleep(std::chrono::milliseconds delay) {
  if (delay.count() <= 0) co_return !abandoned_;
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(delay);
  timer_ = &timer;
  [[maybe_unused]] auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
  timer_ = nullptr;
  co_return !abandoned_;
}

net::awaitable<CallEnd> ModelCall::Run(const CallRequest& request) {
  const ModelEntry& model = *request.model;
  const config::RoutingConfig& routing = deps_.routing;
  int made = 0;  // attempts made so far
  AttemptScope scope(attempt_, pump_);
  for (int a = 0; a < request.plan->count; ++a) {
    const size_t index = request.plan->order[a];
    const DeploymentTarget& target = model.deployments[index];
    if (!request.source->Accepts(target)) continue;
    if (made > 0) {
      deps_.retries.Add();
      std::chrono::milliseconds delay =
          Backoff(made, routing.backoff_base, routing.backoff_max, deps_.rng);
      const std::optional<CallFailure::Passed>& last = failure_.answer;
      if (last && last->retry_after_seconds >= 0) {
        const std::chrono::milliseconds retry_after{last->retry_after_seconds * 1000};
        if (retry_after <= routing.max_retry_after) {
          delay = std::max(delay, retry_after);
        } else if (last->deployment == index) {
          break;  // the same deployment asked for a longer pause than we may wait
        }
      }
      if (!co_await Sleep(delay)) co_return Abandoned();
    }
    target_ = &target;
    ctx_.deployment = target.name;
    ctx_.attempts_made = ++made;

    const bool identity = request.source->IsIdentity(target);
    const providers::Provider* dialect = identity ? request.client : target.dialect;
    Result<std::string> body = request.source->Body(target, *dialect, identity);
    if (!body.ok()) co_return Failed(body.error());
    upstream::OutgoingRequest out;
    out.target = request.source->Path(target, request.stream);
    out.body = body.value();
    const std::string_view stream_type = providers::StreamContentType(dialect->stream_framing());
    out.accept = request.stream ? stream_type : kJson;
    out.authorization = target.authorization;
    out.request_id = ctx_.request_id;
    out.extra_headers = target.extra_headers;
    const governance::TenantEntry* tenant = ctx_.principal.tenant;
    const governance::ProviderKey* own =
        tenant == nullptr ? nullptr : tenant->FindProviderKey(target.id);
    if (own != nullptr) {
      own_endpoint_ = std::make_unique<providers::UpstreamEndpoint>(
          target.dialect->Endpoint({target.origin.base_path, target.upstream_model, own->api_key}));
      out.authorization = own_endpoint_->authorization;
      out.extra_headers = own_endpoint_->extra_headers;
    }

    if (ctx_.trace.on) TraceAttempt(target, out);

    upstream::Call& call = attempt_.emplace(deps_.pool, target.origin, deps_.call_options);
    if (abandoned_) co_return Abandoned();
    Status started = co_await call.Start(out);
    ctx_.phases.upstream_connected =
        call.reused() ? core::Clock::time_point{} : call.connected_at();
    ctx_.phases.upstream_sent = call.request_sent_at();
    ctx_.phases.upstream_head = call.head_received_at();
    if (abandoned_) co_return Abandoned();
    if (!started.ok()) {
      if (ctx_.trace.on) ctx_.trace.EndAttempt(core::Clock::now(), -1);
      failure_.error = started.error();
      failure_.answer.reset();
      attempt_.reset();
      continue;
    }
    const unsigned status = call.status();
    ctx_.upstream_status = static_cast<int>(status);
    if (observability::AttemptSpan* span = ctx_.trace.recording()) {
      span->status = static_cast<int>(status);
    }
    if (IsRetryable(status)) {
      co_await KeepRetryable(call, status, index, identity ? nullptr : dialect);
      if (abandoned_) co_return Abandoned();
      attempt_.reset();
      if (ctx_.trace.on) ctx_.trace.EndAttempt(core::Clock::now(), static_cast<int>(status));
      continue;
    }
    const bool stream =
        request.stream && status / 100 == 2 && ContentTypeIs(call.content_type(), stream_type);
    if (!stream) {
      // In this frame, not a nested coroutine: a whole answer is most requests. A body that came
      // with its head is taken without ReadAll's coroutine.
      std::optional<Result<std::string>> read = call.ReadAllBuffered(deps_.max_response_bytes);
      if (!read) {
        Result<std::string> all = co_await call.ReadAll(deps_.max_response_bytes);
        read.emplace(std::move(all));
      }
      if (abandoned_) co_return Abandoned();
      if (!read->ok()) co_return Failed(read->error());
      whole_body_ = std::move(read->value());
      Status whole = ReadWhole(request, call, *dialect, identity);
      if (!whole.ok()) co_return Failed(whole.error());
      // Complete once read: its head, body and end, then one Flush (answer_sink.h).
      for (AnswerSink* sink : sinks_) sink->OnStart(whole_start_);
      for (AnswerSink* sink : sinks_) sink->OnWhole(whole_);
      for (AnswerSink* sink : sinks_) sink->OnEnd(nullptr);
      co_await FlushAll();
      co_return CallEnd::kDelivered;
    }
    StreamPump& pump = pump_.emplace(*this, call, *dialect, identity);
    co_await pump.Run();
    co_return CallEnd::kDelivered;
  }
  if (!failure_.error && !failure_.answer) {
    failure_.error = Error{ErrorCode::kUpstreamUnavailable, "No upstream attempt was made.", ""};
  }
  co_return CallEnd::kFailed;
}

net::awaitable<void> ModelCall::KeepRetryable(upstream::Call& call, unsigned status, size_t index,
                                              const providers::Provider* translated) {
  Result<std::string> body = co_await call.ReadAll(kMaxRetryableBody);
  if (abandoned_) co_return;
  failure_.answer = CallFailure::Passed{status,
                                        std::string(call.content_type()),
                                        body.ok() ? std::move(body.value()) : "",
                                        ParseRetryAfterSeconds(call.header("retry-after")),
                                        index,
                                        translated};
  failure_.error.reset();
}

void ModelCall::TraceAttempt(const DeploymentTarget& target, upstream::OutgoingRequest& out) {
  out.traceparent = ctx_.trace.BeginAttempt(core::Clock::now());
  observability::AttemptSpan* span = ctx_.trace.recording();
  if (span == nullptr) return;
  span->deployment = target.name;
  span->provider = target.provider;
  span->upstream_model = target.upstream_model;
  span->server_address = target.origin.host;
  span->server_port = target.origin.port;
}

Status ModelCall::ReadWhole(const CallRequest& request, const upstream::Call& call,
                            const providers::Provider& dialect, bool identity) {
  const unsigned status = call.status();
  AnswerStart& start = whole_start_;
  start.identity = identity;
  start.status = status;
  start.dialect = dialect.name();
  start.content_type = call.content_type();
  if (start.content_type.empty()) start.content_type = kJson;
  start.upstream_model = target_->upstream_model;
  whole_ = WholeAnswer{status, start.content_type, whole_body_, nullptr, &whole_body_};
  if (request.purpose != Purpose::kChat) return Ok{};
  if (status / 100 != 2 && !identity) {
    return dialect.ParseError(static_cast<int>(status), whole_body_);
  }
  if (status / 100 != 2) return Ok{};
  if (identity) {
    ReadIdentityUsage(dialect, whole_body_);
    return Ok{};
  }
  Result<providers::Response> response = dialect.ParseResponse(whole_body_);
  if (!response.ok()) return response.error();
  providers::Response& parsed = parsed_.emplace(std::move(response.value()));
  // Cohere's answers name no model: the client is told the deployment's.
  if (parsed.model.empty()) parsed.model = target_->upstream_model;
  whole_ = WholeAnswer{200, kJson, {}, &parsed, nullptr};
  start.status = 200;
  ctx_.usage = UsageOf(parsed.usage);
  ctx_.output_bytes = OutputBytes(parsed);
  ctx_.finish_reason = providers::openai::FinishReasonName(parsed.finish);
  return Ok{};
}

void ModelCall::ReadIdentityUsage(const providers::Provider& dialect, std::string_view body) {
  // The OpenAI chat wire: one scan for the usage object. Other dialects: their own parser.
  if (dialect.name() == "openai") {
    const stream::Usage usage = stream::ExtractUsage(body);
    ctx_.usage = {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, -1,
                  usage.reasoning_tokens};
    ctx_.output_bytes = static_cast<int64_t>(body.size());
    return;
  }
  Result<providers::Response> parsed = dialect.ParseResponse(body);
  if (!parsed.ok()) return;  // the bytes are the upstream's own: the client judges them
  ctx_.usage = UsageOf(parsed.value().usage);
  ctx_.output_bytes = OutputBytes(parsed.value());
  ctx_.finish_reason = providers::openai::FinishReasonName(parsed.value().finish);
}

net::awaitable<void> ModelCall::FlushAll() {
  for (size_t i = 0; i < sinks_.size();) {
    AnswerSink* sink = sinks_[i];
    const std::optional<bool> at_once = sink->FlushAtOnce();
    bool kept = at_once.value_or(false);
    if (!at_once.has_value()) {
      net::awaitable<bool> step = sink->Flush();
      const bool flushed = co_await std::move(step);
      kept = flushed;
    }
    if (kept) {
      ++i;
      continue;
    }
    Drop(i);
  }
}

void ModelCall::Drop(size_t i) {
  if (sinks_[i] == leader_) abandoned_ = true;  // the leader's own consumer left
  sinks_.erase(sinks_.begin() + static_cast<std::ptrdiff_t>(i));
}

}  // namespace turnpike::model_call
