#!/usr/bin/env bash
# What an admin page of the call log costs PostgreSQL over chunks (schema 7): a throwaway
# cluster, migrated by the turnpike binary, filled with 1,000 chunks of 4,096 rows (4.1 M
# rows, 64 tenants: t1 one row per chunk, t2-t64 the rest in turn), then the statements
# QueryCalls sends (call_log.cc) timed by psql, three times each: a tenant's ranges in rounds
# of 4, 64 and 256 (a page reads at most a round's chunks), every tenant's newest rows, and
# reconcile's statement over the month. Wall times on a quiet machine; a read unnests whole chunks.
#
#   bench/postgres-call-log-pages.sh          # TURNPIKE=build/src/app/turnpike by default
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive
bench_workdir
pg_cluster_start "$dir/pg"
# The schema: a gateway started once over the database migrates it.
cat >"$dir/t.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""}
governance: {enabled: true}
store: {engine: postgres, url: 'postgresql://turnpike@127.0.0.1:$pg_port/turnpike', path: $dir/pg.db}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://127.0.0.1:9/v1"}]
YAML
TURNPIKE_ADMIN_TOKEN=x "$TURNPIKE" serve --config "$dir/t.yaml" >"$dir/gw.log" 2>&1 &
gw=$!
port_of "$dir/gw.log" "turnpike listening on" >/dev/null
kill "$gw"; wait "$gw" || true
P="$PG_BIN/psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $pg_port -U turnpike -d turnpike"
$P <<'SQL'
INSERT INTO call_routes (id, tenant_id, key_id, model, deployment, month)
  SELECT g, 't' || g, 'k' || g, 'm', 'openai:0', '2026-12' FROM generate_series(1, 64) g;
-- 1000 chunks of 4096 rows: route 1 (tenant t1) once per chunk (place 0), routes 2..64 cycling.
INSERT INTO call_log_chunks
SELECT c * 1048576, 4096,
  array_agg(CASE WHEN i = 0 THEN 1 ELSE 2 + i % 63 END ORDER BY i),
  array_agg(1796000000000 + c * 4096 + i ORDER BY i),
  array_agg(md5((c * 4096 + i)::text) ORDER BY i),
  array_agg(200::bigint ORDER BY i), array_agg(''::text ORDER BY i),
  array_agg(21::bigint ORDER BY i), array_agg(16::bigint ORDER BY i), array_agg(0::bigint ORDER BY i),
  array_agg(0::bigint ORDER BY i), array_agg((i % 7)::bigint ORDER BY i), array_agg(0::bigint ORDER BY i),
  array_agg(0::bigint ORDER BY i), array_agg(NULL::bigint ORDER BY i), array_agg(3500::bigint ORDER BY i),
  array_agg(40::bigint ORDER BY i), array_agg(NULL::text ORDER BY i), array_agg(0::bigint ORDER BY i),
  array_agg(0::bigint ORDER BY i)
FROM generate_series(1, 1000) c, generate_series(0, 4095) i GROUP BY c;
INSERT INTO call_log_blocks SELECT 't1', c * 1048576, c * 1048576 FROM generate_series(1, 1000) c;
INSERT INTO call_log_blocks SELECT 't' || t, c * 1048576 + 1, c * 1048576 + 4095 FROM generate_series(1, 1000) c, generate_series(2, 64) t;
INSERT INTO call_log_months VALUES ('2026-12', 1048576);
ANALYZE;
SQL
echo "call_log_chunks: $($P -tA -c "SELECT pg_size_pretty(pg_total_relation_size('call_log_chunks')), (SELECT count(*) FROM call_log_chunks)") (size|chunks)"
U="k.route_id, k.time_ms, k.request_id, k.status, k.error, k.prompt_tokens, k.completion_tokens, k.cached_tokens, k.cache_creation_tokens, k.cost_micros, k.estimated, k.unpriced, k.ttft_us, k.total_us, k.overhead_us, k.request_body, k.dropped_rows, k.reasoning_tokens"
N="route_id, time_ms, request_id, status, error, prompt_tokens, completion_tokens, cached_tokens, cache_creation_tokens, cost_micros, estimated, unpriced, ttft_us, total_us, overhead_us, request_body, dropped_rows, reasoning_tokens"
q() { # tenant round limit
cat <<SQL
SELECT k.first_id + u.ord - 1 AS id, r.tenant_id, r.key_id, u.time_ms, u.request_id FROM (SELECT first_id, last_id FROM call_log_blocks WHERE tenant_id = '$1' AND first_id < 9223372036854775807 ORDER BY first_id DESC LIMIT $2) b CROSS JOIN LATERAL (SELECT * FROM call_log_chunks c WHERE c.first_id <= b.last_id AND c.first_id > b.first_id - 4096 OFFSET 0) k CROSS JOIN LATERAL unnest($U) WITH ORDINALITY AS u($N, ord) JOIN call_routes r ON r.id = u.route_id WHERE k.first_id + u.ord - 1 BETWEEN b.first_id AND b.last_id AND r.tenant_id = '$1' ORDER BY 1 DESC LIMIT $3;
SQL
}
for t in "t1 4 50" "t1 64 50" "t1 256 50" "t5 4 50" "t5 4 1000" "t5 256 1000"; do
  set -- $t
  echo "== tenant $1 round $2 limit $3"
  { echo '\timing on'; q $1 $2 $3; q $1 $2 $3; q $1 $2 $3; } | $P -o /dev/null 2>&1 | grep Time
done
echo "== all rows, newest 50 (round 4)"
{ echo '\timing on'; for i in 1 2 3; do echo "SELECT k.first_id + u.ord - 1 AS id, u.request_id FROM (SELECT first_id, first_id + n - 1 AS last_id FROM call_log_chunks WHERE first_id < 9223372036854775807 ORDER BY first_id DESC LIMIT 4) b CROSS JOIN LATERAL (SELECT * FROM call_log_chunks c WHERE c.first_id <= b.last_id AND c.first_id > b.first_id - 4096 OFFSET 0) k CROSS JOIN LATERAL unnest($U) WITH ORDINALITY AS u($N, ord) JOIN call_routes r ON r.id = u.route_id WHERE k.first_id + u.ord - 1 BETWEEN b.first_id AND b.last_id ORDER BY 1 DESC LIMIT 50;"; done; } | $P -o /dev/null 2>&1 | grep Time
echo "== reconcile's statement (ReconcileSpend, call_log.cc) over the month, rolled back"
m="'2026-12'"
{ echo '\timing on'; for i in 1 2 3; do echo "BEGIN; SELECT pg_advisory_xact_lock(7463726532); WITH first AS (SELECT first_id FROM call_log_months WHERE month = $m), logged AS (SELECT CASE WHEN GROUPING(r.tenant_id) = 0 THEN 'tenant' ELSE 'key' END AS scope, COALESCE(r.tenant_id, r.key_id) AS scope_id, SUM(u.cost_micros) AS spent FROM call_log_chunks k CROSS JOIN LATERAL unnest(k.route_id, k.cost_micros) WITH ORDINALITY AS u(route_id, cost_micros, ord) JOIN call_routes r ON r.id = u.route_id WHERE r.month = $m AND k.first_id > (SELECT first_id FROM first) - 4096 AND k.first_id + u.ord - 1 >= (SELECT first_id FROM first) GROUP BY GROUPING SETS ((r.tenant_id), (r.key_id))), persisted AS (SELECT scope, scope_id, spent_micros FROM spend WHERE month = $m), drift AS (SELECT COALESCE(l.scope, p.scope) AS scope, COALESCE(l.scope_id, p.scope_id) AS scope_id, COALESCE(l.spent, 0)::BIGINT - COALESCE(p.spent_micros, 0) AS micros FROM logged l FULL JOIN persisted p ON p.scope = l.scope AND p.scope_id = l.scope_id), added AS (INSERT INTO spend (scope, scope_id, month, spent_micros) SELECT scope, scope_id, $m, micros FROM drift WHERE micros <> 0 ON CONFLICT (scope, scope_id, month) DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros) SELECT scope, scope_id, micros FROM drift WHERE micros <> 0; ROLLBACK;"; done; } | $P -o /dev/null 2>&1 | grep Time
