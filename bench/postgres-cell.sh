#!/usr/bin/env bash
# The PostgreSQL cell of docs/BENCHMARKS.md: CPU per request with the store on PostgreSQL
# against the same build with the store on SQLite, same mock, same load, governance on (key,
# plan budget, RPM/TPM limits, the call log written), runs alternating between the two.
#
#   bench/postgres-cell.sh [--runs 10] [--duration 2] [--warmup 0.5] [--connections 50] [--workers 1]
#                          [--baseline OTHER-TURNPIKE-BINARY] [--call-log YAML]
#
# --baseline adds a third instance, another build (e.g. the commit before a change) on
# PostgreSQL too (its own database in the same cluster), in the same alternation: a before and
# after in one run. --call-log sets the call_log section (e.g. '{batch_rows: 4096}') of the
# sqlite and postgres instances, not the baseline's (which keeps the defaults).
# --redis makes the postgres instance the whole fleet engine: `redis.url` to a throwaway
# redis-server too (budget and rate leases), whose CPU is added to that side's sum (and, idle,
# to the baseline's).
#
# CPU per request is summed over every server process of the engine: Turnpike's threads, and
# with PostgreSQL also the cluster's processes (the postmaster and all its children: the
# backends serving the replica's two connections, the WAL writer, the checkpointer...), read
# from /proc/PID/stat (utime + stime, and the postmaster's cutime + cstime: its children that
# exited meanwhile, such as autovacuum workers) just before and after each measured run. The
# SQLite engine runs inside Turnpike, so its cost is Turnpike's.
# Starts (and on exit stops, by PID) one mock provider, a throwaway PostgreSQL 15 cluster
# (initdb in a temporary directory, a free port, the postgres user when run as root; default
# settings: fsync on), and two Turnpike instances (three with --baseline). Needs: the turnpike
# binary ($TURNPIKE), jq, /usr/lib/postgresql/15/bin.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
runs=10 duration=2 warmup=0.5 connections=50 workers=1 baseline= call_log={} redis=0
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --call-log) call_log=$2; shift 2 ;;
    --redis) redis=1; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive
bench_workdir

pg_cluster_start "$dir/pg"
[[ -n $baseline ]] && "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pg_port" -U turnpike -d postgres -c 'CREATE DATABASE turnpike_base'
postmaster=$pg_postmaster

bench_mock

redis_pid=""
redis_section=""
if ((redis)); then
  redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$dir" >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis_section="redis: {url: 'redis://127.0.0.1:$redis_port/0'}"
fi

gateway() {  # gateway NAME STORE-SECTION [BINARY [CALL-LOG-SECTION [MORE-YAML]]]
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $workers, access_log: ""}
governance: {enabled: true}
store: $2
call_log: ${4:-$call_log}
$(bench_models_yaml)
${5:-}
YAML
  TURNPIKE_ADMIN_TOKEN=bench "${3:-$TURNPIKE}" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  echo $! >"$dir/$1.pid"
  port_of "$dir/$1.log" "turnpike listening on"
}
sqlite_port=$(gateway sqlite "{path: $dir/sqlite.db}" "$TURNPIKE"); pids+=("$(cat "$dir/sqlite.pid")")
pg_gw_port=$(gateway postgres \
  "{engine: postgres, url: 'postgresql://turnpike@127.0.0.1:$pg_port/turnpike', path: $dir/pg.db}" \
  "$TURNPIKE" "$call_log" "$redis_section")
pids+=("$(cat "$dir/postgres.pid")")
engines=(sqlite postgres)
declare -A port_of_engine=([sqlite]=$sqlite_port [postgres]=$pg_gw_port)
if [[ -n $baseline ]]; then
  cp "$baseline" "$dir/baseline-turnpike"  # a rebuild meanwhile cannot change it
  port_of_engine[base]=$(gateway base \
    "{engine: postgres, url: 'postgresql://turnpike@127.0.0.1:$pg_port/turnpike_base', path: $dir/base.db}" \
    "$dir/baseline-turnpike" "{}")
  pids+=("$(cat "$dir/base.pid")")
  engines+=(base)
fi

cluster=cluster; ((redis)) && cluster="cluster + redis-server"
ticks_of() {  # ticks_of PID...: user + system clock ticks of these processes' threads
  local sum=0 p t
  for p in "$@"; do
    for t in /proc/"$p"/task/*; do
      [[ -r $t/stat ]] && sum=$((sum + $(awk '{print $14 + $15}' "$t/stat")))
    done
  done
  echo "$sum"
}
cluster_pids() { echo $(pg_cluster_pids) $redis_pid; }
reaped_ticks() { pg_cluster_reaped_ticks; }
hz=$(getconf CLK_TCK)
per_request() {  # as in governance-cell.sh: warm-up requests estimated at the measured rate
  jq "$1 / $hz * 1e6 / (.requests_per_second * (.duration_s + .warmup_s))" "$2"
}

for port in "${port_of_engine[@]}"; do
  export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$port
  key=$(bench_key)  # the same secret cannot be chosen: each instance gets its own key
  echo "$key" >"$dir/key.$port"
done

if [[ -n $baseline ]]; then
  echo "| run | req/s sqlite / postgres / baseline | CPU/request sqlite (µs) | postgres: turnpike + $cluster (µs) | baseline: turnpike + $cluster (µs) | postgres / sqlite | baseline / sqlite |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| run | sqlite (req/s) | postgres (req/s) | CPU per request sqlite (µs) | postgres: turnpike + $cluster (µs) | postgres / sqlite |"
  echo "|---|---|---|---|---|---|"
fi
for ((r = 1; r <= runs; r++)); do
  declare -A rps=() cpu=() server=()
  # Each engine first, middle and last in turn.
  n=${#engines[@]} order=()
  for ((i = 0; i < n; i++)); do order+=("${engines[$(((i + r - 1) % n))]}"); done
  for which in "${order[@]}"; do
    port=${port_of_engine[$which]}
    procs=("$(cat "$dir/$which.pid")")
    [[ $which != sqlite ]] && read -ra more <<<"$(cluster_pids)" && procs+=("${more[@]}")
    before=$(ticks_of "${procs[@]}")
    [[ $which != sqlite ]] && before=$((before + $(reaped_ticks)))
    before_gw=$(ticks_of "$(cat "$dir/$which.pid")")
    "$TURNPIKE" bench --url "http://127.0.0.1:$port/v1/chat/completions" -c "$connections" \
      -d "$duration" --warmup "$warmup" -q -H "Authorization: Bearer $(cat "$dir/key.$port")" \
      --json "$dir/$which.json" >/dev/null 2>&1
    failures=$(jq '.requests_failed' "$dir/$which.json")
    [[ $failures == 0 ]] || echo "warning: $which had $failures failures" >&2
    rps[$which]=$(jq '.requests_per_second' "$dir/$which.json")
    after=$(ticks_of "${procs[@]}")
    [[ $which != sqlite ]] && after=$((after + $(reaped_ticks)))
    cpu[$which]=$(per_request $((after - before)) "$dir/$which.json")
    server[$which]=$(per_request $(($(ticks_of "$(cat "$dir/$which.pid")") - before_gw)) "$dir/$which.json")
  done
  if [[ -n $baseline ]]; then
    printf '| %d | %.0f / %.0f / %.0f | %.1f | %.1f + %.1f | %.1f + %.1f | %.2f | %.2f |\n' "$r" \
      "${rps[sqlite]}" "${rps[postgres]}" "${rps[base]}" "${cpu[sqlite]}" \
      "${server[postgres]}" "$(jq -n "${cpu[postgres]} - ${server[postgres]}")" \
      "${server[base]}" "$(jq -n "${cpu[base]} - ${server[base]}")" \
      "$(jq -n "${cpu[postgres]} / ${cpu[sqlite]}")" "$(jq -n "${cpu[base]} / ${cpu[sqlite]}")"
  else
    printf '| %d | %.0f | %.0f | %.1f | %.1f + %.1f | %.2f |\n' "$r" "${rps[sqlite]}" "${rps[postgres]}" \
      "${cpu[sqlite]}" "${server[postgres]}" "$(jq -n "${cpu[postgres]} - ${server[postgres]}")" \
      "$(jq -n "${cpu[postgres]} / ${cpu[sqlite]}")"
  fi
done
echo
for which in "${engines[@]}"; do
  port=${port_of_engine[$which]}
  echo "$which (port $port):"
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^turnpike_(call_log_rows_total|store_statements_total\{op="call_log_insert"\})' || true
done
