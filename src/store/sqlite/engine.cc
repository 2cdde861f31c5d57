#include "store/sqlite/engine.h"

#include <sqlite3.h>

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

void SqliteEngine::RenderMetrics(observability::PrometheusWriter& w) const {
  w.Family("turnpike_sqlite_memory_bytes",
           "Heap memory SQLite holds in this process (all connections; sqlite3_memory_used).",
           observability::MetricType::kGauge);
  w.Sample("turnpike_sqlite_memory_bytes", {}, static_cast<double>(sqlite3_memory_used()));
}

}  // namespace turnpike::store::sqlite
