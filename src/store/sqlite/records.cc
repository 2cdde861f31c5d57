#include "store/sqlite/records.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "store/records_sql.h"

namespace turnpike::store::sqlite {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;
using governance::TenantStatus;
using sql::JoinModels;
using sql::SplitModels;

Error NotFound(std::string what) { return Error{ErrorCode::kNotFound, std::move(what), ""}; }

// Calls `row` for each result row; the step error, if any.
template <typename RowFn>
Status ForEachRow(Statement& q, RowFn&& row) {
  Result<bool> r = q.Step();
  for (; r.ok() && r.value(); r = q.Step()) {
    Status handled = row();
    if (!handled.ok()) return handled;
  }
  if (!r.ok()) return r.error();
  return Ok{};
}

// Runs a statement ending in RETURNING: kNotFound with `missing` if it touched no row.
Status RunReturning(Statement& q, std::string missing) {
  Result<bool> row = q.Step();
  if (!row.ok()) return row.error();
  const bool touched = row.value();
  q.Reset();
  if (!touched) return NotFound(std::move(missing));
  return Ok{};
}

}  // namespace

Result<GovernanceRows> Records::LoadAll() {
  GovernanceRows rows;
  {
    Result<Statement> q = db_.Prepare(sql::kSelectPlans, StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      Plan p;
      p.id = q->Text(0);
      p.monthly_budget_micros = q->OptionalInt(1);
      p.rpm = q->OptionalInt(2);
      p.tpm = q->OptionalInt(3);
      p.allowed_models = SplitModels(q->Text(4));
      p.max_request_cost_micros = q->OptionalInt(5);
      p.search_query_price_micros = q->OptionalInt(6);
      p.fail_open = q->Int(7) != 0;
      p.cache.mode = sql::CacheModeOf(q->Text(8));
      p.cache.key_scope = q->Text(9) == sql::kCacheScopeKey;
      p.cache.tool_calls = q->Int(10) != 0;
      p.cache.semantic_bp = static_cast<int32_t>(q->Int(11));
      p.budget_alerts = sql::BudgetAlertsOf(q->Text(12));
      rows.plans.push_back(std::move(p));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  {
    Result<Statement> q = db_.Prepare(sql::kSelectTenants, StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      Tenant t;
      t.id = q->Text(0);
      t.name = q->Text(1);
      t.status = q->Text(2) == "suspended" ? TenantStatus::kSuspended : TenantStatus::kActive;
      t.plan_id = q->Text(3);
      t.log_bodies = q->Int(4) != 0;
      t.created_at = q->Int(5);
      rows.tenants.push_back(std::move(t));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  {
    Result<Statement> q = db_.Prepare(sql::kSelectKeys, StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      Key k;
      k.public_id = q->Text(0);
      k.tenant_id = q->Text(1);
      k.name = q->Text(2);
      const std::string hash = q->Blob(3);
      if (hash.size() != k.secret_hash.size()) {
        return Error{ErrorCode::kInternal, "key " + k.public_id + " has a malformed hash", ""};
      }
      std::copy(hash.begin(), hash.end(), k.secret_hash.begin());
      k.status = q->Text(4) == "revoked" ? KeyStatus::kRevoked : KeyStatus::kActive;
      k.expires_at = q->Int(5);
      k.monthly_budget_micros = q->OptionalInt(6);
      k.rpm = q->OptionalInt(7);
      k.tpm = q->OptionalInt(8);
      k.allowed_models = SplitModels(q->Text(9));
      k.created_at = q->Int(10);
      k.kind = q->Text(11) == sql::kAdminKey ? governance::KeyKind::kAdmin
                                             : governance::KeyKind::kVirtual;
      k.cache_off = q->Int(12) != 0;
      rows.keys.push_back(std::move(k));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  {
    Result<Statement> q = db_.Prepare(sql::kSelectPrices, StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      PriceOverride p;
      p.model = q->Text(0);
      p.price = {q->Int(1),
                 q->Int(2),
                 q->Int(3),
                 q->Int(4),
                 q->IsNull(6) ? governance::ModelPrice::kSameAsInput : q->Int(6),
                 q->IsNull(7) ? governance::ModelPrice::kSameAsOutput : q->Int(7)};
      p.updated_at = q->Int(5);
      rows.prices.push_back(std::move(p));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  return rows;
}

Result<bool> Records::PollChanges() {
  // data_version changes when another connection commits, never for this one's own writes.
  Result<Statement*> q = db_.Cached(data_version_, "PRAGMA data_version", StoreOp::kChangeCheck);
  if (!q.ok()) return q.error();
  Result<bool> row = (*q)->Step();
  if (!row.ok()) return row.error();
  const int64_t version = row.value() ? (*q)->Int(0) : 0;
  (*q)->Reset();
  const bool changed = version != seen_version_;
  seen_version_ = version;
  return changed;
}

Status Records::UpsertPlan(const Plan& plan) {
  Result<Statement> q = db_.Prepare(sql::kUpsertPlan, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, plan.id)
      .Bind(2, plan.monthly_budget_micros)
      .Bind(3, plan.rpm)
      .Bind(4, plan.tpm)
      .Bind(5, JoinModels(plan.allowed_models))
      .Bind(6, plan.max_request_cost_micros)
      .Bind(7, UnixSeconds())
      .Bind(8, plan.search_query_price_micros)
      .BindBool(9, plan.fail_open)
      .Bind(10, sql::CacheModeText(plan.cache.mode))
      .Bind(11, plan.cache.key_scope ? sql::kCacheScopeKey : sql::kCacheScopeTenant)
      .BindBool(12, plan.cache.tool_calls)
      .Bind(13, int64_t{plan.cache.semantic_bp})
      .Bind(14, sql::BudgetAlertsText(plan.budget_alerts));
  return q->Run();
}

Status Records::InsertTenant(const Tenant& tenant) {
  Result<Statement> q = db_.Prepare(sql::kInsertTenant, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, tenant.id)
      .Bind(2, tenant.name)
      .Bind(3, tenant.status == TenantStatus::kSuspended ? "suspended" : "active")
      .Bind(4, tenant.plan_id)
      .BindBool(5, tenant.log_bodies)
      .Bind(6, tenant.created_at)
      .Bind(7, UnixSeconds());
  return q->Run();
}

Status Records::UpdateTenant(const Tenant& tenant) {
  Result<Statement> q = db_.Prepare(sql::kUpdateTenant, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, tenant.name)
      .Bind(2, tenant.status == TenantStatus::kSuspended ? "suspended" : "active")
      .Bind(3, tenant.plan_id)
      .BindBool(4, tenant.log_bodies)
      .Bind(5, UnixSeconds())
      .Bind(6, tenant.id);
  return RunReturning(*q, "no tenant " + tenant.id);
}

Status Records::InsertKey(const Key& key) {
  Result<Statement> q = db_.Prepare(sql::kInsertKey, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, key.public_id)
      .Bind(2, key.tenant_id)
      .Bind(3, key.name)
      .BindBlob(4, key.secret_hash.data(), key.secret_hash.size())
      .Bind(5, key.status == KeyStatus::kRevoked ? "revoked" : "active")
      .Bind(6, key.expires_at)
      .Bind(7, key.monthly_budget_micros)
      .Bind(8, key.rpm)
      .Bind(9, key.tpm)
      .Bind(10, JoinModels(key.allowed_models))
      .Bind(11, key.created_at)
      .Bind(12, key.kind == governance::KeyKind::kAdmin ? sql::kAdminKey : sql::kVirtualKey)
      .BindBool(13, key.cache_off);
  return q->Run();
}

Status Records::SetKeyStatus(std::string_view public_id, KeyStatus status, int64_t at) {
  Result<Statement> q = db_.Prepare(sql::kSetKeyStatus, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, status == KeyStatus::kRevoked ? "revoked" : "active");
  if (status == KeyStatus::kRevoked) {
    q->Bind(2, at);
  } else {
    q->BindNull(2);
  }
  q->Bind(3, public_id);
  return RunReturning(*q, "no key " + std::string(public_id));
}

Status Records::DeleteKey(std::string_view public_id) {
  Result<Statement> q = db_.Prepare(sql::kDeleteKey, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, public_id);
  return RunReturning(*q, "no key " + std::string(public_id));
}

Status Records::UpsertPrice(const PriceOverride& price) {
  Result<Statement> q = db_.Prepare(sql::kUpsertPrice, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, price.model)
      .Bind(2, price.price.input_micros_per_mtok)
      .Bind(3, price.price.output_micros_per_mtok)
      .Bind(4, price.price.cached_input_micros_per_mtok)
      .Bind(5, price.price.max_output_tokens)
      .Bind(6, price.updated_at)
      .Bind(7, price.price.cache_write())
      .Bind(8, price.price.reasoning());
  return q->Run();
}

Status Records::DeletePrice(std::string_view model) {
  Result<Statement> q = db_.Prepare(sql::kDeletePrice, StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, model);
  return RunReturning(*q, "no price override for model " + std::string(model));
}

}  // namespace turnpike::store::sqlite
