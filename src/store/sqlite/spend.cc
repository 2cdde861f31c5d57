// Spend rows (scope, scope id, month): WriteCalls adds to them, the start-up restore and the
// admin API read them, and reconcile compares them with the call log's sums and adds the
// difference to the ones that drifted. The daily counters (daily_spend.h): WriteCalls adds to
// them, the admin API reads them.
#include <map>
#include <string>
#include <vector>

#include "store/records_sql.h"
#include "store/sqlite/call_log.h"

namespace turnpike::store::sqlite {
namespace {

std::string_view ScopeName(SpendScope scope) {
  return scope == SpendScope::kTenant ? "tenant" : "key";
}

}  // namespace

Result<std::vector<SpendRow>> CallLog::LoadSpend(std::span<const std::string> months) {
  std::vector<SpendRow> out;
  Result<Statement> q = db_.Prepare(sql::kSelectSpend, StoreOp::kSnapshotLoad);
  if (!q.ok()) return q.error();
  for (const std::string& month : months) {
    q->Bind(1, month);
    Result<bool> r = q->Step();
    for (; r.ok() && r.value(); r = q->Step()) {
      out.push_back({q->Text(0) == "key" ? SpendScope::kKey : SpendScope::kTenant, q->Text(1),
                     q->Text(2), q->Int(3)});
    }
    q->Reset();
    if (!r.ok()) return r.error();
  }
  return out;
}

Status CallLog::AddSpend(SpendScope scope, std::string_view scope_id, std::string_view month,
                         int64_t micros) {
  Result<Statement*> q =
      db_.Cached(add_spend_,
                 "INSERT INTO spend (scope, scope_id, month, spent_micros) "
                 "VALUES (?, ?, ?, ?) ON CONFLICT (scope, scope_id, month) "
                 "DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros",
                 StoreOp::kSpendWrite);
  if (!q.ok()) return q.error();
  (*q)->Bind(1, ScopeName(scope)).Bind(2, scope_id).Bind(3, month).Bind(4, micros);
  return (*q)->Run();
}

Status CallLog::AddDailySpend(std::string_view tenant_id, std::string_view key_id,
                              std::string_view model, std::string_view day, int64_t cost_micros,
                              int64_t prompt_tokens, int64_t completion_tokens, int64_t requests) {
  Result<Statement*> q = db_.Cached(
      add_daily_spend_,
      "INSERT INTO daily_spend (day, tenant_id, key_id, model, cost_micros, prompt_tokens, "
      "completion_tokens, requests) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (day, tenant_id, key_id, model) DO UPDATE SET "
      "cost_micros = cost_micros + excluded.cost_micros, "
      "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
      "completion_tokens = completion_tokens + excluded.completion_tokens, "
      "requests = requests + excluded.requests",
      StoreOp::kSpendWrite);
  if (!q.ok()) return q.error();
  (*q)->BindView(1, day).BindView(2, tenant_id).BindView(3, key_id).BindView(4, model);
  (*q)->Bind(5, cost_micros).Bind(6, prompt_tokens).Bind(7, completion_tokens).Bind(8, requests);
  return (*q)->Run();
}

Result<std::vector<DailySpendRow>> CallLog::QueryDailySpend(const DailySpendQuery& query) {
  Result<Statement> q = db_.Prepare(DailySpendSelect(query), StoreOp::kAdminRead);
  if (!q.ok()) return q.error();
  q->Bind(1, query.from_day).Bind(2, query.to_day);
  int at = 3;
  if (!query.tenant_id.empty()) q->Bind(at++, query.tenant_id);
  if (!query.key_id.empty()) q->Bind(at++, query.key_id);
  q->Bind(at, static_cast<int64_t>(query.limit));
  std::vector<DailySpendRow> out;
  Result<bool> r = q->Step();
  for (; r.ok() && r.value(); r = q->Step()) {
    out.push_back({q->Text(0), q->Text(1), q->Text(2), q->Text(3), q->Int(4), q->Int(5), q->Int(6),
                   q->Int(7)});
  }
  if (!r.ok()) return r.error();
  return out;
}

Result<std::vector<SpendRow>> CallLog::ReconcileSpend(std::span<const std::string> months) {
  // One write transaction: this database has one writer, so the sums, the rows and the
  // additions see one state, and no batch commits in between.
  std::vector<SpendRow> drifted;
  Status done = InTransaction(db_, [&]() -> Status {
    for (const std::string& month : months) {
      Result<std::vector<SpendRow>> logged = SumCallLog(month);
      if (!logged.ok()) return logged.error();
      const std::string one[] = {month};
      Result<std::vector<SpendRow>> persisted = LoadSpend(one);
      if (!persisted.ok()) return persisted.error();
      std::map<std::pair<SpendScope, std::string>, int64_t> drift;
      for (const SpendRow& r : logged.value()) drift[{r.scope, r.scope_id}] += r.spent_micros;
      for (const SpendRow& r : persisted.value()) drift[{r.scope, r.scope_id}] -= r.spent_micros;
      for (const auto& [scope, micros] : drift) {
        if (micros == 0) continue;
        Status added = AddSpend(scope.first, scope.second, month, micros);
        if (!added.ok()) return added;
        drifted.push_back({scope.first, scope.second, month, micros});
      }
    }
    return Ok{};
  });
  if (!done.ok()) return done.error();
  return drifted;
}

Result<std::vector<SpendRow>> CallLog::SumCallLog(const std::string& month) {
  Result<Statement> q = db_.Prepare(
      "SELECT r.tenant_id, r.key_id, SUM(c.cost_micros) "
      "FROM call_log_rows c CROSS JOIN call_routes r "
      "WHERE r.id = c.route_id "
      "AND c.id >= (SELECT first_id FROM call_log_months WHERE month = ?) AND r.month = ? "
      "GROUP BY r.tenant_id, r.key_id",
      StoreOp::kReconcile);
  if (!q.ok()) return q.error();
  q->Bind(1, month).Bind(2, month);
  std::map<std::string, int64_t> tenants;
  std::vector<SpendRow> out;
  Result<bool> r = q->Step();
  for (; r.ok() && r.value(); r = q->Step()) {
    const int64_t sum = q->Int(2);
    tenants[q->Text(0)] += sum;
    out.push_back({SpendScope::kKey, q->Text(1), month, sum});
  }
  if (!r.ok()) return r.error();
  for (const auto& [tenant, sum] : tenants) {
    out.push_back({SpendScope::kTenant, tenant, month, sum});
  }
  return out;
}

}  // namespace turnpike::store::sqlite
