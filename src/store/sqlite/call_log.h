// The embedded engine's call log and spend sink (store/call_log.h). Writing
// (call_log_write.cc) is the store thread's per-request cost and is built to be cheap per row:
// multi-row INSERTs, parameters rebound only when they change, a row's repeating names as the
// id of its route (call_routes.h), no secondary index on the rows but two coarse ones written
// once per batch or month. Paging is in call_log_query.cc; spend (monthly and daily) and the
// reconcile sums in spend.cc.
//
// Ownership: part of SqliteEngine (engine.h); borrows its Database.
// Threads: the engine's.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/call_log.h"
#include "store/daily_spend.h"
#include "store/sqlite/call_routes.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

class CallLog : public CallLogStore, public DailySpendReader {
 public:
  explicit CallLog(Database& db) : db_(db) {}

  Status WriteCalls(CallBatchParts parts, bool log_rows,
                    std::span<const SpendRow> extra_spend) override;
  Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) override;
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) override;
  Result<std::vector<DailySpendRow>> QueryDailySpend(const DailySpendQuery& query) override;
  Result<std::vector<SpendRow>> SumCallLog(const std::string& month) override;
  Result<std::vector<SpendRow>> ReconcileSpend(std::span<const std::string> months) override;
  Result<int64_t> PurgeBefore(int64_t cutoff_ms, int64_t limit) override;  // call_log_purge.cc

 private:
  // A record WriteCalls is inserting, with its position in the transaction's TxRoutes.
  struct Row {
    const CallBatch* batch;
    size_t index;  // in batch
    size_t route;  // in TxRoutes
  };
  // The distinct routes of one transaction's rows, in first-seen order (call_log_write.cc).
  struct TxRoutes;

  // Inserts rows_ into the call log, filling each route's id and id range in `routes`; months
  // whose first row it inserted go to `noting`.
  Status InsertCalls(TxRoutes& routes, std::vector<governance::MonthId>& noting);
  // Records [first_id, last_id] as an id range holding rows of `tenant_id` (call_log_blocks).
  Status NoteTenantBlock(std::string_view tenant_id, int64_t first_id, int64_t last_id);
  // Records `first_id` as the first call-log row of `month` (call_log_months).
  Status NoteMonth(std::string_view month, int64_t first_id);
  Status AddSpend(SpendScope scope, std::string_view scope_id, std::string_view month,
                  int64_t micros);
  // Adds to one daily counter (daily_spend.h).
  Status AddDailySpend(std::string_view tenant_id, std::string_view key_id, std::string_view model,
                       std::string_view day, int64_t cost_micros, int64_t prompt_tokens,
                       int64_t completion_tokens, int64_t requests);

  Database& db_;
  std::unique_ptr<Statement> insert_call_;   // one row
  std::unique_ptr<Statement> insert_calls_;  // kRowsPerInsert rows (call_log_write.cc)
  std::unique_ptr<Statement> insert_month_;
  std::unique_ptr<Statement> insert_block_;
  std::vector<Row> rows_;  // the rows WriteCalls is inserting
  CallRoutes routes_;      // their routes' ids
  // Months whose first call-log row is in call_log_months (committed).
  std::vector<governance::MonthId> months_noted_;
  std::unique_ptr<Statement> add_spend_;
  std::unique_ptr<Statement> add_daily_spend_;
};

}  // namespace turnpike::store::sqlite
