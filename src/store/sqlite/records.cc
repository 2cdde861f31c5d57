#include "store/sqlite_store.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/clock.h"

namespace turnpike::store {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;
using governance::TenantStatus;

// Each entry is one schema version; never edit a released one, append a new one.
constexpr std::array<std::string_view, 3> kMigrations = {
    R"sql(
CREATE TABLE plans (
  id TEXT PRIMARY KEY,
  monthly_budget_micros INTEGER,
  rpm INTEGER,
  tpm INTEGER,
  allowed_models TEXT NOT NULL DEFAULT '',
  max_request_cost_micros INTEGER,
  updated_at INTEGER NOT NULL
);
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
  plan_id TEXT NOT NULL REFERENCES plans (id),
  log_bodies INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE api_keys (
  public_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  name TEXT NOT NULL,
  secret_sha256 BLOB NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
  expires_at INTEGER NOT NULL DEFAULT 0,
  monthly_budget_micros INTEGER,
  rpm INTEGER,
  tpm INTEGER,
  allowed_models TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
CREATE TABLE prices (
  model TEXT PRIMARY KEY,
  input_micros_per_mtok INTEGER NOT NULL,
  output_micros_per_mtok INTEGER NOT NULL,
  cached_input_micros_per_mtok INTEGER NOT NULL,
  max_output_tokens INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE spend (
  scope TEXT NOT NULL CHECK (scope IN ('tenant', 'key')),
  scope_id TEXT NOT NULL,
  month TEXT NOT NULL,
  spent_micros INTEGER NOT NULL,
  PRIMARY KEY (scope, scope_id, month)
);
CREATE TABLE call_log (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  deployment TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  cost_micros INTEGER NOT NULL,
  estimated INTEGER NOT NULL,
  unpriced INTEGER NOT NULL,
  ttft_us INTEGER,
  total_us INTEGER NOT NULL,
  overhead_us INTEGER,
  month TEXT NOT NULL,
  request_body TEXT,
  dropped_rows INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX call_log_tenant ON call_log (tenant_id, id);
CREATE INDEX call_log_month ON call_log (month, tenant_id, key_id);
)sql",
    // 2: each secondary index cost every call-log insert an index entry (about a fifth of the
    // row's cost each). Coarse indexes written once per batch or month replace them
    // (sqlite_call_log.cc): a tenant's id ranges per batch, and each month's first id. And
    // prompt-cache writes get their own price and call-log column.
    R"sql(
DROP INDEX call_log_tenant;
DROP INDEX call_log_month;
CREATE TABLE call_log_blocks (
  tenant_id TEXT NOT NULL,
  first_id INTEGER NOT NULL,
  last_id INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, first_id)
) WITHOUT ROWID;
INSERT INTO call_log_blocks (tenant_id, first_id, last_id)
  SELECT tenant_id, MIN(id), MAX(id) FROM call_log GROUP BY tenant_id;
CREATE TABLE call_log_months (
  month TEXT PRIMARY KEY,
  first_id INTEGER NOT NULL
);
INSERT INTO call_log_months (month, first_id) SELECT month, MIN(id) FROM call_log GROUP BY month;
-- Prompt-cache writes: priced apart (NULL: as input) and logged.
ALTER TABLE prices ADD COLUMN cache_write_micros_per_mtok INTEGER;
ALTER TABLE call_log ADD COLUMN cache_creation_tokens INTEGER NOT NULL DEFAULT 0;
)sql",
    // 3: a row's repeating part (tenant, key, model, deployment and the budget month charged)
    // is one call_routes row, which the row refers to by id: the row the store thread writes
    // per request has 17 columns instead of 21 and half the bytes, and costs about a quarter
    // less to write (a third with 16 KiB pages: docs/BENCHMARKS.md). `call_log` stays the rows
    // as they read: a view joining the two, with the old table's columns in their old order.
    // route_id has no REFERENCES clause: with foreign keys on, that would be a lookup per
    // inserted row; the store thread only writes ids of routes that exist (read from the
    // table, or added in the same transaction and forgotten if it rolls back: call_routes.h).
    R"sql(
CREATE TABLE call_routes (
  id INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  deployment TEXT NOT NULL,
  month TEXT NOT NULL,
  UNIQUE (tenant_id, key_id, model, deployment, month)
);
INSERT INTO call_routes (tenant_id, key_id, model, deployment, month)
  SELECT DISTINCT tenant_id, key_id, model, deployment, month FROM call_log;
CREATE TABLE call_log_rows (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  route_id INTEGER NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  cache_creation_tokens INTEGER NOT NULL,
  cost_micros INTEGER NOT NULL,
  estimated INTEGER NOT NULL,
  unpriced INTEGER NOT NULL,
  ttft_us INTEGER,
  total_us INTEGER NOT NULL,
  overhead_us INTEGER,
  request_body TEXT,
  dropped_rows INTEGER NOT NULL
);
INSERT INTO call_log_rows (id, time_ms, request_id, route_id, status, error, prompt_tokens,
                           completion_tokens, cached_tokens, cache_creation_tokens, cost_micros,
                           estimated, unpriced, ttft_us, total_us, overhead_us, request_body,
                           dropped_rows)
  SELECT c.id, c.time_ms, c.request_id, r.id, c.status, c.error, c.prompt_tokens,
         c.completion_tokens, c.cached_tokens, c.cache_creation_tokens, c.cost_micros,
         c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, c.request_body,
         c.dropped_rows
  FROM call_log c JOIN call_routes r
    ON r.tenant_id = c.tenant_id AND r.key_id = c.key_id AND r.model = c.model
   AND r.deployment = c.deployment AND r.month = c.month;
DROP TABLE call_log;
CREATE VIEW call_log AS
  SELECT c.id, c.time_ms, c.request_id, r.tenant_id, r.key_id, r.model, r.deployment, c.status,
         c.error, c.prompt_tokens, c.completion_tokens, c.cached_tokens, c.cost_micros,
         c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, r.month,
         c.request_body, c.dropped_rows, c.cache_creation_tokens
  FROM call_log_rows c JOIN call_routes r ON r.id = c.route_id;
)sql"};

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

std::string_view ScopeName(SpendScope scope) {
  return scope == SpendScope::kTenant ? "tenant" : "key";
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

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       bool synchronous_full,
                                                       StatementCounts* counts) {
  Result<std::unique_ptr<Database>> db = Database::Open(path, synchronous_full, counts);
  if (!db.ok()) return db.error();
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db.value())));
}

int SqliteStore::SchemaVersion() {
  Result<Statement> q =
      db_->Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", StoreOp::kMigrate);
  if (!q.ok()) return 0;
  Result<bool> row = q->Step();
  return row.ok() && row.value() ? static_cast<int>(q->Int(0)) : 0;
}

Status SqliteStore::Migrate() { return MigrateTo(static_cast<int>(kMigrations.size())); }

Status SqliteStore::MigrateTo(int version) {
  Status table = db_->Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "applied_at INTEGER NOT NULL)",
      StoreOp::kMigrate);
  if (!table.ok()) return table;
  const int current = SchemaVersion();
  if (current > static_cast<int>(kMigrations.size())) {
    return Error{ErrorCode::kInternal,
                 "the store's schema version " + std::to_string(current) +
                     " is newer than this binary's " + std::to_string(kMigrations.size()) +
                     "; run a newer turnpike",
                 ""};
  }
  const size_t target = std::min(static_cast<size_t>(std::max(version, 0)), kMigrations.size());
  for (size_t v = static_cast<size_t>(current); v < target; ++v) {
    Status applied = InTransaction([&]() -> Status {
      Status ran = db_->Exec(kMigrations[v], StoreOp::kMigrate);
      if (!ran.ok()) return ran;
      Result<Statement> mark = db_->Prepare(
          "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", StoreOp::kMigrate);
      if (!mark.ok()) return mark.error();
      mark->Bind(1, static_cast<int64_t>(v + 1)).Bind(2, UnixSeconds());
      return mark->Run();
    });
    if (!applied.ok()) return applied;
  }
  return Ok{};
}

Result<GovernanceRows> SqliteStore::LoadGovernance() {
  GovernanceRows rows;
  {
    Result<Statement> q = db_->Prepare(
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
    Result<Statement> q = db_->Prepare(
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
    Result<Statement> q = db_->Prepare(
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
    Result<Statement> q = db_->Prepare(
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

Result<int64_t> SqliteStore::ChangeVersion() {
  Result<Statement*> q = db_->Cached(data_version_, "PRAGMA data_version", StoreOp::kChangeCheck);
  if (!q.ok()) return q.error();
  Result<bool> row = (*q)->Step();
  if (!row.ok()) return row.error();
  const int64_t version = row.value() ? (*q)->Int(0) : 0;
  (*q)->Reset();
  return version;
}

Status SqliteStore::UpsertPlan(const Plan& plan) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::InsertTenant(const Tenant& tenant) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::UpdateTenant(const Tenant& tenant) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::InsertKey(const Key& key) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::SetKeyStatus(std::string_view public_id, KeyStatus status, int64_t at) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::UpsertPrice(const PriceOverride& price) {
  Result<Statement> q = db_->Prepare(
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

Status SqliteStore::DeletePrice(std::string_view model) {
  Result<Statement> q =
      db_->Prepare("DELETE FROM prices WHERE model = ? RETURNING model", StoreOp::kAdminWrite);
  if (!q.ok()) return q.error();
  q->Bind(1, model);
  return RunReturning(*q, "no price override for model " + std::string(model));
}

Result<std::vector<SpendRow>> SqliteStore::LoadSpend(std::span<const std::string> months) {
  std::vector<SpendRow> out;
  Result<Statement> q =
      db_->Prepare("SELECT scope, scope_id, month, spent_micros FROM spend WHERE month = ?",
                   StoreOp::kSnapshotLoad);
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

Status SqliteStore::AddSpend(SpendScope scope, std::string_view scope_id, std::string_view month,
                             int64_t micros) {
  Result<Statement*> q =
      db_->Cached(add_spend_,
                  "INSERT INTO spend (scope, scope_id, month, spent_micros) "
                  "VALUES (?, ?, ?, ?) ON CONFLICT (scope, scope_id, month) "
                  "DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros",
                  StoreOp::kSpendWrite);
  if (!q.ok()) return q.error();
  (*q)->Bind(1, ScopeName(scope)).Bind(2, scope_id).Bind(3, month).Bind(4, micros);
  return (*q)->Run();
}

Status SqliteStore::SetSpend(std::span<const SpendRow> rows) {
  return InTransaction([&]() -> Status {
    Result<Statement*> q = db_->Cached(set_spend_,
                                       "INSERT INTO spend (scope, scope_id, month, spent_micros) "
                                       "VALUES (?, ?, ?, ?) ON CONFLICT (scope, scope_id, month) "
                                       "DO UPDATE SET spent_micros = excluded.spent_micros",
                                       StoreOp::kReconcile);
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

}  // namespace turnpike::store
