#!/usr/bin/env bash
# The fleet cells of docs/BENCHMARKS.md ("Fleet: Redis leases"): CPU per request summed over
# every server process (Turnpike replicas + redis-server), interleaved in one run.
#
#   bench/fleet-cell.sh [--runs 10] [--duration 0.5] [--warmup 0.25] [--connections 50]
#                       [--postgres]
#
# Cell A: one replica of 2 workers, governed, budgets from in-process counters ("local") vs the
#         same with `redis.url` (budget leases; "leases").
# Cell B: with leases, one replica of 2 workers ("1x2") vs two replicas of 1 worker sharing one
#         SQLite file and one Redis ("2x1"), the load split evenly (two load generators of
#         connections/2 each, run at the same time).
# --postgres: every instance's store is one throwaway PostgreSQL 15 cluster instead of the
# shared SQLite file (the whole fleet engine), and every measurement adds the cluster's CPU
# (the postmaster, its children, and the children it reaped meanwhile) to the sum.
# Starts (and on exit stops, by PID) one mock provider, one redis-server (loopback, random
# port, no persistence) and the Turnpike instances; provisions one key through `turnpike
# admin`. Needs: the turnpike binary ($TURNPIKE), redis-server, jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
runs=10 duration=0.5 warmup=0.25 connections=50 postgres=0
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --postgres) postgres=1; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive
bench_workdir

bench_mock
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$dir/redis.log" 2>&1 &
redis_pid=$!
pids+=("$redis_pid")
sleep 0.3

gateway() {  # gateway NAME WORKERS STORE REDIS(yes|no)
  local redis_section=""
  [[ $4 == yes ]] && redis_section="redis: {url: \"redis://127.0.0.1:$redis_port/0\"}"
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $2, access_log: ""}
governance: {enabled: true}
store: $3
$redis_section
$(bench_models_yaml)
YAML
  TURNPIKE_ADMIN_TOKEN=bench "$TURNPIKE" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  echo $! >"$dir/$1.pid"
  port_of "$dir/$1.log" "turnpike listening on"
}
# Every instance shares one SQLite file, so one key serves them all; the key exists before the
# replicas that did not create it start.
# With --postgres they share the cluster's database instead (each its own spool path).
store() {  # store NAME
  if ((postgres)); then
    echo "{engine: postgres, url: 'postgresql://turnpike@127.0.0.1:$pg_port/turnpike', path: $dir/$1.db}"
  else
    echo "{path: $dir/shared.db}"
  fi
}
((postgres)) && pg_cluster_start "$dir/pg"
declare -A port
port[local]=$(gateway local 2 "$(store local)" no); pids+=("$(cat "$dir/local.pid")")
export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:${port[local]}
key=$(bench_key)
port[leases]=$(gateway leases 2 "$(store leases)" yes); pids+=("$(cat "$dir/leases.pid")")
port[r1]=$(gateway r1 1 "$(store r1)" yes); pids+=("$(cat "$dir/r1.pid")")
port[r2]=$(gateway r2 1 "$(store r2)" yes); pids+=("$(cat "$dir/r2.pid")")

cpu_ticks() {  # cpu_ticks PID...: user + system clock ticks of every thread of the processes
  local sum=0 p t
  for p in "$@"; do
    for t in /proc/"$p"/task/*; do
      [[ -r $t/stat ]] && sum=$((sum + $(awk '{print $14 + $15}' "$t/stat")))
    done
  done
  ((postgres)) && sum=$((sum + $(pg_cluster_reaped_ticks)))
  echo "$sum"
}
hz=$(getconf CLK_TCK)
load() {  # load PORT CONNECTIONS JSON
  "$TURNPIKE" bench --url "http://127.0.0.1:$1/v1/chat/completions" -c "$2" -d "$duration" \
    --warmup "$warmup" -q -H "Authorization: Bearer $key" --json "$3" >/dev/null 2>&1
}
requests() { jq '.requests_per_second * (.duration_s + .warmup_s)' "$1"; }
measure() {  # measure TARGET: prints "req/s µs-per-request"
  local procs=("$redis_pid") total
  ((postgres)) && read -ra procs <<<"$redis_pid $(pg_cluster_pids)"
  case $1 in
    local) procs+=("$(cat "$dir/local.pid")") ;;
    leases|1x2) procs+=("$(cat "$dir/leases.pid")") ;;
    2x1) procs+=("$(cat "$dir/r1.pid")" "$(cat "$dir/r2.pid")") ;;
  esac
  local before; before=$(cpu_ticks "${procs[@]}")
  case $1 in
    local) load "${port[local]}" "$connections" "$dir/a.json"; total=$(requests "$dir/a.json") ;;
    leases|1x2) load "${port[leases]}" "$connections" "$dir/a.json"; total=$(requests "$dir/a.json") ;;
    2x1)
      load "${port[r1]}" $((connections / 2)) "$dir/a.json" &
      local other=$!
      load "${port[r2]}" $((connections / 2)) "$dir/b.json"
      wait "$other"
      total=$(jq -n "$(requests "$dir/a.json") + $(requests "$dir/b.json")") ;;
  esac
  local ticks=$(($(cpu_ticks "${procs[@]}") - before))
  jq -n "[$total / ($duration + $warmup), $ticks / $hz * 1e6 / $total] | map(. * 10 | round / 10) | join(\" \")" -r
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
cell() {  # cell A B: alternating runs, a table of req/s and CPU per request, the median ratio
  echo "| run | $1 req/s | $2 req/s | $1 CPU/req (µs) | $2 CPU/req (µs) | $2 / $1 CPU |"
  echo "|---|---|---|---|---|---|"
  for ((r = 1; r <= runs; r++)); do
    local first=$1 second=$2 a b
    ((r % 2 == 0)) && { first=$2; second=$1; }
    declare -A res=()
    res[$first]=$(measure "$first")
    res[$second]=$(measure "$second")
    read -r ar ac <<<"${res[$1]}"
    read -r br bc <<<"${res[$2]}"
    printf '| %d | %s | %s | %s | %s | %.3f |\n' "$r" "$ar" "$br" "$ac" "$bc" "$(jq -n "$bc / $ac")" |
      tee -a "$dir/ratios-$1"
  done
  echo
  echo "median $2 / $1 CPU per request: $(awk -F'|' '{print $7}' "$dir/ratios-$1" | median)"
  echo
}
cell local leases
cell 1x2 2x1
for p in leases r1 r2; do
  echo "redis commands ($p): $(curl -s "http://127.0.0.1:${port[$p]}/metrics" |
    sed -n 's/^turnpike_redis_commands_total{op="\([a-z_]*\)"} \([0-9]*\)$/\1=\2/p' | tr '\n' ' ')"
done
