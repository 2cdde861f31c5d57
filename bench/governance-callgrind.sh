#!/usr/bin/env bash
# Instructions per request that governance adds, counted with callgrind (repeatable whatever
# else runs on the machine), split by thread: the worker (on the request path) and the store
# thread (the call log's SQLite writes, off the request path).
#
#   bench/governance-callgrind.sh [--requests 10000] [--conns 8] [--log-store on|off]
#
# Runs the same non-streaming load twice through one Turnpike (1 worker) under
# `valgrind --tool=callgrind --separate-threads=yes`: governance off (no key), then on (a key
# with a plan budget, RPM and TPM limits, call log on). Instrumentation is switched on only
# for the measured requests (after 2,000 warm-up requests). Prints instructions per request
# per thread. Note: valgrind hides SHA-NI from OpenSSL, so the key hash counts ~6k
# instructions here against ~85 ns natively (see docs/BENCHMARKS.md).
#
# Needs: the turnpike binary ($TURNPIKE, default build/src/app/turnpike), valgrind, jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
requests=10000 conns=8 log_store=on
while (($#)); do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --log-store) log_store=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; }
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

# total_in FILE: the instructions recorded in one thread's callgrind file.
total_in() { awk '/^totals:/{print $2}' "$1"; }

measure() {  # measure off|on
  local which=$1 gov=false
  [[ $which == on ]] && gov=true
  cat >"$dir/$which.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""}
governance: {enabled: $gov}
store: {path: $dir/$which.db}
call_log: {log_store: $log_store}
prices:
  bench-model: {input: 0.15, output: 0.60, max_output_tokens: 4096}
models:
  - name: bench-model
    deployments: [{provider: openai, base_url: "http://127.0.0.1:$mock_port/v1"}]
YAML
  TURNPIKE_ADMIN_TOKEN=bench valgrind --tool=callgrind --separate-threads=yes \
    --instr-atstart=no --callgrind-out-file="$dir/cg.$which" \
    "$TURNPIKE" serve --config "$dir/$which.yaml" >"$dir/$which.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  local port; port=$(port_of "$dir/$which.log" "turnpike listening on" 60)
  local headers=()
  if [[ $which == on ]]; then
    export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$port
    local key; key=$(bench_key)
    headers=(-H "Authorization: Bearer $key")
  fi
  local url=http://127.0.0.1:$port/v1/chat/completions
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests 2000 -d 600 -q "${headers[@]}" >/dev/null 2>"$dir/warmup.err"
  callgrind_control -i on "$pid" >/dev/null 2>&1
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests "$requests" -d 600 -q "${headers[@]}" \
    --json "$dir/$which.json" >/dev/null 2>"$dir/$which.err"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  local ok; ok=$(jq .requests_ok "$dir/$which.json")
  [[ $ok == "$requests" ]] || echo "warning: $which: $ok of $requests requests ok" >&2
  local f worker=0 store=0
  for f in "$dir"/cg."$which".1-*; do
    if grep -q "StoreThread::Loop" "$f"; then store=$(total_in "$f")
    elif grep -q "scheduler::run" "$f"; then worker=$(total_in "$f"); fi
  done
  printf '| %s | %.0f | %.0f |\n' "$which" "$(jq -n "$worker / $requests")" "$(jq -n "$store / $requests")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "| governance | worker instructions per request | store thread instructions per request |"
echo "|---|---|---|"
measure off
measure on
