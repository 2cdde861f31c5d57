#include "app/store_setup.h"

#include <functional>
#include <utility>

#include "app/wait_for_deps.h"
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
  (void)config;  // a role of a feature that is off is not registered
  std::vector<store::RoleSpec> roles;
  return roles;
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
  // An engine notified of changes (PostgreSQL LISTEN) wakes its control lane itself
  // (store_thread.h): the tick stays the default for every engine.
  Store opened;
  opened.thread = std::make_unique<store::StoreThread>(*engine.value(), thread_options);
  opened.engine = std::move(engine.value());
  return opened;
}

}  // namespace turnpike::app
