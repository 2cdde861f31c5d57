// The PostgreSQL engine's call log and spend sink (store/call_log.h).
//
// WriteCalls is one transaction per batch, sent as one simple-protocol query (BatchSql in
// call_log_columns.h): the batch key (this process's random nonce and a sequence number)
// inserted into call_log_batches (PRIMARY KEY) with a new block of ids from a sequence, then
// the rows through COPY ... FROM STDIN (binary format) into call_log_chunks: a tuple per chunk
// of up to 4,096 rows, an array per column (ids are the block's, in order: a batch's rows are
// contiguous and no id is drawn per row), then each tenant's id range in the batch
// (call_log_blocks) and each month's first id (call_log_months), then the spend per scope and
// the daily counters (store/daily_spend.h), summed here, upserted from arrays. Without
// BEGIN/COMMIT the statements of one query are one transaction: all or nothing. Two round trips
// (libpq sends COPY's data only once the server has asked for it, after the block came back); a
// third, before, only when the batch has a route this process has not seen (call_routes.h).
// The layout (migrations 6 and 7): no per-row index entry and no per-row tuple; PostgreSQL's
// per-row costs (a heap tuple, its primary-key entry, COPY's parsing) were most of what a
// request cost the cluster (docs/BENCHMARKS.md). A batch is only ever sent again whole and byte
// for byte (the spool keeps its parameters), so a replay after an ambiguous failure (sent,
// then the connection broke: committed or not?) fails on its key before any row (taken as
// done: it was committed) and writes no row and no spend twice. One key per batch, not per
// row: every row belongs to exactly one batch forever, and the request id cannot be the key
// anyway (a client may send the same x-request-id for different requests). The same holds
// with log_store off (spend only: no COPY).
//
// Server unreachable (kUnavailable from the connection): the batch's parameters go to the
// spool (spool.h) and WriteCalls succeeds; the spool is replayed before the next batch and on
// every Tick (engine.h) until the server answers. A full spool, or an error the server
// reports for the rows themselves, fails the batch (the service counts its rows as lost).
//
// Ownership: part of PostgresEngine (engine.h); borrows its connection and spool.
// Threads: the engine's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/call_log.h"
#include "store/daily_spend.h"
#include "store/postgres/call_log_columns.h"
#include "store/postgres/call_routes.h"
#include "store/postgres/pg.h"
#include "store/postgres/spool.h"

namespace turnpike::store::postgres {

class CallLog : public CallLogStore, public DailySpendReader {
 public:
  CallLog(Connection& db, Spool& spool);

  Status WriteCalls(CallBatchParts parts, bool log_rows,
                    std::span<const SpendRow> extra_spend) override;
  Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) override;
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) override;
  Result<std::vector<DailySpendRow>> QueryDailySpend(const DailySpendQuery& query) override;
  Result<std::vector<SpendRow>> SumCallLog(const std::string& month) override;
  Result<std::vector<SpendRow>> ReconcileSpend(std::span<const std::string> months) override;
  Result<int64_t> PurgeBefore(int64_t cutoff_ms, int64_t limit) override;  // call_log_purge.cc

  // Sends what the spool holds (Tick, and before each batch).
  Status ReplaySpool();

 private:
  // One batch as sent and spooled (WriteCalls): the format, the batch key, the rows' routes
  // and chunks (both absent for no rows), the spend arrays, the daily counters' arrays (absent
  // in a batch spooled before them: format 8 and earlier).
  static constexpr size_t kDailyAt = 4 + columns::kSpendArrays;
  using BatchParts = std::array<std::optional<std::string_view>, kDailyAt + columns::kDailyArrays>;
  Status Send(const BatchParts& batch);
  Status Send(const Params& params);         // a spooled batch
  Status SendFormat6(const Params& params);  // one a binary of schema 6 spooled

  Connection& db_;
  Spool& spool_;
  CallRoutes routes_;
  // Reused from batch to batch (their capacity stays): the chunks' column arrays, the script,
  // the routes read, the rows as sent.
  columns::CopyText routes_text_;
  columns::ChunkWriter chunks_;
  std::string sql_;
  BatchRows batch_;
  std::string copy_;
  std::string nonce_;        // this process's batch-key prefix
  uint64_t next_batch_ = 0;  // batch-key sequence
};

}  // namespace turnpike::store::postgres
