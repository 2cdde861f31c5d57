#include "app/serve_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "admin/admin_api.h"
#include "app/signals.h"
#include "config/config.h"
#include "config/describe.h"
#include "control/governance_service.h"
#include "gateway/llm_handler.h"
#include "http/server.h"
#include "observability/access_log.h"
#include "pipeline/route_table.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/registry.h"
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

// The embedded engine (SQLite) over config `store:`, its store thread, and the service that
// owns both (control/governance_service.h).
Result<std::unique_ptr<control::GovernanceService>> StartGovernance(const config::Config& config) {
  store::sqlite::EngineOptions engine_options;
  engine_options.synchronous_full = config.store.synchronous_full;
  Result<std::unique_ptr<store::sqlite::SqliteEngine>> engine =
      store::sqlite::OpenEngine(config.store.path, engine_options);
  if (!engine.ok()) return engine.error();
  store::StoreThreadOptions thread_options;
  thread_options.max_jobs = config.store.queue_jobs;
  thread_options.max_records = config.call_log.queue_rows;
  thread_options.batch_rows = config.call_log.batch_rows;
  auto thread = std::make_unique<store::StoreThread>(*engine.value(), thread_options);
  return control::GovernanceService::Start(config, std::move(engine.value()), std::move(thread));
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

int Serve(const std::string& config_path) {
  SignalWatcher::BlockSignals();  // before the first thread (store, access log) starts
  const config::Config config = config::LoadConfig(config_path);
  const std::unique_ptr<providers::Registry> registry = MakeRegistry();
  const auto routes = pipeline::RouteTable::Build(config, *registry);
  bool any_tls = false;
  for (const auto& model : routes->models()) {
    for (const auto& deployment : model.deployments) any_tls |= deployment.origin.tls;
  }
  const upstream::TlsContexts tls(config.upstream.ca_file, any_tls);
  auto access_log = OpenAccessLog(config.server.access_log);

  gateway::ProbeRegistry probes;
  for (const auto& model : routes->models()) probes.model_names.push_back(model.name);
  if (access_log)
    probes.access_log_dropped = [sink = access_log.get()] { return sink->dropped_lines(); };
  gateway::GatewayShared shared{config, routes, tls, access_log.get(), probes};
  shared.providers = registry.get();

  std::unique_ptr<control::GovernanceService> governance;
  std::unique_ptr<admin::AdminApi> admin_api;
  if (config.governance.enabled) {
    Result<std::unique_ptr<control::GovernanceService>> opened = StartGovernance(config);
    if (!opened.ok()) {
      std::cerr << "turnpike: " << opened.error().message << "\n";
      return 1;
    }
    governance = std::move(opened.value());
    const char* token = std::getenv("TURNPIKE_ADMIN_TOKEN");
    admin_api = std::make_unique<admin::AdminApi>(*governance, token != nullptr ? token : "");
    shared.governance = governance.get();
    shared.admin = admin_api.get();
    probes.store_metrics = [g = governance.get()](observability::PrometheusWriter& w) {
      g->RenderMetrics(w);
    };
    if (token == nullptr || *token == '\0') {
      std::cerr << "turnpike: TURNPIKE_ADMIN_TOKEN is not set: the admin API is off\n";
    }
    if (governance->cell().Load()->key_count() == 0) {
      std::cerr << "turnpike: no API keys yet; create a plan, a tenant and a key with "
                   "`turnpike admin` (see README)\n";
    }
  }

  {
    // The server goes before the store stops: its workers flush their last call-log rows
    // when they are destroyed (store/store_thread.h, shutdown order).
    http::Server server(MakeServerOptions(config.server),
                        [&shared](int index, boost::asio::io_context& context) {
                          return std::make_unique<gateway::LlmHandler>(shared, index, context);
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
    probes.in_flight = nullptr;
  }
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
  serve->callback([config_path] {
    int rc = 1;
    try {
      rc = Serve(*config_path);
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
      pipeline::RouteTable::Build(config, *MakeRegistry());
      std::cout << config::DescribeConfig(config) << "config OK\n";
      std::exit(0);
    } catch (const std::exception& e) {
      std::cerr << "turnpike: config error: " << e.what() << "\n";
      std::exit(1);
    }
  });
}

}  // namespace turnpike::app
