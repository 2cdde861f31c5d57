#include "store/sqlite/engine.h"

#include <utility>

#include "store/sqlite/migrations.h"

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

Status SqliteEngine::Migrate() { return MigrateTo(LatestSchemaVersion()); }

Status SqliteEngine::MigrateTo(int version) { return sqlite::MigrateTo(*db_, version); }

int SqliteEngine::SchemaVersion() { return sqlite::SchemaVersion(*db_); }

}  // namespace turnpike::store::sqlite
