// Budget alerts: thresholds of a tenant's monthly budget (percent of its plan's
// monthly_budget_micros, e.g. 50, 80, 100) that are announced once when its spend crosses them.
// A plan may name its own thresholds (Plan::budget_alerts); the others use the gateway's
// (webhooks.budget_alerts). A process remembers the highest percent it announced per tenant and
// month, so a plan whose thresholds change mid-month announces those above it, not those below.
// This is the cheap half, on the request path: after a request's spend settled, Check compares
// the tenant's spent against the next threshold; only a crossing calls the sink, which records
// the alert durably and fleet-wide (the webhook outbox: doors/webhooks/outbox.h), so the sink
// may be called again for one threshold (another worker, a restart, a slot shared by two
// tenants) and must be idempotent.
//
// Cost: a tenant without a budget, or below its first threshold: one counter read and a
// comparison. Above it: a hash of the tenant id and one relaxed load of a slot (a fixed table
// of atomics indexed by that hash, holding the highest percent this process announced for the
// tenant and month); a crossing: one CAS and the sink. No lock, no allocation, no I/O.
//
// Ownership: app/ owns it; the governance filter of every worker borrows it.
// Threads: SetSink at start-up before any worker runs; Check from any worker, concurrently.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "governance/budget.h"

namespace turnpike::governance {

struct TenantEntry;

struct BudgetCrossing {
  std::string_view tenant;  // valid during the call only
  MonthId month = 0;
  int percent = 0;     // the threshold crossed
  int64_t spent = 0;   // micro-USD settled this month when it was seen
  int64_t budget = 0;  // the plan's monthly budget
};

class BudgetAlerts {
 public:
  // Called once per threshold newly crossed, lowest first, on the settling worker: it must not
  // block (see the top of this file).
  using Sink = std::function<void(const BudgetCrossing&)>;

  // `percents`: the gateway's thresholds, each in [1, kMaxBudgetAlertPercent] (sorted and made
  // distinct here); empty: only plans with their own thresholds alert.
  explicit BudgetAlerts(std::vector<int> percents);

  void SetSink(Sink sink) { sink_ = std::move(sink); }
  const std::vector<int>& percents() const { return percents_; }

  // After a request of `tenant` settled (see the top of this file).
  void Check(const TenantEntry& tenant) const;

 private:
  static constexpr size_t kSlots = 4096;

  std::vector<int> percents_;
  Sink sink_;
  // Per slot: tenant hash (high 32 bits) | month (20 bits) | highest percent announced (12).
  mutable std::array<std::atomic<uint64_t>, kSlots> slots_{};
};

}  // namespace turnpike::governance
