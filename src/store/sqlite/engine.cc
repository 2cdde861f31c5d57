#include "store/sqlite/engine.h"

#include <utility>

#include "store/sqlite/migrations.h"
#include "store/sqlite/sql_session.h"

namespace turnpike::store::sqlite {

Result<std::unique_ptr<SqliteEngine>> OpenEngine(const std::string& path, EngineOptions options) {
  auto counts = std::make_unique<StatementCounts>();
  Result<std::unique_ptr<Database>> db =
      Database::Open(path, options.synchronous_full, counts.get());
  if (!db.ok()) return db.error();
  return std::unique_ptr<SqliteEngine>(new SqliteEngine(std::move(counts), std::move(db.value())));
}

SqliteEngine::SqliteEngine(std::unique_ptr<StatementCounts> counts, std::unique_ptr<Database> db)
    : counts_(std::move(counts)), db_(std::move(db)), records_(*db_), call_log_(*db_) {}

Status SqliteEngine::Migrate() {
  Status core = MigrateTo(LatestSchemaVersion());
  if (!core.ok()) return core;
  for (const RoleSchema& role : roles_) {
    Status migrated = MigrateRole(*db_, role.name, role.sqlite.migrations,
                                  static_cast<int>(role.sqlite.migrations.size()));
    if (!migrated.ok()) return migrated;
  }
  return Ok{};
}

Status SqliteEngine::MigrateTo(int version) { return sqlite::MigrateTo(*db_, version); }

int SqliteEngine::SchemaVersion() { return sqlite::SchemaVersion(*db_); }

int SqliteEngine::RoleVersion(std::string_view role) { return sqlite::RoleVersion(*db_, role); }

Status SqliteEngine::AddRole(const RoleSpec& spec) {
  Result<std::vector<StoreOp>> ops = CheckRole(spec, spec.schema.sqlite, roles_, *counts_);
  if (!ops.ok()) return ops.error();
  roles_.push_back(spec.schema);
  if (spec.sqlite) AdoptRole(spec.sqlite(*db_, ops.value()));
  if (spec.portable) AdoptRole(spec.portable(MakeSqlSession(*db_), ops.value()));
  return Ok{};
}

void SqliteEngine::Tick() { cache_bytes_.store(db_->CacheBytes(), std::memory_order_relaxed); }

void SqliteEngine::RenderMetrics(observability::PrometheusWriter& w) const {
  w.Family("turnpike_store_cache_bytes",
           "Page cache of the store's SQLite connection, sampled every store tick.",
           observability::MetricType::kGauge);
  w.Sample("turnpike_store_cache_bytes", {},
           static_cast<double>(cache_bytes_.load(std::memory_order_relaxed)));
}

}  // namespace turnpike::store::sqlite
