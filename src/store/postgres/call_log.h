// The PostgreSQL engine's call log and spend sink (store/call_log.h).
//
// WriteCalls is one statement per batch, so one round trip and its own transaction: the rows
// go in as arrays (unnest: a fixed 26 parameters whatever the row count, no statement text
// per batch size), INSERT ... ON CONFLICT (row_key) DO NOTHING RETURNING what was inserted,
// and the spend rows are upserted from what that RETURNING gave, in the same statement. So a
// batch sent twice (a replay after an ambiguous failure) inserts no row twice and adds no
// spend twice. Each record gets a row key when first written (this process's random nonce
// and a sequence number): the request id cannot be the key, because a client may send the
// same x-request-id for different requests. With log_store off there are no rows to key and
// the spend is added as given (a replay may add it twice; not deduplicated).
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
  std::string nonce_;      // this process's row-key prefix
  uint64_t next_row_ = 0;  // row-key sequence
};

}  // namespace turnpike::store::postgres
