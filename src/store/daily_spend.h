// Daily spend counters: one row per tenant, key, model and UTC day, with the cost, tokens and
// requests of that day. The call-log writer adds to them in the transaction that writes the
// batch (the same one that adds to the monthly spend rows, call_log.h), from every record
// whether or not the log keeps rows, so per-day and per-model spend is read from these
// counters, never summed over the log. A row the queue dropped reaches them through its
// stand-in (CallFacts::dropped_rows requests). Reconcile does not correct them: they are
// figures to look at, not what budgets enforce.
//
// DailySpendQuery / DailySpendSelect: the admin API's read, one statement text for both
// engines (`?` parameters, as records_sql.h), grouped by day and the dimensions asked for.
// DailySpendReader: that read, which an engine's call log that keeps the counters implements
// beside CallLogStore (call_log.h); the service finds it on engine.call_log() with a
// dynamic_cast, so an engine (or a test's fake) without the counters needs nothing.
//
// Thread safety: plain values and pure functions; a DailySpendReader is its engine's (called on
// the store thread only, like CallLogStore).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::store {

inline constexpr int64_t kMsPerDay = 86'400'000;

// Days since 1970-01-01 (UTC) of unix milliseconds.
inline int64_t DayOf(int64_t unix_ms) {
  return unix_ms >= 0 ? unix_ms / kMsPerDay : (unix_ms - kMsPerDay + 1) / kMsPerDay;
}
std::string FormatDay(int64_t day);  // "YYYY-MM-DD"
// "YYYY-MM-DD" as a day, or -1 when it is not a valid date.
int64_t ParseDay(std::string_view text);

struct DailySpendRow {
  std::string day;        // "YYYY-MM-DD"
  std::string tenant_id;  // "" when not grouped by tenant
  std::string key_id;     // "" when not grouped by key
  std::string model;      // "" when not grouped by model
  int64_t cost_micros = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t requests = 0;
};

// Days from `from_day` to `to_day` (both "YYYY-MM-DD", inclusive); empty filters do not filter.
struct DailySpendQuery {
  std::string from_day;
  std::string to_day;
  std::string tenant_id;
  std::string key_id;
  bool by_tenant = false;
  bool by_key = false;
  bool by_model = true;
  int limit = 10'000;  // rows at most
};

// The SELECT of `query`: parameters from_day, to_day, then tenant_id and key_id when set, then
// the limit; result columns as DailySpendRow, in its order; day first, then the dimensions.
std::string DailySpendSelect(const DailySpendQuery& query);

class DailySpendReader {
 public:
  virtual ~DailySpendReader() = default;
  // The counters' rows of `query`, summed over the dimensions it does not group by.
  virtual Result<std::vector<DailySpendRow>> QueryDailySpend(const DailySpendQuery& query) = 0;
};

}  // namespace turnpike::store
