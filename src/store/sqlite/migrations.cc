#include "store/sqlite/migrations.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace turnpike::store::sqlite {
namespace {

// Each entry is one schema version; never edit a released one, append a new one.
constexpr std::array<std::string_view, 12> kMigrations = {
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
    // (call_log_write.cc): a tenant's id ranges per batch, and each month's first id. And
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
)sql",
    // 4: the completion tokens a reasoning model spent thinking (part of completion_tokens,
    // priced with them), in their own column; 0 where none were reported.
    R"sql(
ALTER TABLE call_log_rows ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
DROP VIEW call_log;
CREATE VIEW call_log AS
  SELECT c.id, c.time_ms, c.request_id, r.tenant_id, r.key_id, r.model, r.deployment, c.status,
         c.error, c.prompt_tokens, c.completion_tokens, c.cached_tokens, c.cost_micros,
         c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, r.month,
         c.request_body, c.dropped_rows, c.cache_creation_tokens, c.reasoning_tokens
  FROM call_log_rows c JOIN call_routes r ON r.id = c.route_id;
)sql",
    // 5: a plan's price per search query (micro-USD); NULL prices a search by tokens.
    R"sql(
ALTER TABLE plans ADD COLUMN search_query_price_micros INTEGER;
)sql",
    // 6: a plan's fail-open choice (governance::Plan::fail_open); 0 (fail closed) by default.
    R"sql(
ALTER TABLE plans ADD COLUMN fail_open INTEGER NOT NULL DEFAULT 0;
)sql",
    // 7: reasoning tokens priced apart (governance::ModelPrice::reasoning); NULL: as output.
    R"sql(
ALTER TABLE prices ADD COLUMN reasoning_micros_per_mtok INTEGER;
)sql",
    // 8: the fields the cache, agent and guard stages record (store/call_record.h), all in
    // one step so that those features add no call-log migration: what the response cache did
    // (CacheStatus), the agent and its config version, the response id the client was given,
    // the spans a guard replaced, and a bit set of named flags (call_flags). Rows written
    // before read as requests that set none of them.
    R"sql(
ALTER TABLE call_log_rows ADD COLUMN cache_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE call_log_rows ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE call_log_rows ADD COLUMN agent_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE call_log_rows ADD COLUMN response_id TEXT NOT NULL DEFAULT '';
ALTER TABLE call_log_rows ADD COLUMN guard_replacements INTEGER NOT NULL DEFAULT 0;
ALTER TABLE call_log_rows ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;
DROP VIEW call_log;
CREATE VIEW call_log AS
  SELECT c.id, c.time_ms, c.request_id, r.tenant_id, r.key_id, r.model, r.deployment, c.status,
         c.error, c.prompt_tokens, c.completion_tokens, c.cached_tokens, c.cost_micros,
         c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, r.month,
         c.request_body, c.dropped_rows, c.cache_creation_tokens, c.reasoning_tokens,
         c.cache_status, c.agent_id, c.agent_version, c.response_id, c.guard_replacements,
         c.flags
  FROM call_log_rows c JOIN call_routes r ON r.id = c.route_id;
)sql",
    // 9: a key's kind (governance::KeyKind): 'virtual' (the doors' keys; every key before) or
    // 'admin' (a tenant's admin token).
    R"sql(
ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'virtual'
  CHECK (kind IN ('virtual', 'admin'));
)sql",
    // 10: the LLM response cache's choices (governance::CachePolicy, Key::cache_off): a plan's
    // mode ('' = the gateway's default), scope, whether tool-call answers are stored and its
    // semantic threshold (x 10000, 0 = exact only); a key that never uses the cache.
    R"sql(
ALTER TABLE plans ADD COLUMN cache TEXT NOT NULL DEFAULT '' CHECK (cache IN ('', 'on', 'off'));
ALTER TABLE plans ADD COLUMN cache_scope TEXT NOT NULL DEFAULT 'tenant'
  CHECK (cache_scope IN ('tenant', 'key'));
ALTER TABLE plans ADD COLUMN cache_tool_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plans ADD COLUMN cache_semantic_bp INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN cache_off INTEGER NOT NULL DEFAULT 0;
)sql",
    // 11: daily spend counters per tenant, key, model and UTC day (store/daily_spend.h), added
    // to by the call-log writer's transaction; read by day range (the key's first column).
    // Rows written before this version are not counted in them.
    R"sql(
CREATE TABLE daily_spend (
  day TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  cost_micros INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  PRIMARY KEY (day, tenant_id, key_id, model)
) WITHOUT ROWID;
)sql",
    // 12: a plan's own budget-alert thresholds (governance::Plan::budget_alerts, stored as
    // records_sql.h BudgetAlertsText: '' the gateway's, 'none', or "50,80,100").
    R"sql(
ALTER TABLE plans ADD COLUMN budget_alerts TEXT NOT NULL DEFAULT '';
)sql"};

// Tables of this engine only, which the logical-schema test skips: the call log's rows
// (call_log_rows; PostgreSQL keeps them in chunks), read through the `call_log` view.
constexpr std::array<std::string_view, 1> kPrivateTables = {"call_log_rows"};

int VersionOf(Database& db, std::string_view sql, std::string_view role) {
  Result<Statement> q = db.Prepare(sql, StoreOp::kMigrate);
  if (!q.ok()) return -1;
  if (!role.empty()) q->Bind(1, role);
  Result<bool> row = q->Step();
  return row.ok() && row.value() ? static_cast<int>(q->Int(0)) : 0;
}

Error Newer(std::string_view role, int current, size_t known) {
  return Error{ErrorCode::kInternal,
               "the store's schema version " + std::to_string(current) + " of role " +
                   std::string(role) + " is newer than this binary's " + std::to_string(known) +
                   "; run a newer turnpike",
               ""};
}

}  // namespace

EngineSchema CoreSchema() { return {kMigrations, kPrivateTables}; }

int LatestSchemaVersion() { return static_cast<int>(kMigrations.size()); }

int SchemaVersion(Database& db) { return RoleVersion(db, kCoreRole); }

int RoleVersion(Database& db, std::string_view role) {
  const int version =
      VersionOf(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE role = ?", role);
  if (version >= 0) return version;
  // No table yet (0), or one of a database before roles: the core schema's versions.
  if (role != kCoreRole) return 0;
  return std::max(VersionOf(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", ""), 0);
}

Status PrepareMigrations(Database& db) {
  Status table = db.Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (role TEXT NOT NULL, version INTEGER NOT "
      "NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (role, version))",
      StoreOp::kMigrate);
  if (!table.ok()) return table;
  if (db.Prepare("SELECT role FROM schema_migrations LIMIT 0", StoreOp::kMigrate).ok()) {
    return Ok{};
  }
  // A database before roles: its versions are the core role's.
  return InTransaction(db, [&]() -> Status {
    return db.Exec(
        "ALTER TABLE schema_migrations RENAME TO schema_migrations_before_roles; "
        "CREATE TABLE schema_migrations (role TEXT NOT NULL, version INTEGER NOT NULL, "
        "applied_at INTEGER NOT NULL, PRIMARY KEY (role, version)); "
        "INSERT INTO schema_migrations (role, version, applied_at) "
        "SELECT 'core', version, applied_at FROM schema_migrations_before_roles; "
        "DROP TABLE schema_migrations_before_roles;",
        StoreOp::kMigrate);
  });
}

Status MigrateRole(Database& db, std::string_view role, std::span<const std::string_view> steps,
                   int version) {
  const int current = RoleVersion(db, role);
  if (current > static_cast<int>(steps.size())) return Newer(role, current, steps.size());
  const size_t target = std::min(static_cast<size_t>(std::max(version, 0)), steps.size());
  for (size_t v = static_cast<size_t>(current); v < target; ++v) {
    Status applied = InTransaction(db, [&]() -> Status {
      Status ran = db.Exec(steps[v], StoreOp::kMigrate);
      if (!ran.ok()) return ran;
      Result<Statement> mark =
          db.Prepare("INSERT INTO schema_migrations (role, version, applied_at) VALUES (?, ?, ?)",
                     StoreOp::kMigrate);
      if (!mark.ok()) return mark.error();
      mark->Bind(1, role).Bind(2, static_cast<int64_t>(v + 1)).Bind(3, UnixSeconds());
      return mark->Run();
    });
    if (!applied.ok()) return applied;
  }
  return Ok{};
}

Status MigrateTo(Database& db, int version) {
  Status prepared = PrepareMigrations(db);
  if (!prepared.ok()) return prepared;
  return MigrateRole(db, kCoreRole, kMigrations, version);
}

}  // namespace turnpike::store::sqlite
