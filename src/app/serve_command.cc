#include "app/serve_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include "app/signals.h"
#include "app/wait_for_deps.h"
#include "cache/cache.h"
#include "cache/redis/redis_l2_store.h"
#include "config/config.h"
#include "config/describe.h"
#include "control/governance_service.h"
#include "core/dispatcher.h"
#include "core/router.h"
#include "core/worker_core.h"
#include "doors/admin/admin_api.h"
#include "doors/llm/llm_door.h"
#include "doors/ops/ops_door.h"
#include "doors/search/embedded/engine.h"
#include "doors/search/qdrant/qdrant_backend.h"
#include "doors/search/search_door.h"
#include "governance/local_counters.h"
#include "http/server.h"
#include "model_call/route_table.h"
#include "observability/access_log.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/registry.h"
#include "redis/client.h"
#include "redis/lease_counters.h"
#include "redis/lease_script.h"
#include "store/postgres/engine.h"
#include "store/sqlite/engine.h"
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
  o.max_body_bytes = s.max_body_bytes;
  o.read_headers_timeout = s.read_headers_timeout;
  o.read_body_timeout = s.read_body_timeout;
  o.idle_timeout = s.idle_timeout;
  o.drain_timeout = s.drain_timeout;
  return o;
}

std::unique_ptr<observability::AccessLogSink> OpenAccessLog(const std::string& where) {
  if (where.empty()) return nullptr;
  if (where == "-") return std::make_unique<observability::AccessLogSink>(STDOUT_FILENO, false);
  const int fd = ::open(where.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw config::ConfigError("server.access_log: cannot open " + where);
  return std::make_unique<observability::AccessLogSink>(fd, true);
}

// The store's engine chosen by config `store.engine`: the embedded one (SQLite), or PostgreSQL
// (waited for with --wait-for-deps; else an unreachable server ends start-up).
Result<std::unique_ptr<store::Engine>> OpenStoreEngine(const config::Config& config,
                                                       bool wait_for_deps) {
  if (config.store.engine == config::StoreConfig::Engine::kSqlite) {
    store::sqlite::EngineOptions options;
    options.synchronous_full = config.store.synchronous_full;
    Result<std::unique_ptr<store::sqlite::SqliteEngine>> engine =
        store::sqlite::OpenEngine(config.store.path, options);
    if (!engine.ok()) return engine.error();
    return std::unique_ptr<store::Engine>(std::move(engine.value()));
  }
  store::postgres::EngineOptions options;
  options.url = config.store.url;
  options.notify_url = config.store.notify_url;
  options.pool = config.store.pool;
  options.spool_path = config.store.path + ".spool";
  const std::function<Result<std::unique_ptr<store::Engine>>()> open =
      [&options]() -> Result<std::unique_ptr<store::Engine>> {
    Result<std::unique_ptr<store::postgres::PostgresEngine>> engine =
        store::postgres::OpenEngine(options);
    if (!engine.ok()) return engine.error();
    return std::unique_ptr<store::Engine>(std::move(engine.value()));
  };
  return WaitForDependency("PostgreSQL", wait_for_deps, open);
}

// The engine, its store thread, and the service that owns both
// (control/governance_service.h).
Result<std::unique_ptr<control::GovernanceService>> StartGovernance(const config::Config& config,
                                                                    governance::Counters& counters,
                                                                    bool wait_for_deps) {
  Result<std::unique_ptr<store::Engine>> engine = OpenStoreEngine(config, wait_for_deps);
  if (!engine.ok()) return engine.error();
  store::StoreThreadOptions thread_options;
  thread_options.max_jobs = config.store.queue_jobs;
  thread_options.max_records = config.call_log.queue_rows;
  thread_options.batch_rows = config.call_log.batch_rows;
  // An engine notified of changes (PostgreSQL LISTEN) wakes its control lane itself
  // (store_thread.h): the tick stays the default for every engine.
  auto thread = std::make_unique<store::StoreThread>(*engine.value(), thread_options);
  return control::GovernanceService::Start(config, std::move(engine.value()), std::move(thread),
                                           counters);
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
// paths no door declares.
std::vector<core::DoorSpec> MakeDoors(const doors::llm::LlmShared& llm,
                                      const core::ProbeRegistry& probes,
                                      control::GovernanceService* governance,
                                      const std::string& admin_token,
                                      const search::SearchDoorOptions* search_options,
                                      const search::BackendFactory* search_backends) {
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
  if (search_backends != nullptr && *search_backends) {
    doors.push_back(
        {search::SearchDoor::Routes(*search_options),
         [search_options, search_backends](int worker, Context& context, WorkerCore& core) {
           return std::make_unique<search::SearchDoor>(*search_options,
                                                       (*search_backends)(worker, context), core,
                                                       static_cast<size_t>(worker));
         }});
  }
  if (governance != nullptr) {
    // Admin resources, one line per door that adds its own (core/admin_route.h).
    std::shared_ptr<doors::admin::AdminResources> admin =
        doors::admin::GovernanceResources(*governance);
    doors.push_back({admin->Routes(), [admin, &admin_token](int, Context&, WorkerCore& core) {
                       return std::make_unique<doors::admin::AdminApi>(*admin, admin_token, core);
                     }});
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
    if (client) client->Stop();
  }

  std::unique_ptr<redis::Client> client;
  std::unique_ptr<redis::LeaseCounters> counters;
};

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
  FleetCounters fleet;
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
  lease.replica_id = ReplicaId();
  lease.lease_ttl = r.lease_ttl;
  lease.report_interval = r.report_interval;
  fleet.counters = std::make_unique<redis::LeaseCounters>(*fleet.client, std::move(lease));
  fleet.counters->Start();
  return fleet;
}

struct ServeOptions {
  bool wait_for_deps = false;  // wait for PostgreSQL and Redis instead of exiting
};

int Serve(const std::string& config_path, const ServeOptions& options) {
  SignalWatcher::BlockSignals();  // before the first thread (store, access log) starts
  const config::Config config = config::LoadConfig(config_path);
  const std::unique_ptr<providers::Registry> registry = MakeRegistry();
  const auto routes = model_call::RouteTable::Build(config, *registry);
  bool any_tls = false;
  for (const auto& model : routes->models()) {
    for (const auto& deployment : model.deployments) any_tls |= deployment.origin.tls;
  }
  const upstream::TlsContexts tls(config.upstream.ca_file, any_tls);
  auto access_log = OpenAccessLog(config.server.access_log);

  core::ProbeRegistry probes;
  for (const auto& model : routes->models()) probes.model_names.push_back(model.name);
  if (access_log)
    probes.access_log_dropped = [sink = access_log.get()] { return sink->dropped_lines(); };
  const doors::llm::LlmShared llm{config, routes, probes, *registry};

  // The counters role: in-process atomics (governance/local_counters.h), or leases from Redis
  // with `redis.url` (redis/lease_counters.h). Declared before the service, whose snapshots
  // hold the counters they make.
  governance::LocalCounters local_counters;
  FleetCounters fleet;
  if (config.governance.enabled && !config.redis.url.empty()) {
    Result<FleetCounters> started = StartFleetCounters(config.redis, options.wait_for_deps);
    if (!started.ok()) {
      std::cerr << "turnpike: " << started.error().message << "\n";
      return 1;
    }
    fleet = std::move(started.value());
    probes.counters_metrics = [c = fleet.counters.get()](observability::PrometheusWriter& w) {
      c->RenderMetrics(w);
    };
  }
  governance::Counters& counters =
      fleet.counters ? static_cast<governance::Counters&>(*fleet.counters) : local_counters;
  std::unique_ptr<control::GovernanceService> governance;
  std::string admin_token;
  if (config.governance.enabled) {
    Result<std::unique_ptr<control::GovernanceService>> opened =
        StartGovernance(config, counters, options.wait_for_deps);
    if (!opened.ok()) {
      std::cerr << "turnpike: " << opened.error().message << "\n";
      return 1;
    }
    governance = std::move(opened.value());
    const char* token = std::getenv("TURNPIKE_ADMIN_TOKEN");
    if (token != nullptr) admin_token = token;
    probes.store_metrics = [g = governance.get()](observability::PrometheusWriter& w) {
      g->RenderMetrics(w);
    };
    if (admin_token.empty()) {
      std::cerr << "turnpike: TURNPIKE_ADMIN_TOKEN is not set: the admin API is off\n";
    }
    if (governance->cell().Load()->key_count() == 0) {
      std::cerr << "turnpike: no API keys yet; create a plan, a tenant and a key with "
                   "`turnpike admin` (see README)\n";
    }
  }

  // The search door's backend, one per worker: the embedded engine (its own thread; destroyed
  // after the server stops) or Qdrant (each worker's own pool).
  std::unique_ptr<search::embedded::Engine> search_engine;
  search::SearchDoorOptions search_options;
  search::BackendFactory search_backends;
  if (config.search.enabled && config.search.backend == "qdrant") {
    Result<upstream::Origin> origin = upstream::ParseOrigin(config.search.qdrant_url, true);
    if (!origin.ok()) {
      std::cerr << "turnpike: search.qdrant.url: " << origin.error().message << "\n";
      return 1;
    }
    auto settings = std::make_shared<search::qdrant::Settings>();
    settings->origin = std::move(*origin);
    settings->api_key = config.search.qdrant_api_key;
    settings->max_candidates = config.search.qdrant_max_candidates;
    settings->mapping_ttl = config.search.qdrant_mapping_ttl;
    search_backends = search::qdrant::MakeBackendFactory(std::move(settings));
  } else if (config.search.enabled) {
    Result<std::unique_ptr<search::embedded::Engine>> opened =
        search::embedded::Engine::Open(config.search.path, config.search.queue_jobs);
    if (!opened.ok()) {
      std::cerr << "turnpike: search: " << opened.error().message << "\n";
      return 1;
    }
    search_engine = std::move(*opened);
    search::embedded::Engine* engine = search_engine.get();
    search_backends = [engine](int, boost::asio::io_context&) -> std::unique_ptr<search::Backend> {
      return std::make_unique<search::embedded::EmbeddedBackend>(*engine);
    };
  }
  search_options.prefix = config.search.prefix;
  search_options.timeout = config.search.timeout;
  // The search door's response cache: L1 always, the Redis L2 over the fleet's client (the
  // same connection as the leases) when `redis.url` is set. Both outlive the server.
  std::unique_ptr<cache::RedisL2Store> search_l2;
  std::unique_ptr<cache::Cache> search_cache;
  if (search_backends && config.search.cache_enabled && config.search.cache_ttl.count() > 0) {
    if (fleet.client) search_l2 = std::make_unique<cache::RedisL2Store>(*fleet.client);
    cache::CacheOptions cache_options;
    cache_options.name = "search";
    cache_options.l1.max_bytes = config.search.cache_max_bytes;
    cache_options.l1.tenant_max_bytes = config.search.cache_tenant_max_bytes;
    cache_options.ttl = config.search.cache_ttl;
    cache_options.workers = static_cast<size_t>(MakeServerOptions(config.server).workers);
    search_cache = std::make_unique<cache::Cache>(std::move(cache_options), search_l2.get());
    probes.cache_metrics.push_back(
        [c = search_cache.get()](observability::PrometheusWriter& w) { c->WriteMetrics(w); });
    search_options.cache = search_cache.get();
  }

  const std::vector<core::DoorSpec> doors =
      MakeDoors(llm, probes, governance.get(), admin_token, &search_options, &search_backends);
  core::Router router(/*fallback_door=*/0);
  for (size_t i = 0; i < doors.size(); ++i) router.Add(static_cast<uint16_t>(i), doors[i].routes);
  probes.route_labels = router.labels();

  core::CoreShared core{router, probes};
  for (size_t i = 0; i < doors.size(); ++i) {
    for (const std::string& prefix : doors[i].model_prefixes) {
      core.handoffs.Add(prefix, static_cast<uint16_t>(i));
    }
  }
  core.model_count = routes->models().size();
  core.server_timing = config.server.server_timing;
  core.access_log = access_log.get();
  core.tls = &tls;
  core.pool_options = upstream::PoolOptions{config.upstream.pool_max_idle_per_origin,
                                            config.upstream.pool_idle_ttl};
  if (governance) {
    core.governance = &governance->cell();
    core.call_log = &governance->thread();
    core.call_log_options = governance->buffer_options();
    core.call_log_flush = config.call_log.flush_interval;
    if (fleet.counters) core.refill_wait = config.redis.refill_wait;
    if (config.governance.snapshot_ttl.count() == 0) {
      // Read-through (debugging): every governed request waits for a fresh snapshot.
      core.refresh = [g = governance.get()] { return g->Reload(); };
    }
  }

  {
    // The server goes before the store stops: its workers flush their last call-log rows
    // when they are destroyed (store/store_thread.h, shutdown order).
    http::Server server(MakeServerOptions(config.server),
                        [&core, &doors](int index, boost::asio::io_context& context) {
                          return std::make_unique<core::Dispatcher>(core, doors, index, context);
                        });
    probes.in_flight = [&server] { return server.in_flight(); };
    Status bound = server.Bind();
    if (!bound.ok()) {
      std::cerr << "turnpike: " << bound.error().message << "\n";
      return 1;
    }
    std::cerr << config::DescribeConfig(config);
    std::printf("turnpike listening on %s:%u\n", config.server.host.c_str(), server.port());
    std::fflush(stdout);

    {
      SignalWatcher signals([&server] { server.Drain(); });
      server.Run();
    }
    if (governance) governance->CloseJobs();
    // Search legs still queued complete into the stopped loops, not destroyed ones.
    if (search_engine) search_engine->Drain();
    probes.in_flight = nullptr;
  }
  // Drained: no reservation is open, so every lease's unused part goes back (the spend is
  // reported with it).
  if (fleet.counters) fleet.counters->Stop(config.redis.command_timeout);
  if (fleet.client) fleet.client->Stop();
  probes.counters_metrics = nullptr;
  probes.cache_metrics.clear();
  if (governance) governance->Stop();
  if (access_log) access_log->Flush();
  std::cerr << "turnpike: stopped\n";
  return 0;
}

}  // namespace

void RegisterServeCommands(CLI::App& root) {
  auto config_path = std::make_shared<std::string>("turnpike.yaml");
  CLI::App* serve = root.add_subcommand("serve", "Run the gateway");
  serve->add_option("-c,--config", *config_path, "YAML config file")->capture_default_str();
  auto serve_options = std::make_shared<ServeOptions>();
  serve->add_flag(
      "--wait-for-deps", serve_options->wait_for_deps,
      "At start-up, wait for unreachable dependencies (PostgreSQL, Redis) instead of exiting");
  serve->callback([config_path, serve_options] {
    int rc = 1;
    try {
      rc = Serve(*config_path, *serve_options);
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
