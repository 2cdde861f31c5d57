#include "store/postgres/records.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "store/postgres/migrations.h"
#include "store/records_sql.h"

namespace turnpike::store::postgres {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;
using governance::TenantStatus;

std::string_view TenantStatusText(TenantStatus s) {
  return s == TenantStatus::kSuspended ? sql::kSuspended : sql::kActive;
}

}  // namespace

Records::Records(Connection& db, Connection& listen)
    : db_(db),
      listen_(listen),
      upsert_plan_(Numbered(sql::kUpsertPlan)),
      insert_tenant_(Numbered(sql::kInsertTenant)),
      update_tenant_(Numbered(sql::kUpdateTenant)),
      insert_key_(Numbered(sql::kInsertKey)),
      set_key_status_(Numbered(sql::kSetKeyStatus)),
      upsert_price_(Numbered(sql::kUpsertPrice)),
      delete_price_(Numbered(sql::kDeletePrice)),
      delete_key_(Numbered(sql::kDeleteKey)) {}

Result<GovernanceRows> Records::LoadAll() {
  const Params none;
  const std::array<Query, 4> queries = {
      Query{sql::kSelectPlans, &none}, Query{sql::kSelectTenants, &none},
      Query{sql::kSelectKeys, &none}, Query{sql::kSelectPrices, &none}};
  Result<std::vector<Rows>> results = db_.RunAll(queries, StoreOp::kSnapshotLoad);
  if (!results.ok()) return results.error();
  const std::vector<Rows>& r = results.value();
  GovernanceRows rows;
  for (int i = 0; i < r[0].size(); ++i) {
    Plan p;
    p.id = r[0].Text(i, 0);
    p.monthly_budget_micros = r[0].OptionalInt(i, 1);
    p.rpm = r[0].OptionalInt(i, 2);
    p.tpm = r[0].OptionalInt(i, 3);
    p.allowed_models = sql::SplitModels(r[0].Text(i, 4));
    p.max_request_cost_micros = r[0].OptionalInt(i, 5);
    p.search_query_price_micros = r[0].OptionalInt(i, 6);
    p.fail_open = r[0].Int(i, 7) != 0;
    p.cache.mode = sql::CacheModeOf(r[0].Text(i, 8));
    p.cache.key_scope = r[0].Text(i, 9) == sql::kCacheScopeKey;
    p.cache.tool_calls = r[0].Int(i, 10) != 0;
    p.cache.semantic_bp = static_cast<int32_t>(r[0].Int(i, 11));
    p.budget_alerts = sql::BudgetAlertsOf(r[0].Text(i, 12));
    rows.plans.push_back(std::move(p));
  }
  for (int i = 0; i < r[1].size(); ++i) {
    Tenant t;
    t.id = r[1].Text(i, 0);
    t.name = r[1].Text(i, 1);
    t.status =
        r[1].Text(i, 2) == sql::kSuspended ? TenantStatus::kSuspended : TenantStatus::kActive;
    t.plan_id = r[1].Text(i, 3);
    t.log_bodies = r[1].Int(i, 4) != 0;
    t.created_at = r[1].Int(i, 5);
    rows.tenants.push_back(std::move(t));
  }
  for (int i = 0; i < r[2].size(); ++i) {
    Key k;
    k.public_id = r[2].Text(i, 0);
    k.tenant_id = r[2].Text(i, 1);
    k.name = r[2].Text(i, 2);
    const std::string hash = r[2].Bytea(i, 3);
    if (hash.size() != k.secret_hash.size()) {
      return Error{ErrorCode::kInternal, "key " + k.public_id + " has a malformed hash", ""};
    }
    std::copy(hash.begin(), hash.end(), k.secret_hash.begin());
    k.status = r[2].Text(i, 4) == sql::kRevoked ? KeyStatus::kRevoked : KeyStatus::kActive;
    k.expires_at = r[2].Int(i, 5);
    k.monthly_budget_micros = r[2].OptionalInt(i, 6);
    k.rpm = r[2].OptionalInt(i, 7);
    k.tpm = r[2].OptionalInt(i, 8);
    k.allowed_models = sql::SplitModels(r[2].Text(i, 9));
    k.created_at = r[2].Int(i, 10);
    k.kind = r[2].Text(i, 11) == sql::kAdminKey ? governance::KeyKind::kAdmin
                                                : governance::KeyKind::kVirtual;
    k.cache_off = r[2].Int(i, 12) != 0;
    rows.keys.push_back(std::move(k));
  }
  for (int i = 0; i < r[3].size(); ++i) {
    PriceOverride p;
    p.model = r[3].Text(i, 0);
    p.price = {r[3].Int(i, 1),
               r[3].Int(i, 2),
               r[3].Int(i, 3),
               r[3].Int(i, 4),
               r[3].IsNull(i, 6) ? governance::ModelPrice::kSameAsInput : r[3].Int(i, 6),
               r[3].IsNull(i, 7) ? governance::ModelPrice::kSameAsOutput : r[3].Int(i, 7)};
    p.updated_at = r[3].Int(i, 5);
    rows.prices.push_back(std::move(p));
  }
  return rows;
}

Result<bool> Records::PollChanges() {
  Result<Rows> rows = db_.Run(kVersionSql, Params{}, StoreOp::kChangeCheck);
  if (!rows.ok()) return rows.error();
  const int64_t version = rows->size() > 0 ? rows->Int(0, 0) : 0;
  const bool changed = version != seen_version_;
  seen_version_ = version;
  return changed;
}

int Records::ChangeFd() const { return listening_ && listen_.connected() ? listen_.socket() : -1; }

Result<bool> Records::Notified() {
  if (!listen_.connected()) listening_ = false;
  if (!listening_) {
    Status listened =
        listen_.Script("LISTEN " + std::string(kChangeChannel), StoreOp::kChangeCheck);
    if (!listened.ok()) return listened.error();
    listening_ = true;
    return true;  // whatever was sent while nobody listened is lost: reload once
  }
  Result<bool> noted = listen_.Notified(db_.backend_pid());
  if (!noted.ok()) listening_ = false;
  return noted;
}

Status Records::Write(const std::string& sql, const Params& params, std::string missing) {
  // One transaction that holds records_version's row from before the write to its end (see the
  // top of records.h): every other writer's bump is in `before` or waits until after `after`.
  Status begun = db_.Script("BEGIN", StoreOp::kTransaction);
  if (!begun.ok()) return begun;
  Result<Rows> before = db_.Run(kLockVersionSql, Params{}, StoreOp::kChangeCheck);
  Result<Rows> rows = Error{ErrorCode::kInternal, "", ""};
  if (before.ok()) rows = db_.Run(sql, params, StoreOp::kAdminWrite);
  const bool found = rows.ok() && (missing.empty() || rows->size() > 0);
  Result<Rows> after = Error{ErrorCode::kInternal, "", ""};
  if (found) after = db_.Run(kVersionSql, Params{}, StoreOp::kChangeCheck);
  if (!after.ok()) {
    (void)db_.Script("ROLLBACK", StoreOp::kTransaction);
    if (!before.ok()) return before.error();
    if (!rows.ok()) return rows.error();
    if (!found) return Error{ErrorCode::kNotFound, std::move(missing), ""};
    return after.error();
  }
  Status committed = db_.Script("COMMIT", StoreOp::kTransaction);
  if (!committed.ok()) return committed;
  const int64_t was = before->size() > 0 ? before->Int(0, 0) : 0;
  const int64_t is = after->size() > 0 ? after->Int(0, 0) : 0;
  if (seen_version_ >= 0 && was == seen_version_) seen_version_ = is;  // only this write moved it
  return Ok{};
}

Status Records::UpsertPlan(const Plan& plan) {
  Params p;
  p.Add(plan.id)
      .Add(plan.monthly_budget_micros)
      .Add(plan.rpm)
      .Add(plan.tpm)
      .Add(sql::JoinModels(plan.allowed_models))
      .Add(plan.max_request_cost_micros)
      .Add(UnixSeconds())
      .Add(plan.search_query_price_micros)
      .AddBool(plan.fail_open)
      .Add(sql::CacheModeText(plan.cache.mode))
      .Add(plan.cache.key_scope ? sql::kCacheScopeKey : sql::kCacheScopeTenant)
      .AddBool(plan.cache.tool_calls)
      .Add(int64_t{plan.cache.semantic_bp})
      .Add(sql::BudgetAlertsText(plan.budget_alerts));
  return Write(upsert_plan_, p);
}

Status Records::InsertTenant(const Tenant& tenant) {
  Params p;
  p.Add(tenant.id)
      .Add(tenant.name)
      .Add(TenantStatusText(tenant.status))
      .Add(tenant.plan_id)
      .AddBool(tenant.log_bodies)
      .Add(tenant.created_at)
      .Add(UnixSeconds());
  return Write(insert_tenant_, p);
}

Status Records::UpdateTenant(const Tenant& tenant) {
  Params p;
  p.Add(tenant.name)
      .Add(TenantStatusText(tenant.status))
      .Add(tenant.plan_id)
      .AddBool(tenant.log_bodies)
      .Add(UnixSeconds())
      .Add(tenant.id);
  return Write(update_tenant_, p, "no tenant " + tenant.id);
}

Status Records::InsertKey(const Key& key) {
  Params p;
  p.Add(key.public_id)
      .Add(key.tenant_id)
      .Add(key.name)
      .AddBytea(key.secret_hash.data(), key.secret_hash.size())
      .Add(key.status == KeyStatus::kRevoked ? sql::kRevoked : sql::kActive)
      .Add(key.expires_at)
      .Add(key.monthly_budget_micros)
      .Add(key.rpm)
      .Add(key.tpm)
      .Add(sql::JoinModels(key.allowed_models))
      .Add(key.created_at)
      .Add(key.kind == governance::KeyKind::kAdmin ? sql::kAdminKey : sql::kVirtualKey)
      .AddBool(key.cache_off);
  return Write(insert_key_, p);
}

Status Records::SetKeyStatus(std::string_view public_id, KeyStatus status, int64_t at) {
  Params p;
  p.Add(status == KeyStatus::kRevoked ? sql::kRevoked : sql::kActive);
  if (status == KeyStatus::kRevoked) {
    p.Add(at);
  } else {
    p.AddNull();
  }
  p.Add(public_id);
  return Write(set_key_status_, p, "no key " + std::string(public_id));
}

Status Records::DeleteKey(std::string_view public_id) {
  Params p;
  p.Add(public_id);
  return Write(delete_key_, p, "no key " + std::string(public_id));
}

Status Records::UpsertPrice(const PriceOverride& price) {
  Params p;
  p.Add(price.model)
      .Add(price.price.input_micros_per_mtok)
      .Add(price.price.output_micros_per_mtok)
      .Add(price.price.cached_input_micros_per_mtok)
      .Add(price.price.max_output_tokens)
      .Add(price.updated_at)
      .Add(price.price.cache_write())
      .Add(price.price.reasoning());
  return Write(upsert_price_, p);
}

Status Records::DeletePrice(std::string_view model) {
  Params p;
  p.Add(model);
  return Write(delete_price_, p, "no price override for model " + std::string(model));
}

}  // namespace turnpike::store::postgres
