#include "store/sqlite/records.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace turnpike::store::sqlite {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;
using governance::TenantStatus;

// Allowed-model lists are stored as one text of names separated by newlines.
std::string JoinModels(const std::vector<std::string>& models) {
  std::string out;
  for (const std::string& m : models) {
    if (!out.empty()) out += '\n';
    out += m;
  }
  return out;
}

std::vector<std::string> SplitModels(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

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
    Result<Statement> q = db_.Prepare(
        "SELECT id, monthly_budget_micros, rpm, tpm, allowed_models, max_request_cost_micros "
        "FROM plans ORDER BY id",
        StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      Plan p;
      p.id = q->Text(0);
      p.monthly_budget_micros = q->OptionalInt(1);
      p.rpm = q->OptionalInt(2);
      p.tpm = q->OptionalInt(3);
      p.allowed_models = SplitModels(q->Text(4));
      p.max_request_cost_micros = q->OptionalInt(5);
      rows.plans.push_back(std::move(p));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  {
    Result<Statement> q = db_.Prepare(
        "SELECT id, name, status, plan_id, log_bodies, created_at FROM tenants ORDER BY id",
        StoreOp::kSnapshotLoad);
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
    Result<Statement> q = db_.Prepare(
        "SELECT public_id, tenant_id, name, secret_sha256, status, expires_at, "
        "monthly_budget_micros, rpm, tpm, allowed_models, created_at FROM api_keys "
        "ORDER BY public_id",
        StoreOp::kSnapshotLoad);
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
      rows.keys.push_back(std::move(k));
      return Ok{};
    });
    if (!read.ok()) return read.error();
  }
  {
    Result<Statement> q = db_.Prepare(
        "SELECT model, input_micros_per_mtok, output_micros_per_mtok, "
        "cached_input_micros_per_mtok, max_output_tokens, updated_at, "
        "cache_write_micros_per_mtok FROM prices ORDER BY model",
        StoreOp::kSnapshotLoad);
    if (!q.ok()) return q.error();
    Status read = ForEachRow(*q, [&]() -> Status {
      PriceOverride p;
      p.model = q->Text(0);
      p.price = {q->Int(1), q->Int(2), q->Int(3), q->Int(4),
                 q->IsNull(6) ? governance::ModelPrice::kSameAsInput : q->Int(6)};
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
  Result<Statement> q = db_.Prepare(
      "INSERT INTO plans (id, monthly_budget_micros, rpm, tpm, allowed_models, "
      "max_request_cost_micros, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET monthly_budget_micros = excluded.monthly_budget_micros, "
      "rpm = excluded.rpm, tpm = excluded.tpm, allowed_models = excluded.allowed_models, "
      "max_request_cost_micros = excluded.max_request_cost_micros, "
      "updated_at = excluded.updated_at",
      StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, plan.id)
      .Bind(2, plan.monthly_budget_micros)
      .Bind(3, plan.rpm)
      .Bind(4, plan.tpm)
      .Bind(5, JoinModels(plan.allowed_models))
      .Bind(6, plan.max_request_cost_micros)
      .Bind(7, UnixSeconds());
  return q->Run();
}

Status Records::InsertTenant(const Tenant& tenant) {
  Result<Statement> q = db_.Prepare(
      "INSERT INTO tenants (id, name, status, plan_id, log_bodies, created_at, updated_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)",
      StoreOp::kAdminWrite);
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
  Result<Statement> q = db_.Prepare(
      "UPDATE tenants SET name = ?, status = ?, plan_id = ?, log_bodies = ?, updated_at = ? "
      "WHERE id = ? RETURNING id",
      StoreOp::kAdminWrite);
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
  Result<Statement> q = db_.Prepare(
      "INSERT INTO api_keys (public_id, tenant_id, name, secret_sha256, status, expires_at, "
      "monthly_budget_micros, rpm, tpm, allowed_models, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      StoreOp::kAdminWrite);
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
      .Bind(11, key.created_at);
  return q->Run();
}

Status Records::SetKeyStatus(std::string_view public_id, KeyStatus status, int64_t at) {
  Result<Statement> q = db_.Prepare(
      "UPDATE api_keys SET status = ?, revoked_at = ? WHERE public_id = ? RETURNING public_id",
      StoreOp::kAdminWrite);
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

Status Records::UpsertPrice(const PriceOverride& price) {
  Result<Statement> q = db_.Prepare(
      "INSERT INTO prices (model, input_micros_per_mtok, output_micros_per_mtok, "
      "cached_input_micros_per_mtok, max_output_tokens, updated_at, cache_write_micros_per_mtok) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (model) DO UPDATE SET input_micros_per_mtok = excluded.input_micros_per_mtok, "
      "output_micros_per_mtok = excluded.output_micros_per_mtok, "
      "cached_input_micros_per_mtok = excluded.cached_input_micros_per_mtok, "
      "max_output_tokens = excluded.max_output_tokens, updated_at = excluded.updated_at, "
      "cache_write_micros_per_mtok = excluded.cache_write_micros_per_mtok",
      StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, price.model)
      .Bind(2, price.price.input_micros_per_mtok)
      .Bind(3, price.price.output_micros_per_mtok)
      .Bind(4, price.price.cached_input_micros_per_mtok)
      .Bind(5, price.price.max_output_tokens)
      .Bind(6, price.updated_at)
      .Bind(7, price.price.cache_write());
  return q->Run();
}

Status Records::DeletePrice(std::string_view model) {
  Result<Statement> q =
      db_.Prepare("DELETE FROM prices WHERE model = ? RETURNING model", StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, model);
  return RunReturning(*q, "no price override for model " + std::string(model));
}

}  // namespace turnpike::store::sqlite
