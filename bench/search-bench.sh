#!/usr/bin/env bash
# The search door's bars (docs/BENCHMARKS.md): 10,000 generated documents (text, keyword,
# numbers, date, 384-d vector) bulk-loaded into the embedded backend, then a cold sorted filter
# with an exact total and 20 hits (_source without the vector) at 1 and 8 clients, and a
# filtered exact kNN (k=10) at 1 client, each with the gateway's CPU per query. The response
# cache is on (search.cache): the cold runs say request_cache=false (computed every time);
# beside them the same sorted filter served as a warm cache hit at 1 client.
# Usage: bench/search-bench.sh [BUILD_DIR=build] [SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
TURNPIKE=$PWD/$build/src/app/turnpike
source bench/lib.sh
bench_exclusive
work=$(mktemp -d)
trap 'kill $gw 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

cat >"$work/turnpike.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: 2
  access_log: ""
governance:
  reconcile_interval: 0s
store:
  path: $work/turnpike.db
search:
  path: $work/search.db
  cache: {enabled: true, max_bytes: 64MiB, ttl: 60s}
models:
  - name: unused
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:9/v1
YAML
export TURNPIKE_ADMIN_TOKEN=bench-token
"$TURNPIKE" serve --config "$work/turnpike.yaml" >"$work/gw.log" 2>&1 &
gw=$!
port=$(port_of "$work/gw.log" "listening on")
export TURNPIKE_URL=http://127.0.0.1:$port
key=$(bench_key)
es=$TURNPIKE_URL/es
auth="Authorization: ApiKey $key"

node bench/search_docs.mjs "$work/docs" 10000 1000
curl -sf -X PUT "$es/bench" -H "$auth" -H 'Content-Type: application/json' \
  --data-binary @"$work/docs/mapping.json" >/dev/null
cpu_ticks() { awk '{print $14 + $15}' "/proc/$gw/stat"; }
bulk_cpu0=$(cpu_ticks)
start=$(date +%s.%N)
for f in "$work"/docs/bulk-*.ndjson; do
  curl -sf -X POST "$es/bench/_bulk" -H "$auth" -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$f" | grep -q '"errors":false'
done
end=$(date +%s.%N)
bulk_cpu_ms=$((($(cpu_ticks) - bulk_cpu0) * 1000 / $(getconf CLK_TCK)))
echo "bulk: 10000 docs in $(echo "$end - $start" | bc) s: $(echo "10000 / ($end - $start)" | bc) docs/s (10 requests of 1000, one client, curl), gateway CPU ${bulk_cpu_ms} ms"

run() {  # NAME BODY CLIENTS [QUERY]: a 1 s warm-up, then the measured run with the gateway's CPU
  local url="$es/bench/_search${4-?request_cache=false}"
  "$TURNPIKE" bench -q --url "$url" --body "$2" -c "$3" -d 1 \
    -H "$auth" -H 'Content-Type: application/json' >/dev/null
  local before after hz n
  before=$(cpu_ticks)
  "$TURNPIKE" bench -q --url "$url" --body "$2" -c "$3" -d "$secs" \
    -H "$auth" -H 'Content-Type: application/json' --json "$work/$1.json" >/dev/null
  after=$(cpu_ticks)
  hz=$(getconf CLK_TCK)
  n=$(jq '.requests_ok' "$work/$1.json")
  jq -c --arg name "$1" --argjson c "$3" \
    --argjson cpu_us "$(echo "($after - $before) * 1000000 / $hz / $n" | bc)" \
    '{name: $name, clients: $c, ok: .requests_ok, failed: .requests_failed,
      rps: .requests_per_second, p50_ms: .latency_ms.p50, p99_ms: .latency_ms.p99,
      gateway_cpu_us_per_query: $cpu_us}' "$work/$1.json"
}
curl -sf -X POST "$es/bench/_search" -H "$auth" -H 'Content-Type: application/json' \
  --data-binary @"$work/docs/sorted.json" | jq -c '{total: .hits.total, hits: (.hits.hits | length)}'
run sorted_filter_exact_total "$work/docs/sorted.json" 1
run sorted_filter_exact_total "$work/docs/sorted.json" 8
run filtered_knn_k10 "$work/docs/knn.json" 1
run sorted_filter_cache_hit "$work/docs/sorted.json" 1 ""
run sorted_filter_cold_beside_hit "$work/docs/sorted.json" 1
