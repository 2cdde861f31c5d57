// The fleet engine (store/engine.h) over PostgreSQL: every role, on the store thread, through
// libpq (pg.h). Its parts: the schema (migrations.h), the governance records and their
// LISTEN/NOTIFY change feed (records.h), the call log and spend written one statement per
// batch with idempotent replay (call_log.h), and the spool that keeps batches while the server
// is down (spool.h).
//
// Connections: `pool` connections to `url` for statements, plus one for LISTEN (`notify_url`,
// else `url`; not counted in `pool`: it holds a session, not statements). The first
// connection is the engine's own: call-log batches, the spool's replays, migrations and
// reconcile run on it, on the store thread's log lane. Each further one is a Session
// (session.h) with a lane of its own (store/store_thread.h): the second the control lane
// (admin writes, snapshot reloads, the change feed), the rest read lanes (call-log pages,
// past months' spend), so a slow admin read never delays a call-log batch or a revocation.
// `pool: 1`: everything on the one connection and the one thread, in order, as before pools.
// All are connected at start-up (OpenEngine); each reconnects on its own. Through PgBouncer in
// transaction pooling mode (give notify_url: LISTEN needs a session, which a transaction pooler
// does not keep) statements are unnamed and never pipelined: PgBouncer 1.18 tracks a client's
// transactions by ReadyForQuery, and several Syncs in flight with an error among them can hand the
// rest of a pipeline to another client (pgbouncer/pgbouncer#759, open). So: notify_url set means
// `url` is taken to be a pooler, and pipelining (only the snapshot load's four SELECTs use it) is
// off; without notify_url the connection is direct and the load is one round trip.
// Through PgBouncer every pool connection is a client connection of its own (PgBouncer's
// default_pool_size bounds the server connections behind them).
//
// Server down: statements fail at once with kUnavailable (the admin API answers 503); the call
// log spools; Tick reconnects at most every `retry` and replays the spool. Nothing here runs on
// a worker thread: no request waits for the server.
//
// Ownership: OpenEngine's caller owns the engine. Threads: store/engine.h.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "store/engine.h"
#include "store/postgres/call_log.h"
#include "store/postgres/pg.h"
#include "store/postgres/records.h"
#include "store/postgres/session.h"
#include "store/postgres/spool.h"

namespace turnpike::store::postgres {

struct EngineOptions {
  std::string url;
  std::string notify_url;  // empty: LISTEN on url (and pipelining allowed)
  int pool = 1;            // connections to url (at least 1)
  std::string spool_path;
  size_t spool_max_bytes = size_t{256} << 20;
  std::chrono::milliseconds timeout{5'000};
};

class PostgresEngine : public Engine {
 public:
  // The core role, then every registered role (store/engine.h), on the first connection.
  Status Migrate() override;
  int SchemaVersion() override;
  int RoleVersion(std::string_view role) override;
  // Takes the role's PostgreSQL half; its object is made at once for the engine and for each
  // session, each over its own connection.
  Status AddRole(const RoleSpec& spec) override;
  // The first connection (the roles' factories and the schema tests).
  Connection& connection() { return db_; }
  void Tick() override;

  size_t sessions() const override { return 1 + sessions_.size(); }
  Engine& session(size_t i) override;

  GovernanceRecords& records() override { return records_; }
  CallLogStore& call_log() override { return call_log_; }
  const StatementCounts& statements() const override { return *counts_; }

  // turnpike_store_spooled_rows (the spool's rows now) and
  // turnpike_store_spool_lost_rows_total.
  void RenderMetrics(observability::PrometheusWriter& writer) const override;

 private:
  friend Result<std::unique_ptr<PostgresEngine>> OpenEngine(const EngineOptions& options);
  explicit PostgresEngine(const EngineOptions& options);

  std::unique_ptr<StatementCounts> counts_;
  Connection db_;
  Connection listen_;
  Spool spool_;
  Records records_;
  CallLog call_log_;
  std::vector<std::unique_ptr<Session>> sessions_;  // pool - 1
  std::vector<RoleSchema> roles_;                   // registered, in order
};

// Connects (every pool connection and LISTEN's) within options.timeout each; kUnavailable naming
// the server (its password redacted) when it cannot. Does not migrate.
Result<std::unique_ptr<PostgresEngine>> OpenEngine(const EngineOptions& options);

}  // namespace turnpike::store::postgres
