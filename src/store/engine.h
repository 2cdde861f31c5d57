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
//
// Ownership: the opener owns the engine (a unique_ptr); the roles are parts of it and live as
// long as it does.
// Threads: one thread at a time. The opener may migrate and load before the store thread
// starts; from then on only the store thread calls the engine, except statements(), which any
// thread may read.
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
};

}  // namespace turnpike::store
