#include "app/serve_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "app/response_caches.h"
#include "app/restart.h"
#include "app/signals.h"
#include "app/store_setup.h"
#include "app/wait_for_deps.h"
#include "common/memory_trim.h"
#include "config/config.h"
#include "config/describe.h"
#include "control/governance_service.h"
#include "core/dispatcher.h"
#include "core/router.h"
#include "core/worker_core.h"
#include "doors/admin/admin_api.h"
#include "doors/llm/llm_door.h"
#include "doors/ops/ops_door.h"
#include "doors/search/admin_routes.h"
#include "doors/search/embedded/engine.h"
#include "doors/search/qdrant/qdrant_backend.h"
#include "doors/search/search_door.h"
#include "doors/ui/ui_door.h"
#include "governance/local_counters.h"
#include "http/server.h"
#include "http/tls_context.h"
#include "model_call/route_table.h"
#include "observability/access_log.h"
#include "observability/otlp_exporter.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/registry.h"
#include "redis/agent_scripts.h"
#include "redis/client.h"
#include "redis/lease_counters.h"
#include "redis/lease_script.h"
#include "redis/subscriber.h"
#include "store/store_thread.h"
#include "upstream/pool.h"

namespace turnpike::app {
namespace {

http::ServerOptions MakeServerOptions(const config::ServerConfig& s) {
  http::ServerOptions o;
  o.host = s.host;
  o.port = s.port;
  o.workers = s.workers > 0 ? s.workers
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.max_header_bytes = s.max_header_bytes;
  o.max_header_fields = s.max_header_fields;
  o.max_body_bytes = s.max_body_bytes;
  o.read_headers_timeout = s.read_headers_timeout;
  o.read_body_timeout = s.read_body_timeout;
  o.idle_timeout = s.idle_timeout;
  o.drain_timeout = s.drain_timeout;
  o.http2 = s.http2;
  o.http2_max_concurrent_streams = s.http2_max_concurrent_streams;
  return o;
}

// With HTTP/2 on, ALPN offers "h2" first (preferred), then "http/1.1".
http::TlsOptions MakeTlsOptions(const config::TlsConfig& t, bool http2) {
  http::TlsOptions o;
  if (http2) o.alpn.insert(o.alpn.begin(), "h2");
  for (const config::TlsCertificateFiles& pair : t.certificates) {
    o.certificates.push_back({pair.cert_file, pair.key_file});
  }
  o.tls13_only = t.min_version == "1.3";
  o.ciphers = t.ciphers;
  o.client_ca_file = t.client_ca_file;
  o.require_client_cert = t.require_client_cert;
  o.handshake_timeout = t.handshake_timeout;
  return o;
}

// Reads server.tls's files: null when TLS is off, an error naming the file when one is bad.
Result<std::shared_ptr<const http::TlsContext>> LoadTls(const config::TlsConfig& t, bool http2) {
  if (!t.enabled()) return std::shared_ptr<const http::TlsContext>();
  Result<std::shared_ptr<const http::TlsContext>> loaded =
      http::TlsContext::Load(MakeTlsOptions(t, http2));
  if (!loaded.ok()) {
    return Error{loaded.error().code, "server.tls: " + loaded.error().message, ""};
  }
  return loaded;
}

// SIGHUP: the certificates are read again; new handshakes use them, open connections keep
// theirs. A failed reload keeps the old ones and says why.
void ReloadTls(const config::TlsConfig& t, bool http2, http::Server& server) {
  if (!t.enabled()) {
    std::fprintf(stderr, "turnpike: SIGHUP: nothing to reload (server.tls is off)\n");
    return;
  }
  Result<std::shared_ptr<const http::TlsContext>> loaded = LoadTls(t, http2);
  if (!loaded.ok()) {
    std::fprintf(stderr, "turnpike: TLS reload failed, keeping the current certificates: %s\n",
                 loaded.error().message.c_str());
    return;
  }
  server.ReloadTls(std::move(loaded.value()));
  std::fprintf(stderr, "turnpike: TLS certificates reloaded (%zu)\n", t.certificates.size());
}

// turnpike_accept_errors_total{reason}: the listeners' failed accepts by cause (a bounded set,
// http::AcceptError), every cause written so that a rate() starts from 0.
void WriteAcceptErrors(const http::Server& server, observability::PrometheusWriter& w) {
  constexpr std::string_view kName = "turnpike_accept_errors_total";
  w.Family(kName,
           "Connections the listeners failed to accept, by cause (emfile: out of file "
           "descriptors).",
           observability::MetricType::kCounter);
  for (size_t cause = 0; cause < http::kAcceptErrorCauses; ++cause) {
    const uint64_t n = server.accept_errors(static_cast<http::AcceptError>(cause));
    w.Sample(kName, {{"reason", http::kAcceptErrorLabels[cause]}}, static_cast<double>(n));
  }
}

// turnpike_counter_table_* (embedded counters): the shared table's slots
// (governance/counter_table.h).
void WriteCounterTableMetrics(const governance::CounterTable& t,
                              observability::PrometheusWriter& w) {
  w.Family("turnpike_counter_table_slots_occupied",
           "Slots of the counters' shared table that are not free (of 16384).",
           observability::MetricType::kGauge);
  w.Sample("turnpike_counter_table_slots_occupied", {}, static_cast<double>(t.occupied()));
  w.Family("turnpike_counter_table_slots_reused_total",
           "Idle slots (no process holds their scope) given to a new scope.",
           observability::MetricType::kCounter);
  w.Sample("turnpike_counter_table_slots_reused_total", {}, static_cast<double>(t.reclaimed()));
  w.Family("turnpike_counter_table_slots_freed_total",
           "Idle slots made free again by the table's sweeps.",
           observability::MetricType::kCounter);
  w.Sample("turnpike_counter_table_slots_freed_total", {}, static_cast<double>(t.freed()));
}

// turnpike_memory_trim_* (server.memory_trim on): the give-backs after bursts.
void WriteTrimMetrics(const MemoryTrimmer& trimmer, observability::PrometheusWriter& w) {
  const TrimTotals t = trimmer.totals();
  const auto counter = [&w](std::string_view name, std::string_view help, double value) {
    w.Family(name, help, observability::MetricType::kCounter);
    w.Sample(name, {}, value);
  };
  counter("turnpike_memory_trims_total",
          "Times the heap's free pages were given back to the OS after a burst.",
          static_cast<double>(t.trims));
  counter("turnpike_memory_trim_released_bytes_total",
          "Resident memory given back by those trims (the resident set's fall across each).",
          static_cast<double>(t.released_bytes));
  counter("turnpike_memory_trim_seconds_total", "Time spent in those trims.", t.seconds);
}

// turnpike_http2_* (with server.http2 on): the server's HTTP/2 totals, unlabelled.
void WriteHttp2Metrics(const http::Server& server, observability::PrometheusWriter& w) {
  const http::Http2Totals t = server.http2_totals();
  const auto counter = [&w](std::string_view name, std::string_view help, uint64_t value) {
    w.Family(name, help, observability::MetricType::kCounter);
    w.Sample(name, {}, static_cast<double>(value));
  };
  counter("turnpike_http2_connections_total", "Client connections served as HTTP/2.",
          t.connections);
  counter("turnpike_http2_streams_total", "HTTP/2 request streams opened by clients.", t.streams);
  counter("turnpike_http2_client_resets_total", "RST_STREAM frames received from clients.",
          t.client_resets);
  counter("turnpike_http2_goaways_total", "GOAWAY frames sent to clients.", t.goaways_sent);
  counter("turnpike_http2_stream_timeouts_total",
          "HTTP/2 streams reset because the client took none of the response for the idle "
          "timeout.",
          t.stream_timeouts);
}

std::unique_ptr<observability::AccessLogSink> OpenAccessLog(const std::string& where) {
  if (where.empty()) return nullptr;
  if (where == "-") return std::make_unique<observability::AccessLogSink>(STDOUT_FILENO, false);
  const int fd = ::open(where.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw config::ConfigError("server.access_log: cannot open " + where);
  return std::make_unique<observability::AccessLogSink>(fd, true);
}

// Every API dialect the gateway speaks, one line each (providers/provider.h). The route table
// checks each deployment's provider against it.
std::unique_ptr<providers::Registry> MakeRegistry() {
  auto registry = std::make_unique<providers::Registry>();
  registry->Add(std::make_unique<providers::openai::OpenAiProvider>());
  registry->Add(std::make_unique<providers::anthropic::AnthropicProvider>());
  registry->Add(std::make_unique<providers::ollama::OllamaProvider>());
  registry->Add(std::make_unique<providers::cohere::CohereProvider>());
  registry->Add(std::make_unique<providers::gemini::GeminiProvider>());
  registry->Add(std::make_unique<providers::openai_responses::ResponsesProvider>());
  registry->Add(std::make_unique<providers::openai_completions::CompletionsProvider>());
  return registry;
}

// Every front door, one line each (core/door.h). The first is the router's fallback: it answers
// paths no door declares. Then each feature's door (feature.h), and the admin door with every
// feature's admin resources.
std::vector<core::DoorSpec> MakeDoors(const doors::llm::LlmShared& llm,
                                      const core::ProbeRegistry& probes,
                                      control::GovernanceService* governance,
                                      const std::string& admin_token,
                                      const search::SearchDoorOptions* search_options,
                                      const search::BackendFactory* search_backends,
                                      const Features& features, const FeatureContext& context) {
  using core::WorkerCore;
  using Context = boost::asio::io_context;
  std::vector<core::DoorSpec> doors;
  doors.push_back({doors::llm::LlmDoor::Routes(llm.providers),
                   [&llm](int worker, Context& context, WorkerCore& core) {
                     return std::make_unique<doors::llm::LlmDoor>(llm, worker, context, core);
                   }});
  doors.push_back({doors::ops::OpsDoor::Routes(), [&probes](int, Context&, WorkerCore& core) {
                     return std::make_unique<doors::ops::OpsDoor>(probes, core);
                   }});
  std::optional<size_t> search_door;  // its place in `doors`, for its admin resource
  if (search_backends != nullptr && *search_backends) {
    search_door = doors.size();
    doors.push_back(
        {search::SearchDoor::Routes(*search_options),
         [search_options, search_backends](int worker, Context& context, WorkerCore& core) {
           return std::make_unique<search::SearchDoor>(
               *search_options, (*search_backends)(worker, context, core.pool()), core,
               static_cast<size_t>(worker));
         }});
  }
  for (const Feature& feature : features) {
    if (!feature.door) continue;
    if (std::optional<core::DoorSpec> door = feature.door(context)) {
      doors.push_back(std::move(*door));
    }
  }
  if (governance != nullptr) {
    // Admin resources: the admin door's own, then each feature's (core/admin_route.h).
    std::shared_ptr<doors::admin::AdminResources> admin =
        doors::admin::GovernanceResources(*governance);
    for (const Feature& feature : features) {
      if (feature.admin_routes) admin->Add(feature.admin_routes(context));
    }
    if (search_door) admin->Add(search::SearchAdminRoutes(*search_door, search_options->timeout));
    auto failures = std::make_shared<doors::admin::AuthFailures>();  // one for every worker
    const config::Config& settings = context.config;
    const auto ttl = std::chrono::duration_cast<std::chrono::seconds>(settings.ui.session_ttl);
    auto sessions = std::make_shared<doors::admin::ConsoleSessions>(admin_token, ttl.count());
    doors.push_back({admin->Routes(), [admin, &admin_token, governance, failures, sessions](
                                          int, Context&, WorkerCore& core) {
                       return std::make_unique<doors::admin::AdminApi>(
                           *admin, admin_token, *sessions, governance->cell(), *failures, core);
                     }});
    // The console (doors/ui/): with the admin token, unless `ui.enabled: false`.
    if (settings.ui.enabled && !admin_token.empty()) {
      std::vector<std::string> patterns;
      for (const core::AdminRoute& route : admin->routes()) patterns.push_back(route.pattern);
      auto ui = std::make_shared<doors::ui::UiShared>(admin_token, *sessions, governance->cell(),
                                                      *failures, settings.server.tls.enabled(),
                                                      std::move(patterns));
      doors.push_back(
          {doors::ui::UiDoor::Routes(), [ui, sessions, failures](int, Context&, WorkerCore& core) {
             return std::make_unique<doors::ui::UiDoor>(*ui, core);
           }});
    }
  }
  return doors;
}

// Fleet mode (`redis.url`): the Redis client and the leased counters, connected before the
// service starts (its snapshots make their scopes). Unreachable: a clear error.
struct FleetCounters {
  FleetCounters() = default;
  FleetCounters(FleetCounters&&) = default;
  FleetCounters& operator=(FleetCounters&&) = default;
  // The client's thread runs the counters' timers and hooks: it stops (joins) first, on every
  // path out of Serve (the graceful one gives the leases back before).
  ~FleetCounters() {
    if (subscriber) subscriber->Stop();
    if (client) client->Stop();
  }

  std::string replica_id;
  std::unique_ptr<redis::Client> client;
  std::unique_ptr<redis::LeaseCounters> counters;
  // Messages between replicas (agent turns' cancels: doors/agents/fleet.h). Stopped before the
  // workers are destroyed (ServeUntilSignalled): its handlers reach turns running on them.
  std::unique_ptr<redis::Subscriber> subscriber;
};

// Where the agent scripts start in the client's script list (after the lease scripts).
constexpr size_t kAgentScriptsFirst = 2;

std::string ReplicaId() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return std::string(host) + "-" + std::to_string(::getpid()) + "-" + std::to_string(random());
}

Result<FleetCounters> StartFleetCounters(const config::RedisConfig& r, bool wait_for_deps) {
  redis::ClientOptions options;
  options.host = r.host;
  options.port = r.port;
  options.db = r.db;
  options.command_timeout = r.command_timeout;
  options.scripts = {std::string(redis::kLeaseScript), std::string(redis::kRateScript)};
  for (std::string& script : redis::AgentScripts()) options.scripts.push_back(std::move(script));
  FleetCounters fleet;
  fleet.replica_id = ReplicaId();
  fleet.client = std::make_unique<redis::Client>(std::move(options));
  fleet.client->Start();
  redis::Client* client = fleet.client.get();
  const std::function<Result<bool>()> connect = [client, &r]() -> Result<bool> {
    Status connected = client->WaitConnected(r.command_timeout);
    if (connected.ok()) return true;
    return Error{ErrorCode::kUnavailable,
                 "redis.url " + r.url + " is unreachable at start-up: " + connected.error().message,
                 ""};
  };
  Result<bool> up = WaitForDependency("Redis", wait_for_deps, connect);
  if (!up.ok()) return up.error();
  redis::LeaseOptions lease;
  lease.replica_id = fleet.replica_id;
  lease.lease_ttl = r.lease_ttl;
  lease.report_interval = r.report_interval;
  fleet.counters = std::make_unique<redis::LeaseCounters>(*fleet.client, std::move(lease));
  fleet.counters->Start();
  redis::SubscriberOptions subscriber;
  subscriber.host = r.host;
  subscriber.port = r.port;
  subscriber.connect_timeout = r.command_timeout;
  fleet.subscriber = std::make_unique<redis::Subscriber>(std::move(subscriber));
  fleet.subscriber->Start();
  return fleet;
}

struct ServeOptions {
  bool wait_for_deps = false;  // wait for PostgreSQL and Redis instead of exiting
};

// Everything Serve builds, in the order it is built (members are destroyed in reverse, after
// ShutDown's steps ran): each step below fills its part from the ones before it.
struct Gateway {
  explicit Gateway(config::Config c) : config(std::move(c)) {}

  const config::Config config;
  std::unique_ptr<providers::Registry> registry;
  std::shared_ptr<const model_call::RouteTable> routes;
  std::unique_ptr<upstream::TlsContexts> tls;
  std::unique_ptr<observability::AccessLogSink> access_log;
  std::unique_ptr<observability::OtlpExporter> tracer;  // telemetry.otlp; null: tracing off
  core::ProbeRegistry probes;
  std::unique_ptr<doors::llm::LlmShared> llm;
  // The counters role: in-process atomics (governance/local_counters.h), or leases from Redis
  // with `redis.url` (redis/lease_counters.h). Before the service, whose snapshots hold the
  // counters they make. The in-process words live in a table a restart hands over
  // (governance/counter_table.h), which outlives them.
  std::unique_ptr<governance::CounterTable> counter_table;
  governance::LocalCounters local_counters;
  FleetCounters fleet;
  Store store;                                      // empty when no role needs it
  std::unique_ptr<governance::DataKeys> data_keys;  // null: tenants' provider keys are off
  std::unique_ptr<control::GovernanceService> governance;
  // With governance: webhooks.budget_alerts, checked by every governance filter.
  std::unique_ptr<governance::BudgetAlerts> budget_alerts;
  std::string admin_token;
  // The search door's backend, one per worker: the embedded engine (its own thread; destroyed
  // after the server stops) or Qdrant (over each worker's upstream pool); the response caches
  // (the search door's and the LLM door's: L1, and the Redis L2 over the fleet's client), all
  // outliving the server.
  std::unique_ptr<search::embedded::Engine> search_engine;
  search::SearchDoorOptions search_options;
  search::BackendFactory search_backends;
  ResponseCaches caches;
  Features features;
  std::vector<core::DoorSpec> doors;
  std::unique_ptr<core::Router> router;
  std::unique_ptr<core::CoreShared> core;
};

// OpenTelemetry traces (telemetry.otlp): the exporter's thread and its counters in /metrics.
void StartTracer(Gateway& g) {
  const config::OtlpConfig& o = g.config.telemetry.otlp;
  if (o.endpoint.empty()) return;
  g.tracer = std::make_unique<observability::OtlpExporter>(observability::OtlpExporterOptions{
      o.endpoint, o.sampling_ratio, o.headers, o.queue_size, o.batch_size, o.export_interval,
      o.timeout, "turnpike",
      o.protocol == "http/json" ? observability::OtlpProtocol::kJson
                                : observability::OtlpProtocol::kProtobuf});
  g.probes.feature_metrics.push_back([t = g.tracer.get()](observability::PrometheusWriter& w) {
    using observability::MetricType;
    w.Family("turnpike_otel_spans_exported_total",
             "Requests whose spans (server, phases, attempts) a collector accepted.",
             MetricType::kCounter);
    w.Sample("turnpike_otel_spans_exported_total", {}, static_cast<double>(t->exported_requests()));
    w.Family("turnpike_otel_spans_dropped_total",
             "Requests whose spans were dropped at the exporter's full queue.",
             MetricType::kCounter);
    w.Sample("turnpike_otel_spans_dropped_total", {}, static_cast<double>(t->dropped_requests()));
    w.Family("turnpike_otel_exports_total", "OTLP export requests made.", MetricType::kCounter);
    w.Sample("turnpike_otel_exports_total", {}, static_cast<double>(t->exports()));
    w.Family("turnpike_otel_exports_failed_total",
             "OTLP export requests that failed (connect, timeout, non-2xx); their spans are lost.",
             MetricType::kCounter);
    w.Sample("turnpike_otel_exports_failed_total", {}, static_cast<double>(t->failed_exports()));
  });
}

// The dialects, the model routes, TLS, the access log and the LLM door's shared state.
void PrepareLlm(Gateway& g) {
  g.registry = MakeRegistry();
  g.routes = model_call::RouteTable::Build(g.config, *g.registry);
  // One trust store for every upstream origin of the worker's pool: the deployments' and, with
  // the Qdrant backend, Qdrant's (upstream.ca_file for both).
  bool any_tls = false;
  if (g.config.search.enabled && g.config.search.backend == "qdrant") {
    Result<upstream::Origin> qdrant = upstream::ParseOrigin(g.config.search.qdrant_url, true);
    any_tls = qdrant.ok() && qdrant->tls;  // a bad URL is StartSearch's error
  }
  for (const auto& model : g.routes->models()) {
    for (const auto& deployment : model.deployments) any_tls |= deployment.origin.tls;
  }
  g.tls = std::make_unique<upstream::TlsContexts>(g.config.upstream.ca_file, any_tls);
  g.access_log = OpenAccessLog(g.config.server.access_log);
  for (const auto& model : g.routes->models()) g.probes.model_names.push_back(model.name);
  if (g.access_log) {
    g.probes.access_log_dropped = [sink = g.access_log.get()] { return sink->dropped_lines(); };
  }
  g.llm = std::make_unique<doors::llm::LlmShared>(
      doors::llm::LlmShared{g.config, g.routes, g.probes, *g.registry});
  StartTracer(g);
}

// Fleet mode's leased counters, with governance and `redis.url`; else the in-process counters'
// shared table (inherited from a restart's predecessor, or new).
Status StartCounters(Gateway& g, const ServeOptions& options, int inherited_table) {
  if (!g.config.governance.enabled) return Ok{};
  if (g.config.redis.url.empty()) {
    Result<std::unique_ptr<governance::CounterTable>> table =
        governance::CounterTable::Open(inherited_table);
    if (!table.ok() && inherited_table >= 0) {
      // A predecessor of another layout (an older binary): serve with a table of our own, the
      // budgets counted per process until it has drained (ADR 0003).
      std::fprintf(stderr,
                   "turnpike: %s: counting in a new table; until the previous process has "
                   "drained, the two count budgets and rate limits separately\n",
                   table.error().message.c_str());
      table = governance::CounterTable::Open(-1);
    }
    if (!table.ok()) return table.error();
    g.counter_table = std::move(table.value());
    g.local_counters.Share(g.counter_table.get());
    g.probes.counters_metrics = [t = g.counter_table.get()](observability::PrometheusWriter& w) {
      WriteCounterTableMetrics(*t, w);
    };
    return Ok{};
  }
  Result<FleetCounters> started = StartFleetCounters(g.config.redis, options.wait_for_deps);
  if (!started.ok()) return started.error();
  g.fleet = std::move(started.value());
  g.probes.counters_metrics = [c = g.fleet.counters.get(),
                               sub = g.fleet.subscriber.get()](observability::PrometheusWriter& w) {
    c->RenderMetrics(w);
    sub->RenderMetrics(w);
  };
  return Ok{};
}

// The store, when a role needs it: governance's records and call log, or a feature's role.
// Without governance its thread runs only the roles' jobs (no call log: a no-op writer).
Status StartStore(Gateway& g, const ServeOptions& options) {
  std::vector<store::RoleSpec> roles = StoreRoles(g.config);
  for (const Feature& feature : g.features) {
    if (!feature.role) continue;
    if (std::optional<store::RoleSpec> role = feature.role(g.config)) {
      roles.push_back(std::move(*role));
    }
  }
  if (!g.config.governance.enabled && roles.empty()) return Ok{};
  Result<Store> opened = OpenStore(g.config, roles, options.wait_for_deps);
  if (!opened.ok()) return opened.error();
  g.store = std::move(opened.value());
  if (!g.config.governance.enabled) {
    g.store.thread->Start([](store::CallLogStore&, store::CallBatchParts) {},
                          [](store::Engine& engine) { engine.Tick(); });
    g.probes.store_metrics = [&store = g.store](observability::PrometheusWriter& w) {
      store.engine->statements().Render(w);
      store.engine->RenderMetrics(w);
      store.thread->RenderMetrics(w);
    };
  }
  return Ok{};
}

// The service over the store (control/governance_service.h), and the admin token.
Status StartGovernance(Gateway& g) {
  if (!g.config.governance.enabled) return Ok{};
  governance::Counters& counters =
      g.fleet.counters ? static_cast<governance::Counters&>(*g.fleet.counters) : g.local_counters;
  Result<std::unique_ptr<governance::DataKeys>> data_keys = LoadDataKeys(g.config);
  if (!data_keys.ok()) return data_keys.error();
  g.data_keys = std::move(data_keys.value());
  Result<std::unique_ptr<control::GovernanceService>> started = control::GovernanceService::Start(
      g.config, *g.store.engine, *g.store.thread, counters, g.data_keys.get());
  if (!started.ok()) return started.error();
  g.governance = std::move(started.value());
  const char* token = std::getenv("TURNPIKE_ADMIN_TOKEN");
  if (token != nullptr) g.admin_token = token;
  g.probes.store_metrics = [s = g.governance.get()](observability::PrometheusWriter& w) {
    s->RenderMetrics(w);
  };
  if (g.admin_token.empty()) {
    std::cerr << "turnpike: TURNPIKE_ADMIN_TOKEN is not set: the admin API is off\n";
  }
  if (g.governance->cell().Load()->key_count() == 0) {
    std::cerr << "turnpike: no API keys yet; create a plan, a tenant and a key with "
                 "`turnpike admin` (see README)\n";
  }
  return Ok{};
}

// The search door's backend (embedded or Qdrant); then the response caches.
Status StartSearch(Gateway& g) {
  const config::Config& config = g.config;
  if (config.search.enabled && config.search.backend == "qdrant") {
    Result<upstream::Origin> origin = upstream::ParseOrigin(config.search.qdrant_url, true);
    if (!origin.ok()) {
      return Error{origin.error().code, "search.qdrant.url: " + origin.error().message, ""};
    }
    auto settings = std::make_shared<search::qdrant::Settings>();
    settings->origin = std::move(*origin);
    settings->api_key = config.search.qdrant_api_key;
    settings->max_candidates = config.search.qdrant_max_candidates;
    settings->mapping_ttl = config.search.qdrant_mapping_ttl;
    g.search_backends = search::qdrant::MakeBackendFactory(std::move(settings));
  } else if (config.search.enabled) {
    Result<std::unique_ptr<search::embedded::Engine>> opened =
        search::embedded::Engine::Open(config.search.path, config.search.queue_jobs);
    if (!opened.ok()) return Error{opened.error().code, "search: " + opened.error().message, ""};
    g.search_engine = std::move(*opened);
    search::embedded::Engine* engine = g.search_engine.get();
    g.search_backends = [engine](int, boost::asio::io_context&,
                                 upstream::Pool&) -> std::unique_ptr<search::Backend> {
      return std::make_unique<search::embedded::EmbeddedBackend>(*engine);
    };
  }
  g.search_options.prefix = config.search.prefix;
  g.search_options.timeout = config.search.timeout;
  g.caches =
      MakeResponseCaches(config, static_cast<bool>(g.search_backends), g.fleet.client.get(),
                         static_cast<size_t>(MakeServerOptions(config.server).workers), g.probes);
  g.search_options.cache = g.caches.search.get();
  g.llm->cache = g.caches.llm.get();
  return Ok{};
}

// The doors, the router over their routes, and what every worker's core shares.
void MakeCore(Gateway& g) {
  governance::Counters* counters = nullptr;
  if (g.governance) {
    counters = g.fleet.counters ? static_cast<governance::Counters*>(g.fleet.counters.get())
                                : &g.local_counters;
  }
  FeatureContext context{g.config, *g.routes, g.store.thread.get(), counters};
  context.redis = g.fleet.client.get();
  context.subscriber = g.fleet.subscriber.get();
  context.agent_scripts = kAgentScriptsFirst;
  context.replica_id = g.fleet.replica_id;
  context.metrics = &g.probes.feature_metrics;
  if (g.governance) {
    g.budget_alerts = std::make_unique<governance::BudgetAlerts>(g.config.webhooks.budget_alerts);
    context.budget_alerts = g.budget_alerts.get();
  }
  g.doors = MakeDoors(*g.llm, g.probes, g.governance.get(), g.admin_token, &g.search_options,
                      &g.search_backends, g.features, context);
  g.router = std::make_unique<core::Router>(/*fallback_door=*/0);
  for (size_t i = 0; i < g.doors.size(); ++i) {
    g.router->Add(static_cast<uint16_t>(i), g.doors[i].routes);
  }
  g.probes.route_labels = g.router->labels();
  g.core = std::make_unique<core::CoreShared>(*g.router, g.probes);
  core::CoreShared& core = *g.core;
  for (size_t i = 0; i < g.doors.size(); ++i) {
    for (const std::string& prefix : g.doors[i].model_prefixes) {
      core.handoffs.Add(prefix, static_cast<uint16_t>(i));
    }
  }
  core.model_count = g.routes->models().size();
  core.server_timing = g.config.server.server_timing;
  core.access_log = g.access_log.get();
  core.tracer = g.tracer.get();
  core.tls = g.tls.get();
  core.pool_options.max_idle_per_origin = g.config.upstream.pool_max_idle_per_origin;
  core.pool_options.idle_ttl = g.config.upstream.pool_idle_ttl;
  core.pool_options.max_active_per_origin = g.config.upstream.pool_max_active_per_origin;
  if (g.governance) {
    core.governance = &g.governance->cell();
    core.call_log = &g.governance->thread();
    core.call_log_options = g.governance->buffer_options();
    core.call_log_flush = g.config.call_log.flush_interval;
    if (g.fleet.counters) core.refill_wait = g.config.redis.refill_wait;
    core.budget_alerts = g.budget_alerts.get();
    if (g.config.governance.snapshot_ttl.count() == 0) {
      // Read-through (debugging): every governed request waits for a fresh snapshot.
      core.refresh = [s = g.governance.get()] { return s->Reload(); };
    }
  }
}

// Binds, serves until SIGTERM/SIGINT drains the server, and stops what the workers feed,
// in this order: the server goes before the store stops (its workers flush their last
// call-log rows when they are destroyed: store/store_thread.h, shutdown order), after the
// store's jobs close; queued search legs complete into the stopped loops, not destroyed ones.
Status ServeUntilSignalled(Gateway& g, InheritedListeners& inherited) {
  http::ServerOptions options = MakeServerOptions(g.config.server);
  options.inherited_listeners = inherited.fds;
  Result<std::shared_ptr<const http::TlsContext>> tls =
      LoadTls(g.config.server.tls, g.config.server.http2);
  if (!tls.ok()) return tls.error();
  options.tls = std::move(tls.value());
  http::Server server(std::move(options),
                      [&core = *g.core, &doors = g.doors](int index, boost::asio::io_context& c) {
                        return std::make_unique<core::Dispatcher>(core, doors, index, c);
                      });
  g.probes.in_flight = [&server] { return server.in_flight(); };
  g.probes.feature_metrics.push_back(
      [&server](observability::PrometheusWriter& w) { WriteAcceptErrors(server, w); });
  const bool http2 = g.config.server.http2;
  if (http2) {
    g.probes.feature_metrics.push_back(
        [&server](observability::PrometheusWriter& w) { WriteHttp2Metrics(server, w); });
  }
  Status bound = server.Bind();
  if (!bound.ok()) return bound;
  std::cerr << config::DescribeConfig(g.config);
  std::printf("turnpike listening on %s:%u%s\n", g.config.server.host.c_str(), server.port(),
              g.config.server.tls.enabled() ? " (TLS)" : "");
  if (!inherited.source.empty()) {
    std::fprintf(stderr, "turnpike: process %d took over %zu listening sockets (%s)\n",
                 static_cast<int>(::getpid()), inherited.fds.size(), inherited.source.c_str());
  }
  std::fflush(stdout);
  // After a burst, the heap's free pages go back to the OS (common/memory_trim.h).
  std::optional<MemoryTrimmer> trimmer;
  if (g.config.server.memory_trim.count() > 0) {
    // The load of a tick: exchanges begun in it, and those still open at its end.
    trimmer.emplace(g.config.server.memory_trim, [&server, started = uint64_t{0}]() mutable {
      const uint64_t now = server.exchanges_started();
      const int64_t begun = static_cast<int64_t>(now - started);
      started = now;
      return server.in_flight() + begun;
    });
    g.probes.feature_metrics.push_back(
        [&trimmer](observability::PrometheusWriter& w) { WriteTrimMetrics(*trimmer, w); });
  }
  {
    // SIGUSR2: a successor takes the listeners over (app/restart.h); this one drains once it
    // serves. The restarter outlives the signal thread that calls it.
    Restarter restarter([&server] { return server.listener_fds(); }, [&server] { server.Drain(); },
                        g.counter_table ? g.counter_table->fd() : -1);
    SignalWatcher signals([&server] { server.Drain(); },
                          [&s = g.config.server, &server] { ReloadTls(s.tls, s.http2, server); },
                          [&server, &restarter] {
                            if (server.draining()) {
                              std::fprintf(stderr, "turnpike: SIGUSR2 ignored: draining\n");
                            } else {
                              restarter.Start();
                            }
                          });
    AnnounceReady(inherited);
    server.Run();
  }
  if (trimmer) g.probes.feature_metrics.pop_back();  // they read what goes now
  if (http2) g.probes.feature_metrics.pop_back();
  if (g.fleet.subscriber) g.fleet.subscriber->Stop();
  for (const Feature& feature : g.features) {
    if (feature.stop) feature.stop();
  }
  if (g.store.thread) g.store.thread->CloseJobs();
  if (g.search_engine) g.search_engine->Drain();
  g.probes.in_flight = nullptr;
  return Ok{};
}

// After the server: every lease's unused part goes back (drained: no reservation is open, and
// the spend is reported with it), the Redis client stops, the store writes what is queued and
// joins its lanes, the access log flushes.
void ShutDown(Gateway& g) {
  if (g.fleet.counters) g.fleet.counters->Stop(g.config.redis.command_timeout);
  if (g.fleet.client) g.fleet.client->Stop();
  g.probes.counters_metrics = nullptr;
  g.probes.cache_metrics.clear();
  g.probes.feature_metrics.clear();
  if (g.store.thread) g.store.thread->Stop();
  if (g.access_log) g.access_log->Flush();
  if (g.tracer) g.tracer->Stop();
}

int Serve(const std::string& config_path, const ServeOptions& options, const Features& features) {
  SignalWatcher::BlockSignals();  // before the first thread (store, access log) starts
  InheritedListeners inherited = TakeInheritedListeners();  // edits the environment
  Gateway g(config::LoadConfig(config_path));
  g.features = features;
  PrepareLlm(g);
  Status started = StartCounters(g, options, inherited.counters_fd);
  if (started.ok()) started = StartStore(g, options);
  if (started.ok()) started = StartGovernance(g);
  if (started.ok()) started = StartSearch(g);
  if (started.ok()) {
    MakeCore(g);
    started = ServeUntilSignalled(g, inherited);
  }
  if (!started.ok()) {
    std::cerr << "turnpike: " << started.error().message << "\n";
    return 1;
  }
  ShutDown(g);
  std::cerr << "turnpike: stopped\n";
  return 0;
}

}  // namespace

void RegisterServeCommands(CLI::App& root, Features features) {
  auto config_path = std::make_shared<std::string>("turnpike.yaml");
  CLI::App* serve = root.add_subcommand("serve", "Run the gateway");
  serve->add_option("-c,--config", *config_path, "YAML config file")->capture_default_str();
  auto serve_options = std::make_shared<ServeOptions>();
  serve->add_flag(
      "--wait-for-deps", serve_options->wait_for_deps,
      "At start-up, wait for unreachable dependencies (PostgreSQL, Redis) instead of exiting");
  serve->callback([config_path, serve_options, features = std::move(features)] {
    int rc = 1;
    try {
      rc = Serve(*config_path, *serve_options, features);
    } catch (const config::ConfigError& e) {
      std::cerr << "turnpike: config error: " << e.what() << "\n";
    } catch (const std::exception& e) {
      std::cerr << "turnpike: " << e.what() << "\n";
    }
    std::exit(rc);
  });

  auto validate_path = std::make_shared<std::string>("turnpike.yaml");
  CLI::App* validate = root.add_subcommand("validate", "Check a config file and describe it");
  validate->add_option("-c,--config", *validate_path, "YAML config file")->capture_default_str();
  validate->callback([validate_path] {
    try {
      const config::Config config = config::LoadConfig(*validate_path);
      model_call::RouteTable::Build(config, *MakeRegistry());
      std::cout << config::DescribeConfig(config) << "config OK\n";
      std::exit(0);
    } catch (const std::exception& e) {
      std::cerr << "turnpike: config error: " << e.what() << "\n";
      std::exit(1);
    }
  });
}

}  // namespace turnpike::app
