#!/usr/bin/env bash
# The 1,000-connection cells of issue 26 ("a pool that follows the load"): non-streaming and
# streaming load at many client connections against nginx and Turnpike (and, with BASELINE,
# a second Turnpike binary as "before"), side by side in one run, targets interleaved.
#
#   bench/pool-cell.sh [--runs 3] [--duration 5] [--warmup 2] [--connections 1000]
#                      [--workers 2] [--cells "plain stream"] [--mock-flags "--tokens 20"]
#                      [--targets "nginx turnpike before"]
#
# One mock provider (1 worker) behind every target; nginx from bench/nginx.conf.in with
# `worker_processes $workers`; each Turnpike with $workers workers, governance on (a key, plan
# budget and limits) and the call log written to SQLite. Per target and run, two client
# processes in a row:
#   1. "cold": `turnpike bench -d WARMUP` with $connections new client connections; its TTFT
#      p99 includes each connection's first request (accept, and the target's upstream
#      connects if its pool is short);
#   2. the measured run: `turnpike bench --warmup WARMUP -d DURATION`, new connections again
#      but their first requests fall in its own (unrecorded) warm-up, so its latencies are of
#      warm client connections on a warm pool.
# Around process 2: CPU of the target (nginx: master + workers) and of the mock from /proc,
# per request over warm-up + run (the warm-up's requests estimated at the measured rate, as
# bench/governance-cell.sh does); inside it (from 1 s after its warm-up to 1 s before its
# end) Turnpike's turnpike_upstream_connects_total per request; around it the
# kernel's TCP counters (nstat: listen drops, retransmitted SYNs, timeouts). One Markdown row
# per run. KEEP_DIR=1 keeps the logs. --targets picks among nginx, turnpike and before (with
# BASELINE): bench/nginx.conf.in allows 4,096 connections per nginx worker, too few for a run at
# 5,000 connections with 2 workers.
# Needs: the turnpike binary ($TURNPIKE), nginx, jq, nstat (iproute2).
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
BASELINE=${BASELINE:-}
NGINX=${NGINX:-nginx}
runs=3 duration=5 warmup=2 connections=1000 workers=2 cells="plain stream" only_targets=""
mock_flags="--tokens 20"
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --cells) cells=$2; shift 2 ;;
    --mock-flags) mock_flags=$2; shift 2 ;;
    --targets) only_targets=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
# Open files: a gateway holds two sockets per connection (client and upstream), the mock and
# the load generator one. Raised as far as allowed (the hard limit needs CAP_SYS_RESOURCE).
want_fds=$((2 * connections + 4096))
if (($(ulimit -Hn) < want_fds)); then
  ulimit -Hn "$want_fds" 2>/dev/null ||
    echo "note: cannot raise the hard open-files limit above $(ulimit -Hn) (no CAP_SYS_RESOURCE?)" >&2
fi
if (($(ulimit -Sn) < want_fds)); then ulimit -Sn "$(ulimit -Hn)"; fi
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

nginx_port=$(bench_nginx_conf "$workers" "$mock_port")
"$NGINX" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" &
pids+=($!)
declare -A port=([nginx]=$nginx_port) pid=([nginx]=$!) key=([nginx]=none)

gateway() {  # gateway NAME BINARY: starts it, provisions a key; sets port[NAME] pid[NAME] key[NAME]
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $workers, access_log: ""}
governance: {enabled: true}
store: {path: $dir/$1.db}
call_log: {log_store: on}
$(bench_models_yaml)
YAML
  TURNPIKE_ADMIN_TOKEN=bench "$2" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  pids+=($!)
  pid[$1]=$!
  port[$1]=$(port_of "$dir/$1.log" "turnpike listening on")
  key[$1]=$(TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:${port[$1]} bench_key)
}
targets=(nginx turnpike)
gateway turnpike "$TURNPIKE"
if [[ -n $BASELINE ]]; then
  gateway before "$BASELINE"
  targets+=(before)
fi
# shellcheck disable=SC2206
[[ -n $only_targets ]] && targets=($only_targets)

connects() {  # connects TARGET: turnpike_upstream_connects_total, or "-" for nginx
  [[ $1 == nginx ]] && { echo -; return; }
  curl -s "http://127.0.0.1:${port[$1]}/metrics" | awk '/^turnpike_upstream_connects_total /{print $2}'
}
tcp_counters() {  # the kernel's counters that a connect or accept storm moves, as "name value"
  nstat -z TcpExtListenOverflows TcpExtListenDrops TcpExtTCPTimeouts TcpRetransSegs \
    TcpExtTCPSynRetrans TcpExtTCPReqQFullDrop TcpExtTCPReqQFullDoCookies | awk 'NR > 1 {print $1, $2}'
}

echo "# $TURNPIKE${BASELINE:+ (before: $BASELINE)}, $connections connections, $workers workers," \
  "$duration s runs after $warmup s warm-up, mock flags: $mock_flags"
echo
echo "| cell | run | target | req/s | failed | latency p50 / p99 ms | TTFT p50 / p99 / max ms | cold clients: TTFT p50 / p99 / max ms | CPU µs/req: target / mock | upstream connects/req | TCP: listen drops, SYN retrans, timeouts |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
nstat -n >/dev/null  # resets nstat's history so that later calls print deltas
for ((r = 1; r <= runs; r++)); do
  for cell in $cells; do
    extra=()
    [[ $cell == stream ]] && extra=(--stream-every 1)
    n=${#targets[@]}
    for ((i = 0; i < n; i++)); do
      t=${targets[$(((i + r) % n))]}
      url="http://127.0.0.1:${port[$t]}/v1/chat/completions"
      hdr=(-H "Authorization: Bearer ${key[$t]}")
      "$TURNPIKE" bench --url "$url" -c "$connections" -d "$warmup" -q "${hdr[@]}" "${extra[@]}" \
        --json "$dir/warm.json" >/dev/null 2>&1 || true
      sleep 0.2
      t0=$(cpu_ticks "${pid[$t]}") m0=$(cpu_ticks "$mock_pid")
      nstat -n >/dev/null
      "$TURNPIKE" bench --url "$url" -c "$connections" --warmup "$warmup" -d "$duration" -q \
        "${hdr[@]}" "${extra[@]}" --json "$dir/run.json" >/dev/null 2>&1 &
      load=$!
      # Connects counted inside the measured run, 1 s from either end: a client's exit cancels
      # the requests it had in flight (up to one per connection), and the gateway replaces
      # those upstream connections at the next run's start.
      sleep $(jq -n "$warmup + 1")
      c0=$(connects "$t")
      sleep $(jq -n "$duration - 2")
      c1=$(connects "$t")
      wait "$load" || true
      t1=$(cpu_ticks "${pid[$t]}") m1=$(cpu_ticks "$mock_pid")
      tcp=$(tcp_counters)
      get() { awk -v k="$1" '$1 == k {print $2}' <<<"$tcp"; }
      drops=$(($(get TcpExtListenDrops) + 0)) synr=$(($(get TcpExtTCPSynRetrans) + 0))
      tmo=$(($(get TcpExtTCPTimeouts) + 0))
      reqs=$(jq '.requests_per_second * (.duration_s + .warmup_s) | round' "$dir/run.json")
      per_req() { jq -n "if $reqs > 0 then $1 / $hz * 1e6 / $reqs else 0 end | . * 10 | round / 10"; }
      cpr="-"
      [[ $c0 != - ]] && cpr=$(jq -n "($c1 - $c0) / ($(jq .requests_per_second "$dir/run.json") * ($duration - 2)) | . * 10000 | round / 10000")
      cold=$(jq -r '"\(.ttft_ms.p50 | . * 10 | round / 10) / \(.ttft_ms.p99 | round) / \(.ttft_ms.max | round)"' "$dir/warm.json")
      jq -r --arg cell "$cell" --arg r "$r" --arg t "$t" --arg cpu "$(per_req $((t1 - t0))) / $(per_req $((m1 - m0)))" \
        --arg cpr "$cpr" --arg tcp "$drops, $synr, $tmo" --arg cold "$cold" \
        '"| \($cell) | \($r) | \($t) | \(.requests_per_second | round) | \(.requests_failed) | \(.latency_ms.p50 | . * 10 | round / 10) / \(.latency_ms.p99 | round) | \(.ttft_ms.p50 | . * 10 | round / 10) / \(.ttft_ms.p99 | round) / \(.ttft_ms.max | round) | \($cold) | \($cpu) | \($cpr) | \($tcp) |"' \
        "$dir/run.json"
    done
  done
done
