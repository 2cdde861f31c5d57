#!/usr/bin/env bash
# The LLM response cache's hit throughput against nginx proxying the mock (docs/BENCHMARKS.md
# "LLM response cache"): the same load, side by side in one run, alternating the two targets.
#
#   bench/llm-cache-bench.sh [--runs 5] [--duration 5] [--cells "plain:50 stream:32"]
#   bench/llm-cache-bench.sh --l2 [--runs 5]
#
# Starts (and stops, by PID) one mock provider (1 worker; MOCK_FLAGS, default 20 tokens, no
# delays), nginx from bench/nginx.conf.in in front of it, and one Turnpike (governance off,
# `llm_cache: {enabled: true}`, the mock as its deployment). Every request of a cell has the same
# body, so after its warm-up every Turnpike answer is a hit (checked: the mock's request count
# does not move during the measured runs) while nginx forwards each to the mock. Per cell, runs
# alternate nginx / Turnpike (`turnpike bench`, the JSON results kept), and the table reports
# each run, the medians, the ratio of medians, and the CPU per 1000 requests of the proxy
# process (nginx: master and workers; Turnpike: the process) read from /proc.
#
# --l2 measures an L2 hit instead: a redis-server on loopback and two Turnpike replicas over it
# (governed, over one SQLite file, `redis.url` set). Per run, replica A answers 2,000 new requests (`turnpike
# bench --distinct`: each a miss, stored in A's L1 and in Redis); then replica B gets the same
# 2,000 requests from 1 connection: each is an L2 hit (B's L1 has never seen it), and the
# table reports B's latency percentiles as the client sees them (the whole request: parse,
# one MGET round trip, decode, replay). Then B gets them again: L1 hits, for comparison.
#
# Needs: the turnpike binary ($TURNPIKE), nginx, jq, curl; redis-server for --l2.
set -euo pipefail

TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
NGINX=${NGINX:-nginx}
MOCK_FLAGS=${MOCK_FLAGS:-"--tokens 20 --first-token-delay 0ms --inter-token 0ms"}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"

runs=5
duration=5
cells="plain:50 stream:32"
l2=0
while (($#)); do
  case "$1" in
    --l2) l2=1; shift ;;
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --cells) cells=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done

bench_exclusive
bench_workdir
clk_tck=$(getconf CLK_TCK)
read -r -a mock_flags <<<"$MOCK_FLAGS"

"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 "${mock_flags[@]}" >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

if ((l2)); then
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$dir/redis.log" 2>&1 &
  pids+=($!)
  sleep 0.5
  # Governed (the fleet's Redis client, which the L2 uses, exists in fleet mode), both replicas
  # over one SQLite file so that they know the same key.
  for name in a b; do
    cat >"$dir/$name.yaml" <<YAML
server: {listen: "127.0.0.1:0", workers: 1, access_log: ""}
governance: {enabled: true, reconcile_interval: 0s}
store: {path: $dir/shared.db}
llm_cache: {enabled: true}
redis: {url: "redis://127.0.0.1:$redis_port/0"}
models:
  - name: bench-model
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:$mock_port/v1
YAML
    TURNPIKE_ADMIN_TOKEN=bench "$TURNPIKE" serve --config "$dir/$name.yaml" >"$dir/$name.log" 2>&1 &
    pids+=($!)
    port=$(port_of "$dir/$name.log" "turnpike listening on")
    eval "port_$name=$port"
  done
  export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$port_a
  key=$(bench_key)
  sleep 4  # B's snapshot sees the key (hotpath.snapshot_ttl 3s)
  echo "Machine: $(nproc) cores, $(uname -r); redis-server $(redis-server --version | grep -oE 'v=[0-9.]+'); $runs runs of 2,000 requests from 1 connection"
  echo
  echo "| run | L2 hit p50 ms | L2 hit p95 ms | L1 hit p50 ms | L1 hit p95 ms | upstream calls by B |"
  echo "|---|---|---|---|---|---|"
  for ((n = 1; n <= runs; n++)); do
    printf '%s' "{\"model\":\"bench-model\",\"messages\":[{\"role\":\"user\",\"content\":\"run $n\"}],\"max_tokens\":20,\"stream\":false}" >"$dir/body.json"
    common=(-c 1 -d 600 --requests 2000 --distinct 2000 --body "$dir/body.json" --quiet
      -H "Authorization: Bearer $key")
    "$TURNPIKE" bench --url "http://127.0.0.1:$port_a/v1/chat/completions" "${common[@]}" --json /dev/null 2>/dev/null
    sleep 0.5  # the last L2 writes land
    before=$(curl -s "http://127.0.0.1:$mock_port/mock/stats" | jq -r .requests)
    "$TURNPIKE" bench --url "http://127.0.0.1:$port_b/v1/chat/completions" "${common[@]}" --json "$dir/l2-$n.json" 2>/dev/null
    after=$(curl -s "http://127.0.0.1:$mock_port/mock/stats" | jq -r .requests)
    "$TURNPIKE" bench --url "http://127.0.0.1:$port_b/v1/chat/completions" "${common[@]}" --json "$dir/l1-$n.json" 2>/dev/null
    printf '| %s | %.3f | %.3f | %.3f | %.3f | %s |\n' "$n" \
      "$(jq .latency_ms.p50 "$dir/l2-$n.json")" "$(jq .latency_ms.p95 "$dir/l2-$n.json")" \
      "$(jq .latency_ms.p50 "$dir/l1-$n.json")" "$(jq .latency_ms.p95 "$dir/l1-$n.json")" "$((after - before))"
  done
  exit 0
fi

nginx_port=$(bench_nginx_conf 1 "$mock_port")
"$NGINX" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" &
nginx_pid=$!
pids+=("$nginx_pid")

cat >"$dir/turnpike.yaml" <<YAML
server: {listen: "127.0.0.1:0", workers: 1, access_log: ""}
governance: {enabled: false}
llm_cache: {enabled: true}
models:
  - name: bench-model
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:$mock_port/v1
YAML
"$TURNPIKE" serve --config "$dir/turnpike.yaml" >"$dir/turnpike.log" 2>&1 &
tp_pid=$!
pids+=("$tp_pid")
tp_port=$(port_of "$dir/turnpike.log" "turnpike listening on")
sleep 0.3

mock_requests() { curl -s "http://127.0.0.1:$mock_port/mock/stats" | jq -r .requests; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run TARGET PORT PID CONNECTIONS STREAM N: one measured run; prints "rps cpu_ms_per_1000".
run() {
  local target=$1 port=$2 pid=$3 conns=$4 stream=$5 n=$6 before after rps ok
  local flags=(--url "http://127.0.0.1:$port/v1/chat/completions" -c "$conns" -d "$duration" --quiet
    --json "$dir/$target-$n.json")
  ((stream)) && flags+=(--stream-every 1)
  before=$(cpu_ticks "$pid")
  "$TURNPIKE" bench "${flags[@]}" 2>"$dir/$target-$n.log"
  after=$(cpu_ticks "$pid")
  rps=$(jq -r '.requests_per_second' "$dir/$target-$n.json")
  ok=$(jq -r '.requests_ok' "$dir/$target-$n.json")
  awk -v r="$rps" -v t=$((after - before)) -v n="$ok" -v hz="$clk_tck" \
    'BEGIN { printf "%.0f %.1f\n", r, (n > 0 ? t * 1000 / hz * 1000 / n : 0) }'
}

echo "Machine: $(nproc) cores, $(uname -r); mock: $MOCK_FLAGS; $runs alternating runs of ${duration}s per target"
echo
echo "| cell | target | run rps (CPU ms/1000 req) | median rps | median CPU ms/1000 |"
echo "|---|---|---|---|---|"
for cell in $cells; do
  kind=${cell%%:*}
  conns=${cell##*:}
  stream=0
  [[ $kind == stream ]] && stream=1
  # Warm-up: fills the entry, warms both targets' connections.
  "$TURNPIKE" bench --url "http://127.0.0.1:$tp_port/v1/chat/completions" -c "$conns" -d 1 --quiet \
    $( ((stream)) && echo --stream-every 1) --json /dev/null 2>/dev/null
  "$TURNPIKE" bench --url "http://127.0.0.1:$nginx_port/v1/chat/completions" -c "$conns" -d 1 --quiet \
    $( ((stream)) && echo --stream-every 1) --json /dev/null 2>/dev/null
  : >"$dir/nginx.rows"
  : >"$dir/turnpike.rows"
  upstream_before=0
  upstream_during=0
  for ((n = 1; n <= runs; n++)); do
    run nginx "$nginx_port" "$nginx_pid" "$conns" "$stream" "$kind-$n" >>"$dir/nginx.rows"
    upstream_before=$(mock_requests)
    run turnpike "$tp_port" "$tp_pid" "$conns" "$stream" "$kind-$n" >>"$dir/turnpike.rows"
    upstream_during=$((upstream_during + $(mock_requests) - upstream_before))
  done
  for target in nginx turnpike; do
    cells_text=$(awk '{ printf "%s%s (%s)", (NR > 1 ? ", " : ""), $1, $2 }' "$dir/$target.rows")
    med_rps=$(awk '{ print $1 }' "$dir/$target.rows" | median)
    med_cpu=$(awk '{ print $2 }' "$dir/$target.rows" | median)
    echo "| $kind:$conns | $target | $cells_text | $med_rps | $med_cpu |"
    eval "med_$target=$med_rps"
  done
  awk -v t="$med_turnpike" -v n="$med_nginx" -v c="$kind:$conns" -v u="$upstream_during" \
    'BEGIN { printf "| %s | turnpike / nginx | | %.2fx | upstream calls during the Turnpike runs: %d |\n", c, t / n, u }'
done
