#!/usr/bin/env bash
# The governance cell of docs/BENCHMARKS.md: the same build, same mock, same load, with
# governance off (no key, no budget, no limits, no call log) and on (key auth, plan budget,
# RPM and TPM limits, the call log written to SQLite), interleaved in one run.
#
#   bench/governance-cell.sh [--runs 20] [--duration 0.5] [--warmup 0.25] [--connections 50] [--workers 1]
#                            [--log-store on|off]   (off: governance on, call-log rows off)
#                            [--stream-every K]     (every K-th request streams; 1: all)
#                            [--off-without-key]    (the off instance gets no Authorization)
#
# Both instances get the same requests, the key's `Authorization: Bearer` header included
# (the off instance ignores it), as the same clients would send them. --off-without-key
# sends it to the governed instance only, as the cell did before 2026-11-30 20:00 UTC; that
# also counts parsing the header (about 1,100 instructions in Beast) against governance.
# The default runs are short (0.5 s after 0.25 s of warm-up) so that the two instances
# alternate faster than this VM's speed drifts (it moves by a third within seconds); many of
# them are pooled. After the table the script prints that pool (bench/cell-summary.sh): the
# median ratio with its quartiles, the geometric mean, and total on / total off. Save several
# outputs and pass them to bench/cell-summary.sh together to pool series.
# KEEP_DIR=1 keeps the temporary directory (databases, logs) and prints its path.
# Starts (and on exit stops, by PID) one mock provider and two Turnpike instances, provisions
# a plan/tenant/key with `turnpike admin`, then alternates measured runs between the two
# (each after a warm-up) and prints requests/s, the on/off ratio per run, and the call-log
# rows written. Needs: the turnpike binary ($TURNPIKE), jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
runs=20 duration=0.5 warmup=0.25 connections=50 workers=1 log_store=on stream_every=0 off_key=yes
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --log-store) log_store=$2; shift 2 ;;
    --stream-every) stream_every=$2; shift 2 ;;
    --off-without-key) off_key=no; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; if [[ -n ${KEEP_DIR:-} ]]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi; }
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive

"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

gateway() {  # gateway NAME GOVERNANCE_ENABLED
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $workers, access_log: ""}
governance: {enabled: $2}
store: {path: $dir/$1.db}
call_log: {log_store: $log_store}
$(bench_models_yaml)
YAML
  TURNPIKE_ADMIN_TOKEN=bench "$TURNPIKE" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  echo $! >"$dir/$1.pid"
  port_of "$dir/$1.log" "turnpike listening on"
}
# gateway runs in a command substitution's subshell: its PID comes back through a file.
off_port=$(gateway off false); pids+=("$(cat "$dir/off.pid")")
on_port=$(gateway on true); pids+=("$(cat "$dir/on.pid")")

cpu_ticks() {  # cpu_ticks PID [THREAD-NAME-PREFIX]: user + system clock ticks of its threads
  local sum=0 t
  for t in /proc/"$1"/task/*; do
    [[ -z ${2:-} || $(cat "$t/comm") == "$2"* ]] || continue
    sum=$((sum + $(awk '{print $14 + $15}' "$t/stat")))
  done
  echo "$sum"
}
hz=$(getconf CLK_TCK)
per_request() {  # per_request TICKS RESULT.json: µs of CPU per request over warm-up + run (the
  # warm-up's requests are estimated at the measured rate; the load generator does not count them)
  jq "$1 / $hz * 1e6 / (.requests_per_second * (.duration_s + .warmup_s))" "$2"
}

export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$on_port
key=$(bench_key)

echo "# $TURNPIKE" >"$dir/runs.md"  # names the pool (cell-summary.sh)
echo "| run | governance off (req/s) | governance on (req/s) | on / off | gateway CPU per request off / on (µs) | of which workers off / on | store thread (on) |"
echo "|---|---|---|---|---|---|---|"
for ((r = 1; r <= runs; r++)); do
  declare -A rps=() cpu=() workers=() store=()
  order=(off on); ((r % 2 == 0)) && order=(on off)
  for which in "${order[@]}"; do
    port=$off_port; load_args=(-H "Authorization: Bearer $key")
    [[ $which == off && $off_key == no ]] && load_args=()
    [[ $which == on ]] && port=$on_port
    ((stream_every > 0)) && load_args+=(--stream-every "$stream_every")
    pid=$(cat "$dir/$which.pid")
    before=$(cpu_ticks "$pid") before_workers=$(cpu_ticks "$pid" tp-worker)
    before_store=$(cpu_ticks "$pid" tp-store)
    "$TURNPIKE" bench --url "http://127.0.0.1:$port/v1/chat/completions" -c "$connections" \
      -d "$duration" --warmup "$warmup" -q "${load_args[@]}" --json "$dir/$which.json" >/dev/null 2>&1
    failures=$(jq '.requests_failed' "$dir/$which.json")
    [[ $failures == 0 ]] || echo "warning: $which had $failures failures" >&2
    rps[$which]=$(jq '.requests_per_second' "$dir/$which.json")
    cpu[$which]=$(per_request $(($(cpu_ticks "$pid") - before)) "$dir/$which.json")
    workers[$which]=$(per_request $(($(cpu_ticks "$pid" tp-worker) - before_workers)) "$dir/$which.json")
    store[$which]=$(per_request $(($(cpu_ticks "$pid" tp-store) - before_store)) "$dir/$which.json")
  done
  ratio=$(jq -n "${rps[on]} / ${rps[off]}")
  printf '| %d | %.0f | %.0f | %.2f | %.1f / %.1f | %.1f / %.1f | %.1f |\n' "$r" "${rps[off]}" \
    "${rps[on]}" "$ratio" "${cpu[off]}" "${cpu[on]}" "${workers[off]}" "${workers[on]}" "${store[on]}" |
    tee -a "$dir/runs.md"
done
echo
"$(dirname "${BASH_SOURCE[0]}")/cell-summary.sh" "$dir/runs.md"
rows=$(curl -s "http://127.0.0.1:$on_port/metrics" | awk '/^turnpike_call_log_rows_total /{print $2}')
echo
echo "call-log rows written by the governed instance: $rows"
curl -s "http://127.0.0.1:$on_port/metrics" | grep '^turnpike_store_statements_total' || true
