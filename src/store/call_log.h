// CallLogStore: the call log and the spend sink, one role an engine implements (engine.h). The
// store thread writes what workers hand it in batches (group commit); the admin API pages
// through the log; the reconcile job compares the log's sums with the persisted spend.
//
// Spend: one row per scope ("tenant" or "key"), scope id and month ("YYYY-MM"). WriteCalls
// adds each record's cost to its tenant's and key's rows in the same transaction that adds the
// records to the log, so the persisted spend always equals the sum of the logged rows plus the
// spend of rows that were never logged (log_store off, or dropped by the queue's drop policy);
// the reconcile job finds the latter as drift. A fleet engine may replay a batch after a
// failure it cannot tell from a commit, so it must make WriteCalls idempotent per batch; the
// embedded engine's transactions either commit or report an error.
//
// Threads: called only from the store thread (store_thread.h).
// Errors: kInternal when the engine fails; nothing is half-written (each call is one
// transaction).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/call_record.h"

namespace turnpike::store {

enum class SpendScope { kTenant, kKey };

struct SpendRow {
  SpendScope scope = SpendScope::kTenant;
  std::string scope_id;  // tenant id or key public id
  std::string month;     // "YYYY-MM"
  int64_t spent_micros = 0;
};

// Filters of a call-log page; unset fields do not filter. Newest first; `before_id` continues
// a page (the last id of the previous page).
struct CallQuery {
  std::string tenant_id;
  std::string key_id;
  std::string model;
  int status = 0;
  int64_t since_ms = 0;
  int64_t until_ms = 0;  // 0: no upper bound
  int64_t before_id = 0;
  int limit = 100;
};

struct CallRow {
  int64_t id = 0;
  CallRecord record;
};

class CallLogStore {
 public:
  virtual ~CallLogStore() = default;

  // One transaction: adds the records of every part, in order, to the call log when
  // `log_rows`, and adds their costs to the spend rows (+ `extra_spend`, spend carried without
  // a record). The parts' batches are only read, and only during the call.
  virtual Status WriteCalls(CallBatchParts parts, bool log_rows,
                            std::span<const SpendRow> extra_spend) = 0;

  virtual Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) = 0;

  // Spend rows of the given months (every scope).
  virtual Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) = 0;

  // The call log's cost per scope in `month`.
  virtual Result<std::vector<SpendRow>> SumCallLog(const std::string& month) = 0;
  // Reconcile `months`: in each, each scope's spend row against the call log's sum, both read
  // as of one snapshot, and the difference added to the spend row (an addition, not an
  // overwrite: a batch that commits meanwhile, from this process or another, keeps its spend).
  // All the months in one transaction, so one reconcile of a store at a time covers them all:
  // kConflict while another replica's runs, with nothing changed in any month. Returns the
  // differences added, one row per month and scope that drifted (spent_micros: log sum - spend
  // row).
  virtual Result<std::vector<SpendRow>> ReconcileSpend(std::span<const std::string> months) = 0;

  // Retention: deletes call-log rows older than `cutoff_ms` (unix milliseconds), oldest first,
  // about `limit` rows per call at most (whole chunks where the engine keeps rows in chunks),
  // in one transaction; returns how many rows went. Rows are taken in id order up to the first
  // one at or after the cutoff (ids follow time within a group commit's window), so a call
  // costs about what it deletes, not a scan of the log. The newest row always stays, so ids
  // are never reused. Spend rows are untouched. An engine without it deletes nothing.
  virtual Result<int64_t> PurgeBefore(int64_t cutoff_ms, int64_t limit) {
    (void)cutoff_ms;
    (void)limit;
    return int64_t{0};
  }
};

}  // namespace turnpike::store
