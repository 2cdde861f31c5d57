// Session: one more connection of the PostgreSQL engine's pool (`store.pool`), as an Engine of
// its own (store/engine.h, sessions) for one store-thread lane (store/store_thread.h): the
// control lane (admin writes, snapshot reloads, the change feed) or a read lane (call-log
// pages, past months' spend). Its records and call log are the engine's classes over this
// connection, so a slow admin read waits on its own socket while the engine's first
// connection keeps writing call-log batches.
//
// What a session does not do: write call-log batches (its CallLog shares the engine's spool
// only because the class needs one; the spool is the log lane's, and WriteCalls is never
// called on a session), migrate (refused: the engine migrates, on its own connection, before
// the lanes start) or tick (nothing to do). Its Records may read the engine's LISTEN
// connection: only the control lane's session does (Notified, on its tick), so the feed's own
// writes (this session's backend) are the ones it ignores.
//
// Ownership: PostgresEngine owns its sessions; a session borrows the engine's statement
// counts, LISTEN connection and spool, which live as long as the engine.
// Threads: one thread at a time (its lane's), in parallel with the other sessions.
#pragma once

#include "store/engine.h"
#include "store/postgres/call_log.h"
#include "store/postgres/pg.h"
#include "store/postgres/records.h"
#include "store/postgres/spool.h"

namespace turnpike::store::postgres {

class Session : public Engine {
 public:
  Session(ConnectionOptions options, StatementCounts& counts, Connection& listen, Spool& spool);

  // kInternal: the engine migrates (see above).
  Status Migrate() override;
  int SchemaVersion() override;

  GovernanceRecords& records() override { return records_; }
  CallLogStore& call_log() override { return call_log_; }
  const StatementCounts& statements() const override { return counts_; }

  Connection& connection() { return db_; }
  // A registered role's object for this session (PostgresEngine::AddRole).
  void Adopt(std::unique_ptr<Role> role) { AdoptRole(std::move(role)); }

 private:
  StatementCounts& counts_;
  Connection db_;
  Records records_;
  CallLog call_log_;
};

}  // namespace turnpike::store::postgres
