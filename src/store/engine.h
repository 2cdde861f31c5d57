// Engine: one storage engine's implementation of the store's roles, and the schema it keeps.
// The core speaks only roles; each engine lives in its own subfolder of store/, and only the
// composition root (app/) knows which one runs and opens it.
//
//   records()     GovernanceRecords (records.h): plans, tenants, keys, prices + change feed
//   call_log()    CallLogStore (call_log.h): the call log and the spend sink
//   statements()  StatementCounts (statements.h): what the engine executed, by purpose
//   Tick()        periodic upkeep on the store thread (every store-thread tick): a network
//                 engine reconnects and replays what it spooled while its server was down
//   Migrate()     the schema: an engine versions its schema and brings it to this binary's
//                 version in order, each step all or nothing; it refuses a schema newer than
//                 the binary (kInternal)
//   session(i)    sessions: an engine with a pool of connections (PostgreSQL `store.pool`)
//                 offers sessions() > 1 views of itself, each an Engine over its own
//                 connection, so that several store threads run statements at once (the store
//                 thread's lanes, store_thread.h). session(0) is the engine itself: it alone
//                 writes call-log batches, migrates and ticks; the others serve records and
//                 call-log reads and admin writes (their Migrate refuses, their Tick does
//                 nothing). The embedded engine has one session.
//
// Ownership: the opener owns the engine (a unique_ptr); the roles are parts of it and live as
// long as it does.
// Threads: each session one thread at a time, sessions in parallel with each other. The opener
// may migrate and load before the store threads start; from then on only the store thread of
// a session calls it, except statements() (shared by every session), which any thread reads.
#pragma once

#include "common/result.h"
#include "store/call_log.h"
#include "store/records.h"
#include "store/statements.h"

namespace turnpike::store {

class Engine {
 public:
  virtual ~Engine() = default;

  // Applies the schema versions the engine has not seen yet, in order (see above).
  virtual Status Migrate() = 0;
  // The schema version the engine holds; 0 before the first migration.
  virtual int SchemaVersion() = 0;

  // Periodic upkeep (see above); the embedded engine has none.
  virtual void Tick() {}
  // The engine's own series beyond statements() (a network engine's spool); any thread.
  virtual void RenderMetrics(observability::PrometheusWriter& writer) const { (void)writer; }

  virtual GovernanceRecords& records() = 0;
  virtual CallLogStore& call_log() = 0;
  virtual const StatementCounts& statements() const = 0;

  // Sessions (see above): at least 1; session(0) is *this.
  virtual size_t sessions() const { return 1; }
  virtual Engine& session(size_t i) {
    (void)i;
    return *this;
  }
};

}  // namespace turnpike::store
