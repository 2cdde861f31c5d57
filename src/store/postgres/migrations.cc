#include "store/postgres/migrations.h"

#include <array>
#include <string>
#include <string_view>

namespace turnpike::store::postgres {
namespace {

// Each entry is one schema version; never edit a released one, append a new one (adding a
// call-log column is one entry: ALTER TABLE call_log ADD COLUMN ..., plus its line in
// call_log_columns.h, kColumns).
constexpr std::array<std::string_view, 6> kMigrations = {
    R"sql(
CREATE TABLE plans (
  id TEXT PRIMARY KEY,
  monthly_budget_micros BIGINT,
  rpm BIGINT,
  tpm BIGINT,
  allowed_models TEXT NOT NULL DEFAULT '',
  max_request_cost_micros BIGINT,
  updated_at BIGINT NOT NULL
);
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
  plan_id TEXT NOT NULL REFERENCES plans (id),
  log_bodies BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE api_keys (
  public_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants (id),
  name TEXT NOT NULL,
  secret_sha256 BYTEA NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
  expires_at BIGINT NOT NULL DEFAULT 0,
  monthly_budget_micros BIGINT,
  rpm BIGINT,
  tpm BIGINT,
  allowed_models TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
CREATE TABLE prices (
  model TEXT PRIMARY KEY,
  input_micros_per_mtok BIGINT NOT NULL,
  output_micros_per_mtok BIGINT NOT NULL,
  cached_input_micros_per_mtok BIGINT NOT NULL,
  max_output_tokens BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  cache_write_micros_per_mtok BIGINT
);
CREATE TABLE spend (
  scope TEXT NOT NULL CHECK (scope IN ('tenant', 'key')),
  scope_id TEXT NOT NULL,
  month TEXT NOT NULL,
  spent_micros BIGINT NOT NULL,
  PRIMARY KEY (scope, scope_id, month)
);
CREATE TABLE call_log (
  id BIGSERIAL PRIMARY KEY,
  time_ms BIGINT NOT NULL,
  request_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  deployment TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cached_tokens BIGINT NOT NULL,
  cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
  cost_micros BIGINT NOT NULL,
  estimated INTEGER NOT NULL,
  unpriced INTEGER NOT NULL,
  ttft_us BIGINT,
  total_us BIGINT NOT NULL,
  overhead_us BIGINT,
  month TEXT NOT NULL,
  request_body TEXT,
  dropped_rows BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX call_log_tenant ON call_log (tenant_id, id);
CREATE TABLE call_log_batches (
  batch_key TEXT PRIMARY KEY
);
CREATE INDEX call_log_month ON call_log USING brin (month);
CREATE TABLE records_version (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO records_version (id, version) VALUES (1, 0);
CREATE FUNCTION turnpike_records_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE records_version SET version = version + 1 WHERE id = 1;
  PERFORM pg_notify('turnpike_records', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER plans_changed AFTER INSERT OR UPDATE OR DELETE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION turnpike_records_changed();
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE ON tenants
  FOR EACH STATEMENT EXECUTE FUNCTION turnpike_records_changed();
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION turnpike_records_changed();
CREATE TRIGGER prices_changed AFTER INSERT OR UPDATE OR DELETE ON prices
  FOR EACH STATEMENT EXECUTE FUNCTION turnpike_records_changed();
)sql",
    // 2: a plan's price per search query (micro-USD); NULL prices a search by tokens.
    R"sql(
ALTER TABLE plans ADD COLUMN search_query_price_micros BIGINT;
)sql",
    // 3: the completion tokens a reasoning model spent thinking (part of completion_tokens,
    // priced with them), as the embedded engine's migration 4; 0 where none were reported.
    R"sql(
ALTER TABLE call_log ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
)sql",
    // 4: a plan's fail-open choice (governance::Plan::fail_open); 0 (fail closed) by default.
    R"sql(
ALTER TABLE plans ADD COLUMN fail_open BIGINT NOT NULL DEFAULT 0;
)sql",
    // 5: reasoning tokens priced apart (governance::ModelPrice::reasoning), as the embedded
    // engine's migration 7; NULL: as output.
    R"sql(
ALTER TABLE prices ADD COLUMN reasoning_micros_per_mtok BIGINT;
)sql",
    // 6: the embedded engine's call-log layout (its migrations 2 and 3), for the same reason:
    // every per-row index entry and repeated text is paid on every request. A row refers to
    // its route (tenant, key, model, deployment, month) by id; the tenant btree and the month
    // BRIN index give way to coarse indexes written once per batch (a tenant's id range per
    // batch, each month's first id); ids are no longer a per-row sequence but a block per
    // batch (call_log_batches.block, call_log.h), so a batch's ids are contiguous. `call_log`
    // stays the rows as they read: a view, with the old table's columns in their old order.
    // The block sequence starts above every existing id.
    R"sql(
CREATE TABLE call_routes (
  id BIGSERIAL PRIMARY KEY,
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
  id BIGINT PRIMARY KEY,
  route_id BIGINT NOT NULL,
  time_ms BIGINT NOT NULL,
  request_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cached_tokens BIGINT NOT NULL,
  cache_creation_tokens BIGINT NOT NULL,
  cost_micros BIGINT NOT NULL,
  estimated INTEGER NOT NULL,
  unpriced INTEGER NOT NULL,
  ttft_us BIGINT,
  total_us BIGINT NOT NULL,
  overhead_us BIGINT,
  request_body TEXT,
  dropped_rows BIGINT NOT NULL,
  reasoning_tokens BIGINT NOT NULL
);
INSERT INTO call_log_rows
  SELECT c.id, r.id, c.time_ms, c.request_id, c.status, c.error, c.prompt_tokens,
         c.completion_tokens, c.cached_tokens, c.cache_creation_tokens, c.cost_micros,
         c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, c.request_body,
         c.dropped_rows, c.reasoning_tokens
  FROM call_log c JOIN call_routes r
    ON r.tenant_id = c.tenant_id AND r.key_id = c.key_id AND r.model = c.model
   AND r.deployment = c.deployment AND r.month = c.month;
CREATE TABLE call_log_blocks (
  tenant_id TEXT NOT NULL,
  first_id BIGINT NOT NULL,
  last_id BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, first_id)
);
INSERT INTO call_log_blocks SELECT tenant_id, MIN(id), MAX(id) FROM call_log GROUP BY tenant_id;
CREATE TABLE call_log_months (
  month TEXT PRIMARY KEY,
  first_id BIGINT NOT NULL
);
INSERT INTO call_log_months SELECT month, MIN(id) FROM call_log GROUP BY month;
CREATE SEQUENCE call_log_block_seq;
SELECT setval('call_log_block_seq', (SELECT COALESCE(MAX(id), 0) FROM call_log) / 1048576 + 1);
ALTER TABLE call_log_batches ADD COLUMN block BIGINT;
DROP TABLE call_log;
CREATE VIEW call_log AS
  SELECT c.id, c.time_ms, c.request_id, r.tenant_id, r.key_id, r.model, r.deployment, c.status,
         c.error, c.prompt_tokens, c.completion_tokens, c.cached_tokens,
         c.cache_creation_tokens, c.cost_micros, c.estimated, c.unpriced, c.ttft_us,
         c.total_us, c.overhead_us, r.month, c.request_body, c.dropped_rows,
         c.reasoning_tokens
  FROM call_log_rows c JOIN call_routes r ON r.id = c.route_id;
)sql"};

// Any constant: every replica of every version takes the same lock around migrations.
constexpr std::string_view kLock = "SELECT pg_advisory_xact_lock(7463726531)";

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Result<int> SchemaVersion(Connection& db) {
  Result<Rows> rows = db.Run("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", Params{},
                             StoreOp::kMigrate);
  if (!rows.ok()) {
    // No table yet is a new database; a connection problem is reported.
    if (rows.error().code == ErrorCode::kInternal) return 0;
    return rows.error();
  }
  return static_cast<int>(rows->Int(0, 0));
}

Status Migrate(Connection& db, int up_to) {
  Status table = db.Script(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "applied_at BIGINT NOT NULL)",
      StoreOp::kMigrate);
  if (!table.ok() && table.error().code != ErrorCode::kConflict) return table;
  while (true) {
    Status begun = db.Script(std::string("BEGIN; ") + std::string(kLock), StoreOp::kMigrate);
    if (!begun.ok()) return begun;
    Result<int> current = SchemaVersion(db);
    auto abandon = [&db](Error error) -> Status {
      (void)db.Script("ROLLBACK", StoreOp::kMigrate);
      return error;
    };
    if (!current.ok()) return abandon(current.error());
    if (current.value() > LatestSchemaVersion()) {
      return abandon(Error{ErrorCode::kInternal,
                           "the store's schema version " + std::to_string(current.value()) +
                               " is newer than this binary's " +
                               std::to_string(LatestSchemaVersion()) + "; run a newer turnpike",
                           ""});
    }
    if (current.value() >= up_to) {
      return db.Script("COMMIT", StoreOp::kMigrate);
    }
    const int version = current.value() + 1;
    Status ran = db.Script(kMigrations[static_cast<size_t>(version - 1)], StoreOp::kMigrate);
    if (!ran.ok()) return abandon(ran.error());
    Status marked =
        db.Script("INSERT INTO schema_migrations (version, applied_at) VALUES (" +
                      std::to_string(version) + ", EXTRACT(EPOCH FROM now())::BIGINT); COMMIT",
                  StoreOp::kMigrate);
    if (!marked.ok()) return abandon(marked.error());
  }
}

}  // namespace turnpike::store::postgres
