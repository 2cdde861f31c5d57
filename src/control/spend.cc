// The service's spend side: restoring the counters at start, the admin API's spend figures,
// writing the call log's batches, and reconcile.
#include <cstdio>
#include <map>
#include <utility>

#include "common/clock.h"
#include "control/governance_service.h"

namespace turnpike::control {

using store::SpendRow;
using store::SpendScope;

Status GovernanceService::RestoreSpend(store::CallLogStore& log,
                                       const governance::GovernanceSnapshot& snapshot) {
  const governance::MonthId month = governance::MonthOf(UnixSeconds());
  const std::string months[] = {governance::FormatMonth(month)};
  Result<std::vector<SpendRow>> spend = log.LoadSpend(months);
  if (!spend.ok()) return spend.error();
  for (const SpendRow& row : spend.value()) {
    if (row.scope == SpendScope::kTenant) {
      if (const auto* t = snapshot.FindTenant(row.scope_id)) {
        t->counters->budget.Restore(month, row.spent_micros);
      }
    } else if (const auto* k = snapshot.FindKey(row.scope_id)) {
      k->counters->budget.Restore(month, row.spent_micros);
    }
  }
  return Ok{};
}

boost::asio::awaitable<Result<std::vector<SpendInfo>>> GovernanceService::Spend(std::string month) {
  auto job = [this,
              month = std::move(month)](store::Engine& engine) -> Result<std::vector<SpendInfo>> {
    const governance::MonthId current = governance::MonthOf(UnixSeconds());
    const governance::SnapshotPtr snapshot = cell_->Load();
    std::vector<SpendInfo> out;
    if (month == governance::FormatMonth(current)) {
      for (const governance::TenantEntry& t : snapshot->tenants()) {
        const governance::BudgetUsage u = t.counters->budget.Read(current);
        out.push_back({SpendScope::kTenant, t.tenant.id, t.tenant.id, month, u.spent,
                       u.committed - u.spent, t.plan->monthly_budget_micros});
      }
      for (const governance::KeyEntry& k : snapshot->keys()) {
        const governance::BudgetUsage u = k.counters->budget.Read(current);
        out.push_back({SpendScope::kKey, k.key.public_id, k.key.tenant_id, month, u.spent,
                       u.committed - u.spent, k.key.monthly_budget_micros});
      }
      return out;
    }
    const std::string months[] = {month};
    Result<std::vector<SpendRow>> rows = engine.call_log().LoadSpend(months);
    if (!rows.ok()) return rows.error();
    for (SpendRow& row : rows.value()) {
      SpendInfo info{row.scope, row.scope_id, "", row.month, row.spent_micros, 0, std::nullopt};
      if (row.scope == SpendScope::kTenant) {
        info.tenant_id = row.scope_id;
      } else if (const governance::KeyEntry* k = snapshot->FindKey(row.scope_id)) {
        info.tenant_id = k->key.tenant_id;
      }
      out.push_back(std::move(info));
    }
    return out;
  };
  Result<std::vector<SpendInfo>> result =
      co_await thread_.Call<std::vector<SpendInfo>>(std::move(job), store::JobLane::kRead);
  co_return result;
}

boost::asio::awaitable<Result<ReconcileReport>> GovernanceService::ReconcileNow() {
  auto job = [this](store::Engine& engine) -> Result<ReconcileReport> {
    return Reconcile(engine.call_log());
  };
  Result<ReconcileReport> result =
      co_await thread_.Call<ReconcileReport>(std::move(job), store::JobLane::kRead);
  co_return result;
}

void GovernanceService::WriteBatch(store::CallLogStore& log, store::CallBatchParts parts) {
  const std::span<const SpendRow> no_extra;
  Status written = log.WriteCalls(parts, config_.call_log.log_store, no_extra);
  size_t rows = 0;
  for (const store::CallBatchPart& part : parts) rows += part.size();
  last_batch_rows_.Set(static_cast<int64_t>(rows));
  if (!written.ok()) {
    // The rows and their spend are lost to the store (the live counters still hold the spend
    // until a restart). Loud, counted, and the thread goes on.
    write_errors_.Add(rows);
    std::fprintf(stderr, "turnpike: call log write failed (%zu rows): %s\n", rows,
                 written.error().message.c_str());
    return;
  }
  call_log_rows_.Add(rows);
}

Result<ReconcileReport> GovernanceService::Reconcile(store::CallLogStore& log) {
  ReconcileReport report;
  if (!config_.call_log.log_store) {
    return Error{ErrorCode::kInvalidRequest,
                 "call_log.log_store is off: there is no call log to reconcile against", ""};
  }
  const governance::MonthId current = governance::MonthOf(UnixSeconds());
  const governance::SnapshotPtr snapshot = cell_->Load();
  // Both months in one go (one transaction, one lock: all or kConflict). The store adds each
  // difference to its spend row (store/call_log.h); this month's also goes to the live counter.
  const std::string months[] = {governance::FormatMonth(current),
                                governance::FormatMonth(current - 1)};
  Result<std::vector<SpendRow>> drifted = log.ReconcileSpend(months);
  if (!drifted.ok()) return drifted.error();
  for (const SpendRow& row : drifted.value()) {
    const int64_t drift = row.spent_micros;
    report.drift_micros += drift < 0 ? -drift : drift;
    ++report.scopes_corrected;
    if (row.month != months[0]) continue;
    governance::BudgetCounter* counter = nullptr;
    if (row.scope == SpendScope::kTenant) {
      if (const auto* t = snapshot->FindTenant(row.scope_id)) counter = &t->counters->budget;
    } else if (const auto* k = snapshot->FindKey(row.scope_id)) {
      counter = &k->counters->budget;
    }
    if (counter != nullptr) counter->Correct(current, drift);
  }
  reconcile_runs_.Add();
  drift_micros_.Set(report.drift_micros);
  return report;
}

}  // namespace turnpike::control
