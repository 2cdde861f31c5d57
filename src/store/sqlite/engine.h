// The embedded engine (store/engine.h): one SQLite file in WAL mode, holding every role. Its
// parts: the wrapper (sqlite.h), the schema (migrations.h), the governance records
// (records.h), the call log and spend (call_log.h). app/ opens it with OpenEngine.
//
// Ownership: OpenEngine's caller owns the engine; it owns its connection and statement counts.
// Threads: one at a time (store/engine.h): the opener, then the store thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "store/engine.h"
#include "store/sqlite/call_log.h"
#include "store/sqlite/records.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

struct EngineOptions {
  // synchronous FULL: a commit survives a power loss; NORMAL (default): a process crash only.
  bool synchronous_full = false;
};

class SqliteEngine : public Engine {
 public:
  // The core role, then every registered role (store/engine.h).
  Status Migrate() override;
  // Applies the core role's migrations up to schema `version` only (tests of a migration over
  // old data).
  Status MigrateTo(int version);
  int SchemaVersion() override;
  int RoleVersion(std::string_view role) override;
  // Takes the role's SQLite half; its object is made at once over the connection.
  Status AddRole(const RoleSpec& spec) override;
  // The connection (the roles' factories and the schema tests).
  Database& database() { return *db_; }

  GovernanceRecords& records() override { return records_; }
  CallLogStore& call_log() override { return call_log_; }
  const StatementCounts& statements() const override { return *counts_; }
  // Samples the connection's page cache for RenderMetrics (on the store thread).
  void Tick() override;
  // turnpike_store_cache_bytes: the store connection's page cache at the last Tick (bounded
  // by SQLite's cache_size; SQLite's own process-wide memory statistics are off, sqlite.cc).
  void RenderMetrics(observability::PrometheusWriter& writer) const override;

 private:
  friend Result<std::unique_ptr<SqliteEngine>> OpenEngine(const std::string& path,
                                                          EngineOptions options);
  SqliteEngine(std::unique_ptr<StatementCounts> counts, std::unique_ptr<Database> db);

  // Declared in the order they are needed: the connection counts into counts_, the roles
  // prepare their statements on db_ (and finalize them before it closes).
  std::unique_ptr<StatementCounts> counts_;
  std::unique_ptr<Database> db_;
  Records records_;
  CallLog call_log_;
  std::vector<RoleSchema> roles_;        // registered, in order
  std::atomic<int64_t> cache_bytes_{0};  // written by Tick, read by RenderMetrics
};

// Opens (creating, with its directory) the file at `path`; does not migrate. kInternal with
// SQLite's message if it cannot.
Result<std::unique_ptr<SqliteEngine>> OpenEngine(const std::string& path, EngineOptions options);

}  // namespace turnpike::store::sqlite
