#include "app/store_setup.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "app/wait_for_deps.h"
#include "control/security_store.h"
#include "store/postgres/engine.h"
#include "store/sqlite/engine.h"

namespace turnpike::app {
namespace {

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
  options.timeout = config.fleet.outage_deadline;  // connect and every round trip
  const std::function<Result<std::unique_ptr<store::Engine>>()> open =
      [&options]() -> Result<std::unique_ptr<store::Engine>> {
    Result<std::unique_ptr<store::postgres::PostgresEngine>> engine =
        store::postgres::OpenEngine(options);
    if (!engine.ok()) return engine.error();
    return std::unique_ptr<store::Engine>(std::move(engine.value()));
  };
  return WaitForDependency("PostgreSQL", wait_for_deps, open);
}

}  // namespace

// One line per role, e.g. `if (config.agents.enabled) roles.push_back(agents::StoreRole());`.
// The core role (governance records, call log, spend) is the engines' own.
std::vector<store::RoleSpec> StoreRoles(const config::Config& config) {
  // A role of a feature that is off is not registered.
  std::vector<store::RoleSpec> roles;
  if (config.governance.enabled) roles.push_back(control::SecurityRole());
  return roles;
}

Result<std::unique_ptr<governance::DataKeys>> LoadDataKeys(const config::Config& config) {
  std::string text;
  std::string source = "TURNPIKE_DATA_KEY";
  if (!config.security.data_key_file.empty()) {
    source = config.security.data_key_file;
    std::ifstream in(source, std::ios::binary);
    std::ostringstream read;
    read << in.rdbuf();
    if (!in) return Error{ErrorCode::kInvalidRequest, source + ": cannot read the data keys", ""};
    text = read.str();
  } else if (const char* env = std::getenv("TURNPIKE_DATA_KEY"); env != nullptr) {
    text = env;
  } else {
    return std::unique_ptr<governance::DataKeys>();
  }
  Result<governance::DataKeys> keys = governance::DataKeys::Parse(text);
  if (!keys.ok()) {
    return Error{keys.error().code, "security: " + source + ": " + keys.error().message, ""};
  }
  return std::make_unique<governance::DataKeys>(std::move(keys.value()));
}

Result<Store> OpenStore(const config::Config& config, const std::vector<store::RoleSpec>& roles,
                        bool wait_for_deps) {
  Result<std::unique_ptr<store::Engine>> engine = OpenStoreEngine(config, wait_for_deps);
  if (!engine.ok()) return engine.error();
  for (const store::RoleSpec& role : roles) {
    Status added = engine.value()->AddRole(role);
    if (!added.ok()) return added.error();
  }
  Status migrated = engine.value()->Migrate();
  if (!migrated.ok()) return migrated.error();
  store::StoreThreadOptions thread_options;
  thread_options.max_jobs = config.store.queue_jobs;
  thread_options.max_records = config.call_log.queue_rows;
  thread_options.batch_rows = config.call_log.batch_rows;
  // A server that does not answer: a request waits for a store job at most this long.
  if (config.store.engine == config::StoreConfig::Engine::kPostgres) {
    thread_options.call_deadline = config.fleet.outage_deadline;
  }
  // An engine notified of changes (PostgreSQL LISTEN) wakes its control lane itself
  // (store_thread.h): the tick stays the default for every engine.
  Store opened;
  opened.thread = std::make_unique<store::StoreThread>(*engine.value(), thread_options);
  opened.engine = std::move(engine.value());
  return opened;
}

}  // namespace turnpike::app
