#!/usr/bin/env bash
# What PostgreSQL spends per call-log row behind a live gateway: one Turnpike (1 worker,
# governed, store.engine: postgres) over a throwaway PostgreSQL 15 cluster, loaded with
# `turnpike bench` (50 connections) for SECONDS after a 1 s warm-up; prints the cluster's CPU
# (every process of it, and the children it reaped) divided by the call-log rows written
# meanwhile, the call log's bytes on disk per row, and each cluster process's ticks.
#
#   bench/postgres-row-cpu.sh [TURNPIKE-BINARY] [SECONDS=5] [CALL-LOG-YAML={}]
#
# Run it for two binaries (or two call_log settings) one after the other to compare them.
set -euo pipefail
TURNPIKE=${1:-build/src/app/turnpike}
secs=${2:-5}
call_log=${3:-"{}"}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive
bench_workdir
pg_cluster_start "$dir/pg"
bench_mock
cat >"$dir/t.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""}
governance: {enabled: true}
call_log: $call_log
store: {engine: postgres, url: 'postgresql://turnpike@127.0.0.1:$pg_port/turnpike', path: $dir/pg.db}
$(bench_models_yaml)
YAML
TURNPIKE_ADMIN_TOKEN=bench "$TURNPIKE" serve --config "$dir/t.yaml" >"$dir/gw.log" 2>&1 &
pids+=($!)
port=$(port_of "$dir/gw.log" "turnpike listening on")
export TURNPIKE_URL=http://127.0.0.1:$port TURNPIKE_ADMIN_TOKEN=bench
key=$(bench_key)
rows() { curl -s "$TURNPIKE_URL/metrics" | awk '/^turnpike_call_log_rows_total / {print $2}'; }
load() {
  "$TURNPIKE" bench --url "$TURNPIKE_URL/v1/chat/completions" -c 50 -d "$1" -q \
    -H "Authorization: Bearer $key" >/dev/null 2>&1
}
load 1
sleep 0.3
r0=$(rows) t0=$(pg_cluster_ticks)
load "$secs"
sleep 0.3  # the last flush
r1=$(rows) t1=$(pg_cluster_ticks)
hz=$(getconf CLK_TCK)
echo "rows $((r1 - r0)), cluster CPU $(((t1 - t0) * 1000 / hz)) ms: $(jq -n "($t1 - $t0) / $hz * 1e6 / ($r1 - $r0) * 100 | round / 100") µs per row"
# The call log's size on disk (table, TOAST and indexes) per row written, warm-up included:
# call_log_chunks from schema 7, call_log_rows before it.
size=$("$PG_BIN/psql" -X -q -tA -h 127.0.0.1 -p "$pg_port" -U turnpike -d turnpike -c \
  "SELECT pg_total_relation_size(COALESCE(to_regclass('call_log_chunks'), to_regclass('call_log_rows')))")
echo "call log on disk: $(jq -n "$size / $r1 | round") bytes per row ($r1 rows)"
for p in $(pg_cluster_pids); do
  echo "  $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-50): $(awk '{print $14 + $15}' "/proc/$p/stat") ticks"
done
