// Monthly spend budgets with reserve-before-admit (DESIGN.md "Rules of the hot path" 5): the
// units, the months and what a budget counter (counters.h) means.
//
// A budget counter is one scope (a tenant, or a key) in the current UTC calendar month; all
// amounts are integer micro-USD. Admission reserves the request's maximum cost; the end of the
// request settles the actual cost (or releases the reservation if nothing was spent). The
// admission test is spent + reserved + estimate <= cap, and two workers can never both take
// the last of a budget.
//
// The ledger: no map is looked up on the request path. GovernanceSnapshot::Build creates one
// counter per tenant and per key and hands the same objects on to the next snapshot, so a
// config change never resets spend (snapshot.h). The first reservation of a new month starts
// the counter's month at zero. A reservation made under an older month than the counter's (a
// worker whose clock read happened just before midnight) is charged to the newer month;
// settling or releasing a reservation whose month has passed changes nothing in the counter
// (its spend belongs to a closed month: the call log and the reconcile job account it).
// Reading spent and committed together is not a consistent snapshot while requests run.
//
// Limits: amounts and caps up to kMaxBudgetMicros (2^47 - 1, ~140 million USD per scope and
// month); months up to year 7431.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "governance/cost.h"

namespace turnpike::governance {

// Months since 1970-01, UTC.
using MonthId = uint32_t;

// A plan's budget-alert thresholds (Plan::budget_alerts, budget_alerts.h): at most this many,
// each a whole percent of the monthly budget from 1 to this.
inline constexpr size_t kMaxBudgetAlerts = 16;
inline constexpr int kMaxBudgetAlertPercent = 1000;

MonthId MonthOf(int64_t unix_seconds);
std::string FormatMonth(MonthId month);  // "YYYY-MM"

inline constexpr int64_t kMaxBudgetMicros = kMaxCostMicros;
inline constexpr int64_t kUnlimitedBudget = kMaxBudgetMicros;  // a cap that never refuses

struct BudgetUsage {
  MonthId month = 0;      // the month the counter is in
  int64_t spent = 0;      // settled this month
  int64_t committed = 0;  // spent + outstanding reservations
};

}  // namespace turnpike::governance
