#!/usr/bin/env bash
# The Qdrant backend's mapping cache (docs/BENCHMARKS.md, "Search over Qdrant: the mapping
# cache"): the same warm _search through two gateways over one Qdrant fake, one with the
# cache (search.qdrant.mapping_ttl 5s, the default) and one without (0s), side by side in one
# run: requests to the fake per search (from the fake's own count) and the gateway's CPU per
# search (utime + stime, all threads). The fake is a node process: latencies measure it, not
# Qdrant, and are printed only for completeness.
# Usage: bench/search-qdrant-mapping-bench.sh [BUILD_DIR=build] [SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
TURNPIKE=$PWD/$build/src/app/turnpike
source bench/lib.sh
bench_exclusive
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

# The fake exits when its stdin ends: a FIFO this script holds open keeps it alive.
mkfifo "$work/fake.in"
exec {fake_in}<>"$work/fake.in"
node tests/integration/lib/qdrant_fake_main.mjs <"$work/fake.in" >"$work/fake.log" 2>&1 &
pids+=($!)
fake=http://127.0.0.1:$(port_of "$work/fake.log" "listening on")
fake_requests() { curl -sf "$fake/__fake/violations" | jq .requests; }

export TURNPIKE_ADMIN_TOKEN=bench-token
start_gateway() {  # NAME MAPPING_TTL: sets gw_pid and gw_port (not in a subshell: pids)
  cat >"$work/$1.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: 2
  access_log: ""
governance:
  reconcile_interval: 0s
store:
  path: $work/turnpike.db
search:
  backend: qdrant
  cache: {enabled: false}
  qdrant:
    url: $fake
    mapping_ttl: $2
models:
  - name: unused
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:9/v1
YAML
  "$TURNPIKE" serve --config "$work/$1.yaml" >"$work/$1.log" 2>&1 &
  gw_pid=$!
  pids+=("$gw_pid")
  gw_port=$(port_of "$work/$1.log" "listening on")
}
start_gateway cached 5s
gw_cached=$gw_pid port_cached=$gw_port
export TURNPIKE_URL=http://127.0.0.1:$port_cached
key=$(bench_key)
start_gateway uncached 0s  # reads the key from the store
gw_uncached=$gw_pid port_uncached=$gw_port
auth="Authorization: ApiKey $key"

es=http://127.0.0.1:$port_cached/es
curl -sf -X PUT "$es/bench" -H "$auth" -H 'Content-Type: application/json' \
  -d '{"mappings":{"properties":{"genre":{"type":"keyword"},"pages":{"type":"long"}}}}' >/dev/null
node -e 'for (let i = 0; i < 1000; i++) console.log(JSON.stringify({index: {_id: `d${i}`}}) +
  "\n" + JSON.stringify({genre: `g${i % 20}`, pages: (i * 7919) % 1000}))' >"$work/bulk.ndjson"
curl -sf -X POST "$es/bench/_bulk" -H "$auth" -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$work/bulk.ndjson" | grep -q '"errors":false'
# A filter with an exact total: the page, count and cover legs (50 matches, 10 hits).
echo '{"query":{"bool":{"filter":[{"term":{"genre":"g3"}}]}},"track_total_hits":true}' \
  >"$work/query.json"

run() {  # NAME PID PORT
  local url="http://127.0.0.1:$3/es/bench/_search"
  "$TURNPIKE" bench -q --url "$url" --body "$work/query.json" -c 1 -d 1 \
    -H "$auth" -H 'Content-Type: application/json' >/dev/null 2>&1
  local cpu0 req0 cpu1 req1 hz n
  cpu0=$(awk '{print $14 + $15}' "/proc/$2/stat")
  req0=$(fake_requests)
  "$TURNPIKE" bench -q --url "$url" --body "$work/query.json" -c 1 -d "$secs" \
    -H "$auth" -H 'Content-Type: application/json' --json "$work/$1.json" >/dev/null 2>&1
  cpu1=$(awk '{print $14 + $15}' "/proc/$2/stat")
  req1=$(fake_requests)
  hz=$(getconf CLK_TCK)
  n=$(jq '.requests_ok' "$work/$1.json")
  jq -c --arg name "$1" \
    --argjson cpu_us "$(echo "($cpu1 - $cpu0) * 1000000 / $hz / $n" | bc)" \
    --argjson fake_per "$(echo "scale=2; ($req1 - $req0) / $n" | bc)" \
    '{name: $name, ok: .requests_ok, failed: .requests_failed, rps: .requests_per_second,
      p50_ms: .latency_ms.p50, qdrant_requests_per_search: $fake_per,
      gateway_cpu_us_per_search: $cpu_us}' "$work/$1.json"
}
run mapping_cache_on "$gw_cached" "$port_cached"
run mapping_cache_off "$gw_uncached" "$port_uncached"
run mapping_cache_on_again "$gw_cached" "$port_cached"
run mapping_cache_off_again "$gw_uncached" "$port_uncached"
