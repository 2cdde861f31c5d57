// A model call any door can make: given a model's route, a planned order of attempts and what
// each attempt sends (AttemptSource), it runs the attempts with failover, backoff and
// Retry-After, builds each body, and delivers the chosen upstream's answer to its sinks
// (answer_sink.h): the client's encoder, a recorder, a guard, coalesced followers. A door never
// writes its own attempt loop (Envoy's AsyncClient and router retry state are the model).
//
//   ModelCall call(deps, ctx);
//   call.AddSink(client_sink);            // one or more; in delivery order
//   exchange.WatchClient([&call] { call.Abandon(); });
//   CallEnd end = co_await call.Run(request);
//   if (end == CallEnd::kFailed) ...render call.failure() in the door's dialect...
//
// Provider keys: an attempt sends the deployment's configured key, or the tenant's own key for
// that deployment when the snapshot holds one (governance::TenantEntry::FindProviderKey: the
// context's principal; no store access).
//
// Attempts: the plan's deployments in order (a source may skip some: Accepts). A connect error,
// a timeout before the response head, a 5xx or a 429 moves on to the next attempt after the
// backoff (routing.backoff_base/max, jittered), or the upstream's Retry-After when it is longer
// and within routing.max_retry_after; a Retry-After beyond that from the same deployment ends
// the attempts. Nothing reached any sink before the answering attempt is chosen, so failover
// never shows. The last retryable answer, or the last error, is the failure when every attempt
// failed.
//
// Delivery, per answering attempt (the source decides identity per deployment):
//   stream (2xx with the dialect's stream content type): the upstream's frames (SSE events or
//     NDJSON lines) one read at a time: identity frames untouched with the tap's kind, or the
//     upstream's dialect decoded into pivot events; an upstream failure mid-stream, or a stream
//     that ends without its final event, ends the answer with that error (OnEnd)
//   whole, Purpose::kChat: a 2xx answer parsed by the upstream's dialect (translated), or its
//     bytes (identity; a non-2xx identity answer too, passed on whole); a translated non-2xx
//     answer or an unreadable translated answer is the call's failure, not an answer
//   whole, Purpose::kRaw: the upstream's bytes and status as they came (embeddings and token
//     counts, whose consumer reads them)
//
// What a call reports reaches the request context the same way for every consumer: the
// deployment, attempts made, upstream status and phase timings, usage (reasoning included),
// the first token's time, output bytes, the finish reason, and the error that cut an answer.
// The sinks report only what is theirs (the client's status).
//
// Back-pressure and leaving: the next upstream read waits for every sink's Flush. Abandon()
// (the leader's client left) cancels a wait and the upstream exchange at once unless a sink
// that serves another client remains (a fan-out with live followers), in which case the call
// keeps reading for them. A sink whose Flush says false is dropped; once no sink serves a
// client the upstream exchange is cancelled and the context says 499.
//
// Ownership: one object per call, in the caller's request state; it borrows the deps (the
// worker's pool and options), the context, the sinks and the source, all of which outlive Run.
// It holds the attempt in flight (its upstream exchange, with a 2 KiB header arena) and a
// stream's pump, ~4 KiB: keep it where the request's state already is (the LLM door keeps its
// context and flow in one block of common/block_cache.h), not on a coroutine's frame, which
// the executable's per-thread cache serves only up to 1 KiB (common/small_blocks.h; a bigger
// frame is a malloc and a free per call; Run's own frame is kept under that size). Single-threaded:
// the worker that owns the context.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/small_vector.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/request_context.h"
#include "model_call/answer_sink.h"
#include "model_call/route_table.h"
#include "model_call/stream_pump.h"
#include "observability/metrics.h"
#include "upstream/call.h"
#include "upstream/pool.h"

namespace turnpike::model_call {

// What each attempt sends. The LLM door's flow implements it for its client APIs; PivotSource
// (pivot_source.h) serves a caller that holds only a pivot request.
class AttemptSource {
 public:
  virtual ~AttemptSource() = default;
  // Whether an attempt may go to `target` at all (a token count only goes where the client's
  // dialect is spoken).
  virtual bool Accepts(const DeploymentTarget& target) const { return true; }
  // Whether `target` gets the client's own bytes (same dialect, and its API serves the call).
  virtual bool IsIdentity(const DeploymentTarget& target) const = 0;
  // The body for one attempt; an error ends the call (kFailed) with it.
  virtual Result<std::string> Body(const DeploymentTarget& target,
                                   const providers::Provider& dialect, bool identity) = 0;
  // The upstream request target.
  virtual std::string_view Path(const DeploymentTarget& target, bool stream) const {
    return stream ? target.stream_path : target.chat_path;
  }
};

enum class Purpose : uint8_t {
  kChat,  // a chat answer (see the top of this file)
  kRaw,   // a whole answer delivered as it came (embeddings, token counts)
};

struct CallRequest {
  const ModelEntry* model = nullptr;  // required
  const AttemptPlan* plan = nullptr;  // required: the deployments to try, in order
  AttemptSource* source = nullptr;    // required
  // The dialect identity answers are in (the client's); translated answers need none.
  const providers::Provider* client = nullptr;
  Purpose purpose = Purpose::kChat;
  bool stream = false;
};

// What a call borrows from its worker; all of it outlives the call.
struct CallDeps {
  upstream::Pool& pool;
  const upstream::CallOptions& call_options;
  const config::RoutingConfig& routing;
  std::chrono::milliseconds keepalive{0};  // a stream's silence before Idle(); 0: never
  size_t max_response_bytes = 0;           // a whole answer's bound (upstream.max_response_bytes)
  observability::Counter& retries;
  std::minstd_rand& rng;  // backoff jitter
};

// A call's upstream timeouts and read buffer, from config `upstream`.
upstream::CallOptions CallOptionsFrom(const config::UpstreamConfig& upstream);

// Why no answer was delivered: an error, or the last upstream answer that asked for a retry.
struct CallFailure {
  struct Passed {
    unsigned status = 0;
    std::string content_type;
    std::string body;
    int64_t retry_after_seconds = -1;
    size_t deployment = 0;
    const providers::Provider* translate_from = nullptr;  // set: the body is in this dialect
  };
  std::optional<Error> error;
  std::optional<Passed> answer;
};

enum class CallEnd : uint8_t {
  kDelivered,  // the sinks got an answer (OnStart ... OnEnd)
  kFailed,     // no answer: failure() says why; no sink was called
  kAbandoned,  // the client left before an answer started (the context says 499)
};

class ModelCall {
 public:
  static constexpr size_t kInlineSinks = 4;

  ModelCall(const CallDeps& deps, core::RequestContext& ctx) : deps_(deps), ctx_(ctx) {}
  ModelCall(const ModelCall&) = delete;
  ModelCall& operator=(const ModelCall&) = delete;

  // Before Run.
  // Before Run. The first sink added is the leader's: the consumer whose client started the
  // call (Abandon speaks for it).
  void AddSink(AnswerSink& sink) {
    if (sinks_.empty()) leader_ = &sink;
    sinks_.push_back(&sink);
  }

  boost::asio::awaitable<CallEnd> Run(const CallRequest& request);

  // The consumer that started the call left (see the top of this file). Any time.
  void Abandon();

  const CallFailure& failure() const { return failure_; }
  // The deployment of the current (last) attempt; nullptr before the first.
  const DeploymentTarget* target() const { return target_; }

 private:
  // Waits `delay` unless the call is abandoned first; false if it was.
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay);
  // A retryable status's answer (its first 64 KiB) kept as the call's failure
  // (`translated`: its dialect when not the client's), unless the call was abandoned meanwhile.
  // A coroutine of its own: retries are rare, and its locals on Run's frame would take that
  // frame past the 1 KiB the per-thread frame cache serves (a malloc and a free per call).
  boost::asio::awaitable<void> KeepRetryable(upstream::Call& call, unsigned status, size_t index,
                                             const providers::Provider* translated);
  // Tracing on: starts the attempt's client span and puts its traceparent on `out`.
  void TraceAttempt(const DeploymentTarget& target, upstream::OutgoingRequest& out);
  // A whole answer read into whole_body_: its head and answer (whole_start_, whole_), parsed
  // when translated, and what the context learns from it; an error is the call's failure.
  Status ReadWhole(const CallRequest& request, const upstream::Call& call,
                   const providers::Provider& dialect, bool identity);
  // Awaits every live sink's Flush, dropping those that say their consumer has gone.
  boost::asio::awaitable<void> FlushAll();
  // Removes sink `i`, whose consumer has gone.
  void Drop(size_t i);
  // An identity whole answer's usage, finish and size, read for the context.
  void ReadIdentityUsage(const providers::Provider& dialect, std::string_view body);
  bool ServesClient() const;
  CallEnd Abandoned();
  CallEnd Failed(const Error& error);

  const CallDeps& deps_;
  core::RequestContext& ctx_;
  // The live ones; a sink whose Flush said false is removed. Inline: a call allocates nothing
  // for its usual one to three sinks.
  boost::container::small_vector<AnswerSink*, kInlineSinks> sinks_;
  const AnswerSink* leader_ = nullptr;
  CallFailure failure_;
  const DeploymentTarget* target_ = nullptr;
  std::optional<upstream::Call> attempt_;       // the attempt in flight, while Run runs
  std::optional<StreamPump> pump_;              // its stream's delivery
  boost::asio::steady_timer* timer_ = nullptr;  // the backoff in progress, for Abandon
  bool abandoned_ = false;
  // The current attempt's headers made with the tenant's own provider key (BYOK), when it has
  // one for the deployment: made per attempt (a few small strings), only for such tenants.
  std::unique_ptr<providers::UpstreamEndpoint> own_endpoint_;
  // A whole answer, alive until Run returns.
  std::string whole_body_;                     // its bytes (WholeAnswer::storage)
  std::optional<providers::Response> parsed_;  // translated
  AnswerStart whole_start_;
  WholeAnswer whole_;

  friend class StreamPump;
};

}  // namespace turnpike::model_call
