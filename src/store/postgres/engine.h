// The fleet engine (store/engine.h) over PostgreSQL: every role, on the store thread, through
// libpq (pg.h). Its parts: the schema (migrations.h), the governance records and their
// LISTEN/NOTIFY change feed (records.h), the call log and spend written one statement per
// batch with idempotent replay (call_log.h), and the spool that keeps batches while the server
// is down (spool.h).
//
// Connections: the store thread holds one connection for every statement (`url`), and one
// for LISTEN (`notify_url`, else `url`). Through PgBouncer in transaction pooling mode (give
// notify_url: LISTEN needs a session, which a transaction pooler does not keep) statements
// are unnamed and never pipelined: PgBouncer 1.18 tracks a client's transactions by
// ReadyForQuery, and several Syncs in flight with an error among them can hand the rest of a
// pipeline to another client (pgbouncer/pgbouncer#759, open). So: notify_url set means `url`
// is taken to be a pooler, and pipelining (only the snapshot load's four SELECTs use it) is
// off; without notify_url the connection is direct and the load is one round trip.
// `pool` (connections per replica) is accepted and bounds nothing more yet: the store thread
// is one thread and uses one connection (not implemented: several store connections).
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

#include "store/engine.h"
#include "store/postgres/call_log.h"
#include "store/postgres/pg.h"
#include "store/postgres/records.h"
#include "store/postgres/spool.h"

namespace turnpike::store::postgres {

struct EngineOptions {
  std::string url;
  std::string notify_url;  // empty: LISTEN on url (and pipelining allowed)
  std::string spool_path;
  size_t spool_max_bytes = size_t{256} << 20;
  std::chrono::milliseconds timeout{5'000};
};

class PostgresEngine : public Engine {
 public:
  Status Migrate() override;
  int SchemaVersion() override;
  void Tick() override;

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
};

// Connects (both connections) within options.timeout; kUnavailable naming the server (its
// password redacted) when it cannot. Does not migrate.
Result<std::unique_ptr<PostgresEngine>> OpenEngine(const EngineOptions& options);

}  // namespace turnpike::store::postgres
