#!/usr/bin/env bash
# HTTP/2 to the provider (issue 26): the same gateway load with the deployment's `http2` off and
# on, and `turnpike bench --http2` (streams over the gateway's inbound h2) against the gateway.
#
#   bench/upstream-h2-cell.sh [--runs 2] [--duration 5] [--warmup 1] [--connections 200]
#                             [--workers 2] [--streams-per-conn 50] [--mock-flags "--tokens 20"]
#                             [--stream]
#
# One mock provider (1 worker; it serves h2 by prior knowledge beside HTTP/1.1) and two gateways
# (governance off, $workers workers, `server.http2: true` so that bench --http2 can reach them):
# "h1" calls the mock over HTTP/1.1, "h2" with `http2: true`. Per run and gateway, targets
# interleaved: `turnpike bench` over HTTP/1.1 with $connections connections, then
# `turnpike bench --http2 -c C --streams-per-conn S` with C*S = $connections. Around each: the
# gateway's and the mock's CPU from /proc per request, the gateway's
# turnpike_upstream_connects_total during the run, and the mock's HTTP/2 connections
# (/mock/stats). --stream: every request streams. One Markdown row per run and load. KEEP_DIR=1 keeps the logs.
# Needs: the turnpike binary ($TURNPIKE), jq, curl.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
runs=2 duration=5 warmup=1 connections=200 workers=2 spc=50
mock_flags="--tokens 20"
stream=()
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --streams-per-conn) spc=$2; shift 2 ;;
    --mock-flags) mock_flags=$2; shift 2 ;;
    --stream) stream=(--stream-every 1); shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$SCRIPT_DIR/lib.sh"
bench_workdir
[[ -n ${KEEP_DIR:-} ]] && trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; echo "kept $dir" >&2' EXIT
bench_exclusive
hz=$(getconf CLK_TCK)

# shellcheck disable=SC2086
"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 $mock_flags >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_pid=$!
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")
declare -A port pid

gateway() {  # gateway NAME HTTP2
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $workers, access_log: "", http2: true, http2_max_concurrent_streams: 1000}
governance: {enabled: false}
models:
  - name: bench-model
    deployments: [{provider: openai, base_url: "http://127.0.0.1:$mock_port/v1", http2: $2}]
YAML
  "$TURNPIKE" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  pids+=($!)
  pid[$1]=$!
  port[$1]=$(port_of "$dir/$1.log" "listening on")
}
gateway h1 false
gateway h2 true

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
connects() { curl -s "http://127.0.0.1:$1/metrics" | awk '$1 == "turnpike_upstream_connects_total" {print $2}'; }
mock_h2_connections() { curl -s "http://127.0.0.1:$mock_port/mock/stats" | jq .http2.connections; }

echo "| run | upstream | client | req/s | gateway CPU ms/1k req | mock CPU ms/1k req | upstream connects | mock h2 conns (total) | failed |"
echo "|---|---|---|---|---|---|---|---|---|"
for run in $(seq 1 "$runs"); do
  for client in http1 http2; do
    for name in h1 h2; do
      args=(-c "$connections")
      if [[ $client == http2 ]]; then args=(--http2 -c $((connections / spc)) --streams-per-conn "$spc"); fi
      g0=$(ticks "${pid[$name]}") m0=$(ticks "$mock_pid") c0=$(connects "${port[$name]}")
      "$TURNPIKE" bench --url "http://127.0.0.1:${port[$name]}/v1/chat/completions" "${args[@]}" \
        "${stream[@]}" -d "$duration" --warmup "$warmup" -q --json "$dir/$name-$client-$run.json" 2>/dev/null
      g1=$(ticks "${pid[$name]}") m1=$(ticks "$mock_pid") c1=$(connects "${port[$name]}")
      json="$dir/$name-$client-$run.json"
      ok=$(jq '.requests_ok' "$json") rps=$(jq '.requests_per_second' "$json") failed=$(jq '.requests_failed' "$json")
      # CPU over warm-up + run; requests over the same span estimated at the measured rate.
      total=$(awk -v r="$rps" -v d="$duration" -v w="$warmup" 'BEGIN {print r * (d + w)}')
      gcpu=$(awk -v a="$g0" -v b="$g1" -v n="$total" -v hz="$hz" 'BEGIN {printf "%.1f", (b - a) / hz * 1e6 / n}')
      mcpu=$(awk -v a="$m0" -v b="$m1" -v n="$total" -v hz="$hz" 'BEGIN {printf "%.1f", (b - a) / hz * 1e6 / n}')
      printf '| %s | %s | %s | %.0f | %s | %s | %s | %s | %s |\n' "$run" \
        "$([[ $name == h2 ]] && echo HTTP/2 || echo HTTP/1.1)" "$client" "$rps" "$gcpu" "$mcpu" \
        "$((c1 - c0))" "$(mock_h2_connections)" "$failed"
      : "$ok"
    done
  done
done
