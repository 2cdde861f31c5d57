// The governed core on one worker, shared by every door there: the worker's upstream pool;
// starts a request's context, answers with Server-Timing, builds the governance filter a door's
// chain starts with, answers what a chain decided (AnswerFromChain: a refusal or a filter's
// answer, for every door), and
// accounts every request exactly once at its end (Finish: the request probe, the access log,
// the call log). It also owns the worker's log buffers and the loop that flushes them.
//
// CoreShared is the process-wide part, built in app/ and read-only once the workers run.
//
// Ownership and threads: one WorkerCore per worker (owned by its Dispatcher, dispatcher.h),
// used only on that worker's thread; CoreShared outlives every worker.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/door.h"
#include "core/filter.h"
#include "core/governance_filter.h"
#include "core/handoff.h"
#include "core/request_context.h"
#include "core/request_probe.h"
#include "core/router.h"
#include "governance/snapshot_cell.h"
#include "http/exchange.h"
#include "observability/access_log.h"
#include "observability/otlp_exporter.h"
#include "store/call_log_buffer.h"
#include "store/store_thread.h"
#include "upstream/pool.h"

namespace turnpike::core {

struct CoreShared {
  CoreShared(const Router& router, ProbeRegistry& probes) : router(router), probes(probes) {}

  const Router& router;
  ProbeRegistry& probes;
  size_t model_count = 0;                              // the request probe's model slots
  bool server_timing = false;                          // server.server_timing
  observability::AccessLogSink* access_log = nullptr;  // nullptr: access log off
  // OpenTelemetry traces (request_trace.h); nullptr: tracing off, nothing read or recorded.
  observability::OtlpExporter* tracer = nullptr;
  // Governance on: the published snapshot, the store thread the call log goes to, and the
  // read-through reload (empty unless snapshot_ttl is 0). Governance off: all null/empty.
  const governance::SnapshotCell* governance = nullptr;
  store::StoreThread* call_log = nullptr;
  store::CallLogBufferOptions call_log_options;
  std::chrono::milliseconds call_log_flush{200};
  SnapshotRefresh refresh;
  // Leased counters (fleet mode): how long a request may wait for its budget slice's refill
  // (governance_filter.h); 0 = answer at once.
  std::chrono::milliseconds refill_wait{0};
  // Budget alerts checked after each settle (governance/budget_alerts.h); null: none.
  const governance::BudgetAlerts* budget_alerts = nullptr;
  // The worker's upstream pool (every door's model calls and backend legs share it): its TLS
  // settings and options. Without TLS settings a worker has no pool (a core without upstream
  // calls, as in some tests): pool() must not be called then.
  const upstream::TlsContexts* tls = nullptr;
  upstream::PoolOptions pool_options;
  // Model-name prefixes -> the door that answers them (handoff.h); built from the DoorSpecs.
  HandOffTable handoffs;
};

// What Finish reads of a request's exchange. A door whose work outlives the exchange (the agent
// door's background turns) keeps a copy with owned strings (ExchangeRecord::Own) and finishes
// the request from it when its work ends.
struct ExchangeRecord {
  Clock::time_point head_sent_at{};
  std::string_view method;
  std::string_view path;
  std::string_view request_body;
  std::string_view client;  // the client's address (read only when the access log is on)
  uint64_t bytes_sent = 0;
};

// An ExchangeRecord with its own copies of the strings (moving it keeps the views valid only
// through view()).
struct OwnedExchangeRecord {
  static OwnedExchangeRecord Own(const http::Exchange& exchange);
  ExchangeRecord view() const {
    return {head_sent_at, method, path, request_body, client, bytes_sent};
  }
  Clock::time_point head_sent_at{};
  std::string method, path, request_body, client;
  // The request id a context views (RequestContext::request_id): re-point it here.
  std::string request_id;
  uint64_t bytes_sent = 0;
};

// How a door renders a refusal: the error in its API's shape, with that API's status.
using RenderError = std::function<ErrorReply(const Error&)>;

inline constexpr std::string_view kJsonContentType = "application/json";

class WorkerCore {
 public:
  WorkerCore(const CoreShared& shared, boost::asio::io_context& context);
  ~WorkerCore();
  WorkerCore(const WorkerCore&) = delete;
  WorkerCore& operator=(const WorkerCore&) = delete;

  // The request id, the received time, the body size, the metrics route of `match`, and the
  // exchange's response headers (for the filters' headers: context.response_headers).
  void Start(http::Exchange& exchange, const RouteMatch& match, RequestContext& ctx) const;
  // The credentials a governed door authenticates (Authorization, x-api-key).
  static void ReadCredentials(const http::Exchange& exchange, RequestContext& ctx);

  // Answers with Server-Timing (when on); the context gets the status (499 if the client left).
  boost::asio::awaitable<void> Respond(http::Exchange& exchange, RequestContext& ctx,
                                       unsigned status, std::string_view content_type,
                                       std::string body);
  // Answers `reply` (a door's rendered error for `code`) as JSON; the context gets the code.
  boost::asio::awaitable<void> RespondError(http::Exchange& exchange, RequestContext& ctx,
                                            ErrorCode code, ErrorReply reply);

  // Answers what the chain decided when it returned kRespond (filter.h), the same way for every
  // door: ctx.answer if a filter set one (its header lines, then its whole body as Respond
  // sends one, or its stream: StartStream, the stream's WriteBody, EndStream), else
  // ctx.refusal as `render_error` renders it, sent as `error_content_type`, with ctx.error set
  // to its code (neither set: a 500 kInternal). Server-Timing and ctx.status as Respond does
  // them (499 if the client left). A HEAD request gets the status and headers, no body. Call
  // it at most once per request, instead of the door's work, and run chain.Complete after.
  boost::asio::awaitable<void> AnswerFromChain(
      http::Exchange& exchange, RequestContext& ctx, const RenderError& render_error,
      std::string_view error_content_type = kJsonContentType);

  // Accounts the request, once, after the door answered.
  void Finish(const http::Exchange& exchange, RequestContext& ctx);
  // The same from a record of the exchange, when the door's work ended after it (a background
  // agent turn): the probe, the call log and the access log see the request at its work's end,
  // with the status and bytes of the answer it got.
  void Finish(const ExchangeRecord& exchange, RequestContext& ctx);

  // A governance filter for a door's chain (nullptr: governance is off).
  std::unique_ptr<Filter> MakeGovernanceFilter() const;

  // A governed door's request that is not a model call (the agent door's conversations and
  // stored responses): the key in ctx's credentials authenticated against the worker's current
  // snapshot (ctx.snapshot is set to it), without admission: no model check, budget or rate
  // charge, and ctx.principal stays empty, so the call log does not count it as a call.
  // Errors: Authenticate's (401, 403); kUnavailable when governance is off.
  Result<governance::Principal> Authenticate(RequestContext& ctx);

  RequestProbe& probe() { return probe_; }
  // The worker's keep-alive connections to upstream origins, shared by its doors.
  upstream::Pool& pool() { return *pool_; }

  // Hand-off (handoff.h): whether any door takes handed requests, and the worker's door that
  // answers `key` (nullptr: none; the first door goes on itself).
  bool hands_off() const { return !shared_.handoffs.empty(); }
  Door* HandOffTarget(std::string_view key) const;
  // The worker's doors, given by its Dispatcher once they are made.
  void AttachDoors(const std::vector<std::unique_ptr<Door>>& doors) { doors_ = &doors; }
  // The worker's door at `index` (its DoorSpec's place in app/'s list); nullptr before
  // AttachDoors or past the last.
  Door* door(size_t index) const {
    return doors_ != nullptr && index < doors_->size() ? (*doors_)[index].get() : nullptr;
  }
  bool server_timing() const { return shared_.server_timing; }
  void Shutdown();

 private:
  void AddServerTiming(http::Exchange& exchange, const RequestContext& ctx) const;
  void LogCall(const ExchangeRecord& exchange, const RequestContext& ctx, int64_t overhead_us);

  const CoreShared& shared_;
  RequestProbe probe_;
  std::optional<upstream::Pool> pool_;  // set when CoreShared::tls is
  // Authenticate's, made at its first use.
  std::optional<governance::SnapshotReader> reader_;
  std::optional<governance::SecretVerifier> verifier_;
  const std::vector<std::unique_ptr<Door>>* doors_ = nullptr;
  std::unique_ptr<observability::AccessLogBuffer> access_log_;
  std::unique_ptr<store::CallLogBuffer> call_log_;
};

}  // namespace turnpike::core
