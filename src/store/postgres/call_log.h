// The PostgreSQL engine's call log and spend sink (store/call_log.h).
//
// WriteCalls is one statement per batch, so one round trip and its own transaction: the rows
// go in as arrays (unnest: a fixed 26 parameters whatever the row count, no statement text
// per batch size), the spend rows are upserted from what the INSERT's RETURNING gave, and the
// whole batch is conditional on its batch key (this process's random nonce and a sequence
// number) being new in call_log_batches (PRIMARY KEY). A batch is only ever sent again whole
// and byte for byte (the spool keeps its parameters), so a replay after an ambiguous failure
// (sent, then the connection broke: committed or not?) writes no row and no spend twice. One
// key per batch, not per row: a UNIQUE index on the rows would cost every row an index entry
// (docs/BENCHMARKS.md), and the request id cannot be the key anyway (a client may send the
// same x-request-id for different requests). The same holds with log_store off (spend only).
//
// Server unreachable (kUnavailable from the connection): the batch's parameters go to the
// spool (spool.h) and WriteCalls succeeds; the spool is replayed before the next batch and on
// every Tick (engine.h) until the server answers. A full spool, or an error the server
// reports for the rows themselves, fails the batch (the service counts its rows as lost).
//
// Ownership: part of PostgresEngine (engine.h); borrows its connection and spool.
// Threads: the engine's.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store/call_log.h"
#include "store/postgres/pg.h"
#include "store/postgres/spool.h"

namespace turnpike::store::postgres {

class CallLog : public CallLogStore {
 public:
  CallLog(Connection& db, Spool& spool);

  Status WriteCalls(CallBatchParts parts, bool log_rows,
                    std::span<const SpendRow> extra_spend) override;
  Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) override;
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) override;
  Result<std::vector<SpendRow>> SumCallLog(const std::string& month) override;
  Status SetSpend(std::span<const SpendRow> rows) override;

  // Sends what the spool holds (Tick, and before each batch).
  Status ReplaySpool();

 private:
  Status Send(const Params& params);

  Connection& db_;
  Spool& spool_;
  std::string nonce_;        // this process's batch-key prefix
  uint64_t next_batch_ = 0;  // batch-key sequence
};

}  // namespace turnpike::store::postgres
