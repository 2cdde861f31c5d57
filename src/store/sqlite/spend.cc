// Spend rows (scope, scope id, month): WriteCalls adds to them, the start-up restore and the
// admin API read them, and reconcile compares them with the call log's sums and overwrites
// the ones that drifted.
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

Status CallLog::SetSpend(std::span<const SpendRow> rows) {
  return InTransaction(db_, [&]() -> Status {
    Result<Statement*> q = db_.Cached(set_spend_, sql::kSetSpend, StoreOp::kReconcile);
    if (!q.ok()) return q.error();
    for (const SpendRow& row : rows) {
      (*q)->Bind(1, ScopeName(row.scope))
          .Bind(2, row.scope_id)
          .Bind(3, row.month)
          .Bind(4, row.spent_micros);
      Status ran = (*q)->Run();
      if (!ran.ok()) return ran;
    }
    return Ok{};
  });
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
