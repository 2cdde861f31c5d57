#include "store/postgres/migrations.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace turnpike::store::postgres {
namespace {

// The core role's steps (store/role.h): each entry is one schema version; never edit a released
// one, append a new one (adding a call-log column is one entry: a nullable array, ALTER TABLE
// call_log_chunks ADD COLUMN ... T[], and the `call_log` view recreated with its default, as
// migration 8; plus its line in call_log_columns.h, kColumns).
constexpr std::array<std::string_view, 12> kMigrations = {
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
)sql",
    // 7: the rows of a batch in chunks, a column per array (call_log_columns.h): one tuple
    // and one primary-key entry per chunk of up to 4,096 rows instead of per row, each column
    // compressed (lz4 where the server has it, else stored uncompressed out of line: pglz costs
    // more than it saves here). A row's id is its chunk's first_id plus its place in the chunk.
    // Existing rows move into chunks of consecutive ids, so every id stays; call_log_blocks is
    // rebuilt per chunk. `call_log` stays the rows as they read.
    R"sql(
CREATE TABLE call_log_chunks (
  first_id BIGINT PRIMARY KEY,
  n INTEGER NOT NULL,
  route_id BIGINT[] NOT NULL,
  time_ms BIGINT[] NOT NULL,
  request_id TEXT[] NOT NULL,
  status BIGINT[] NOT NULL,
  error TEXT[] NOT NULL,
  prompt_tokens BIGINT[] NOT NULL,
  completion_tokens BIGINT[] NOT NULL,
  cached_tokens BIGINT[] NOT NULL,
  cache_creation_tokens BIGINT[] NOT NULL,
  cost_micros BIGINT[] NOT NULL,
  estimated BIGINT[] NOT NULL,
  unpriced BIGINT[] NOT NULL,
  ttft_us BIGINT[] NOT NULL,
  total_us BIGINT[] NOT NULL,
  overhead_us BIGINT[] NOT NULL,
  request_body TEXT[] NOT NULL,
  dropped_rows BIGINT[] NOT NULL,
  reasoning_tokens BIGINT[] NOT NULL
);
DO $$
DECLARE c text;
BEGIN
  FOR c IN SELECT attname FROM pg_attribute
           WHERE attrelid = 'call_log_chunks'::regclass AND attnum > 2 AND NOT attisdropped LOOP
    BEGIN
      EXECUTE format('ALTER TABLE call_log_chunks ALTER COLUMN %I SET COMPRESSION lz4', c);
    EXCEPTION WHEN OTHERS THEN
      EXECUTE format('ALTER TABLE call_log_chunks ALTER COLUMN %I SET STORAGE EXTERNAL', c);
    END;
  END LOOP;
END $$;
WITH islands AS (
  SELECT c.*, c.id - row_number() OVER (ORDER BY c.id) AS island FROM call_log_rows c
), parts AS (
  SELECT i.*, (row_number() OVER (PARTITION BY i.island ORDER BY i.id) - 1) / 4096 AS part
  FROM islands i
)
INSERT INTO call_log_chunks
  SELECT MIN(id), COUNT(*)::INTEGER, array_agg(route_id ORDER BY id),
         array_agg(time_ms ORDER BY id), array_agg(request_id ORDER BY id),
         array_agg(status ORDER BY id), array_agg(error ORDER BY id),
         array_agg(prompt_tokens ORDER BY id), array_agg(completion_tokens ORDER BY id),
         array_agg(cached_tokens ORDER BY id), array_agg(cache_creation_tokens ORDER BY id),
         array_agg(cost_micros ORDER BY id), array_agg(estimated ORDER BY id),
         array_agg(unpriced ORDER BY id), array_agg(ttft_us ORDER BY id),
         array_agg(total_us ORDER BY id), array_agg(overhead_us ORDER BY id),
         array_agg(request_body ORDER BY id), array_agg(dropped_rows ORDER BY id),
         array_agg(reasoning_tokens ORDER BY id)
  FROM parts GROUP BY island, part;
DROP VIEW call_log;
DROP TABLE call_log_rows;
CREATE VIEW call_log AS
  SELECT k.first_id + u.ord - 1 AS id, u.time_ms, u.request_id, r.tenant_id, r.key_id, r.model,
         r.deployment, u.status::INTEGER AS status, u.error, u.prompt_tokens,
         u.completion_tokens, u.cached_tokens, u.cache_creation_tokens, u.cost_micros,
         u.estimated::INTEGER AS estimated, u.unpriced::INTEGER AS unpriced, u.ttft_us,
         u.total_us, u.overhead_us, r.month, u.request_body, u.dropped_rows, u.reasoning_tokens
  FROM call_log_chunks k
  CROSS JOIN LATERAL unnest(k.route_id, k.time_ms, k.request_id, k.status, k.error,
                            k.prompt_tokens, k.completion_tokens, k.cached_tokens,
                            k.cache_creation_tokens, k.cost_micros, k.estimated, k.unpriced,
                            k.ttft_us, k.total_us, k.overhead_us, k.request_body,
                            k.dropped_rows, k.reasoning_tokens)
    WITH ORDINALITY AS u(route_id, time_ms, request_id, status, error, prompt_tokens,
                         completion_tokens, cached_tokens, cache_creation_tokens, cost_micros,
                         estimated, unpriced, ttft_us, total_us, overhead_us, request_body,
                         dropped_rows, reasoning_tokens, ord)
  JOIN call_routes r ON r.id = u.route_id;
DELETE FROM call_log_blocks;
INSERT INTO call_log_blocks
  SELECT r.tenant_id, MIN(k.first_id + u.ord - 1), MAX(k.first_id + u.ord - 1)
  FROM call_log_chunks k
  CROSS JOIN LATERAL unnest(k.route_id) WITH ORDINALITY AS u(route_id, ord)
  JOIN call_routes r ON r.id = u.route_id
  GROUP BY r.tenant_id, k.first_id;
)sql",
    // 8: the fields the cache, agent and guard stages record (store/call_record.h), as the
    // embedded engine's migration 8, all in one step. Each is an array of the chunk, NULL in
    // the chunks written before it (and in those a spool of an earlier format replays:
    // call_log.h): the view reads a missing element as the default, so no chunk is rewritten.
    R"sql(
ALTER TABLE call_log_chunks ADD COLUMN cache_status BIGINT[];
ALTER TABLE call_log_chunks ADD COLUMN agent_id TEXT[];
ALTER TABLE call_log_chunks ADD COLUMN agent_version BIGINT[];
ALTER TABLE call_log_chunks ADD COLUMN response_id TEXT[];
ALTER TABLE call_log_chunks ADD COLUMN guard_replacements BIGINT[];
ALTER TABLE call_log_chunks ADD COLUMN flags BIGINT[];
DO $$
DECLARE c text;
BEGIN
  FOREACH c IN ARRAY ARRAY['cache_status', 'agent_id', 'agent_version', 'response_id',
                           'guard_replacements', 'flags'] LOOP
    BEGIN
      EXECUTE format('ALTER TABLE call_log_chunks ALTER COLUMN %I SET COMPRESSION lz4', c);
    EXCEPTION WHEN OTHERS THEN
      EXECUTE format('ALTER TABLE call_log_chunks ALTER COLUMN %I SET STORAGE EXTERNAL', c);
    END;
  END LOOP;
END $$;
DROP VIEW call_log;
CREATE VIEW call_log AS
  SELECT k.first_id + u.ord - 1 AS id, u.time_ms, u.request_id, r.tenant_id, r.key_id, r.model,
         r.deployment, u.status::INTEGER AS status, u.error, u.prompt_tokens,
         u.completion_tokens, u.cached_tokens, u.cache_creation_tokens, u.cost_micros,
         u.estimated::INTEGER AS estimated, u.unpriced::INTEGER AS unpriced, u.ttft_us,
         u.total_us, u.overhead_us, r.month, u.request_body, u.dropped_rows, u.reasoning_tokens,
         COALESCE(u.cache_status, 0)::INTEGER AS cache_status,
         COALESCE(u.agent_id, '') AS agent_id, COALESCE(u.agent_version, 0) AS agent_version,
         COALESCE(u.response_id, '') AS response_id,
         COALESCE(u.guard_replacements, 0) AS guard_replacements,
         COALESCE(u.flags, 0) AS flags
  FROM call_log_chunks k
  CROSS JOIN LATERAL unnest(k.route_id, k.time_ms, k.request_id, k.status, k.error,
                            k.prompt_tokens, k.completion_tokens, k.cached_tokens,
                            k.cache_creation_tokens, k.cost_micros, k.estimated, k.unpriced,
                            k.ttft_us, k.total_us, k.overhead_us, k.request_body,
                            k.dropped_rows, k.reasoning_tokens, k.cache_status, k.agent_id,
                            k.agent_version, k.response_id, k.guard_replacements, k.flags)
    WITH ORDINALITY AS u(route_id, time_ms, request_id, status, error, prompt_tokens,
                         completion_tokens, cached_tokens, cache_creation_tokens, cost_micros,
                         estimated, unpriced, ttft_us, total_us, overhead_us, request_body,
                         dropped_rows, reasoning_tokens, cache_status, agent_id, agent_version,
                         response_id, guard_replacements, flags, ord)
  JOIN call_routes r ON r.id = u.route_id;
)sql",
    // 9: a key's kind (governance::KeyKind): 'virtual' (the doors' keys; every key before) or
    // 'admin' (a tenant's admin token).
    R"sql(
ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'virtual'
  CHECK (kind IN ('virtual', 'admin'));
)sql",
    // 10: the LLM response cache's choices, as the embedded engine's migration 10.
    R"sql(
ALTER TABLE plans ADD COLUMN cache TEXT NOT NULL DEFAULT '' CHECK (cache IN ('', 'on', 'off'));
ALTER TABLE plans ADD COLUMN cache_scope TEXT NOT NULL DEFAULT 'tenant'
  CHECK (cache_scope IN ('tenant', 'key'));
ALTER TABLE plans ADD COLUMN cache_tool_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE plans ADD COLUMN cache_semantic_bp BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN cache_off BIGINT NOT NULL DEFAULT 0;
)sql",
    // 11: daily spend counters, as the embedded engine's migration 11 (store/daily_spend.h),
    // added to by a batch's script (call_log_columns.h).
    R"sql(
CREATE TABLE daily_spend (
  day TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  cost_micros BIGINT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  requests BIGINT NOT NULL,
  PRIMARY KEY (day, tenant_id, key_id, model)
);
)sql",
    // 12: a plan's own budget-alert thresholds, as the embedded engine's migration 12.
    R"sql(
ALTER TABLE plans ADD COLUMN budget_alerts TEXT NOT NULL DEFAULT '';
)sql"};

// Tables of this engine only, which the logical-schema test skips: the call log's rows in
// chunks (read through the `call_log` view), the batch keys of idempotent replay, and the
// change feed's counter.
constexpr std::array<std::string_view, 3> kPrivateTables = {"call_log_chunks", "call_log_batches",
                                                            "records_version"};

// Any constant: every replica of every version takes the same lock around migrations.
constexpr std::string_view kLock = "SELECT pg_advisory_xact_lock(7463726531)";

// schema_migrations (role, version): a database before roles has (version) only, its versions
// the core role's. Run under kLock.
constexpr std::string_view kRoleBookkeeping = R"sql(
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                 AND table_name = 'schema_migrations' AND column_name = 'role') THEN
    ALTER TABLE schema_migrations ADD COLUMN role TEXT NOT NULL DEFAULT 'core';
    ALTER TABLE schema_migrations DROP CONSTRAINT schema_migrations_pkey;
    ALTER TABLE schema_migrations ADD PRIMARY KEY (role, version);
    ALTER TABLE schema_migrations ALTER COLUMN role DROP DEFAULT;
  END IF;
END $$;
)sql";

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

Result<int> SchemaVersion(Connection& db) { return RoleVersion(db, kCoreRole); }

Result<int> RoleVersion(Connection& db, std::string_view role) {
  Params p;
  p.Add(std::string(role));
  Result<Rows> rows =
      db.Run("SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE role = $1", p,
             StoreOp::kMigrate);
  if (rows.ok()) return static_cast<int>(rows->Int(0, 0));
  // No table yet is a new database; a connection problem is reported.
  if (rows.error().code != ErrorCode::kInternal) return rows.error();
  if (role != kCoreRole) return 0;
  // A database before roles (no role column): its versions are the core role's.
  Result<Rows> before = db.Run("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", Params{},
                               StoreOp::kMigrate);
  if (!before.ok())
    return before.error().code == ErrorCode::kInternal ? Result<int>(0) : before.error();
  return static_cast<int>(before->Int(0, 0));
}

Status Migrate(Connection& db, int up_to) {
  Status table = db.Script(
      "CREATE TABLE IF NOT EXISTS schema_migrations (role TEXT NOT NULL, version INTEGER NOT "
      "NULL, applied_at BIGINT NOT NULL, PRIMARY KEY (role, version))",
      StoreOp::kMigrate);
  if (!table.ok() && table.error().code != ErrorCode::kConflict) return table;
  Status bookkeeping =
      db.Script("BEGIN; " + std::string(kLock) + "; " + std::string(kRoleBookkeeping) + " COMMIT",
                StoreOp::kMigrate);
  if (!bookkeeping.ok()) {
    (void)db.Script("ROLLBACK", StoreOp::kMigrate);
    return bookkeeping;
  }
  return MigrateRole(db, kCoreRole, kMigrations, up_to);
}

Status MigrateRole(Connection& db, std::string_view role, std::span<const std::string_view> steps,
                   int up_to) {
  while (true) {
    Status begun = db.Script(std::string("BEGIN; ") + std::string(kLock), StoreOp::kMigrate);
    if (!begun.ok()) return begun;
    Result<int> current = RoleVersion(db, role);
    auto abandon = [&db](Error error) -> Status {
      (void)db.Script("ROLLBACK", StoreOp::kMigrate);
      return error;
    };
    if (!current.ok()) return abandon(current.error());
    if (current.value() > static_cast<int>(steps.size())) {
      return abandon(Newer(role, current.value(), steps.size()));
    }
    if (current.value() >= std::min(up_to, static_cast<int>(steps.size()))) {
      return db.Script("COMMIT", StoreOp::kMigrate);
    }
    const int version = current.value() + 1;
    Status ran = db.Script(steps[static_cast<size_t>(version - 1)], StoreOp::kMigrate);
    if (!ran.ok()) return abandon(ran.error());
    // The role's name is checked to be [a-z0-9_] (store/role.h CheckRole; "core").
    Status marked = db.Script(
        "INSERT INTO schema_migrations (role, version, applied_at) VALUES ('" + std::string(role) +
            "', " + std::to_string(version) + ", EXTRACT(EPOCH FROM now())::BIGINT); COMMIT",
        StoreOp::kMigrate);
    if (!marked.ok()) return abandon(marked.error());
  }
}

}  // namespace turnpike::store::postgres
