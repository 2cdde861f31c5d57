#!/usr/bin/env bash
# Produces the benchmark matrix of docs/BENCHMARKS.md: the same load against the mock provider
# directly, through nginx and through Turnpike, side by side in one run.
#
#   bench/run-matrix.sh [--runs 2] [--duration 5] [--warmup 1] [--out DIR]
#                       [--proxy-workers 1] [--mock-workers 1] [--base-port 18700]
#                       [--cells "stream:32 plain:50"]
#   bench/run-matrix.sh --self-check [--duration 5] [--runs 2]   # driver vs wrk on nginx
#
# Starts (and on exit stops, by PID) two mock providers (no delay; 50 ms first token), one
# nginx from bench/nginx.conf.in, and two Turnpike instances (one per mock). Each cell runs
# the three targets back to back, starting with a different one each cell. Before every
# measured run a separate warm-up run loads the same target; CPU is read from /proc/PID/stat
# (utime + stime, children's threads included) just before and after the measured run.
# Markdown tables go to stdout, raw JSON to the output directory.
#
# --cells runs only the listed cells (kind:connections; default: all of them). The xstream
# kind is the stream cell plus the target "translated": a third Turnpike whose deployment is
# `provider: anthropic` on the same mock (OpenAI client -> Anthropic dialect -> OpenAI chunks),
# next to the identity path; that instance runs only when an xstream cell is asked for. With
# BASELINE=PATH, a second pair of Turnpike instances from that binary (e.g. the previous
# commit's) joins each cell as the target "baseline", on ports base + 7 and base + 8; the mocks
# and the load generator still come from $TURNPIKE.
#
# Needs: the turnpike binary ($TURNPIKE), nginx, jq; wrk for --self-check.
set -euo pipefail

TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
BENCH=${BENCH:-}  # a load generator command line to use instead of "$TURNPIKE bench"
BASELINE=${BASELINE:-}  # a second turnpike binary to compare, as the target "baseline"
NGINX=${NGINX:-nginx}
WRK=${WRK:-wrk}
MOCK_FLAGS=${MOCK_FLAGS:-"--tokens 20 --first-token-delay 0ms --inter-token 0ms"}
MOCK_TTFT_FLAGS=${MOCK_TTFT_FLAGS:-"--tokens 20 --first-token-delay 50ms --inter-token 5ms"}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$SCRIPT_DIR/lib.sh"  # cpu_ticks

runs=2
duration=5
warmup=1
out_dir=""
proxy_workers=1
mock_workers=1
base_port=18700
self_check=0
only_cells=""

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --proxy-workers) proxy_workers=$2; shift 2 ;;
    --mock-workers) mock_workers=$2; shift 2 ;;
    --base-port) base_port=$2; shift 2 ;;
    --self-check) self_check=1; shift ;;
    --cells) only_cells=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option: $1" >&2; usage 2 ;;
  esac
done
if [[ -n $BENCH ]]; then read -r -a bench_cmd <<<"$BENCH"; else bench_cmd=("$TURNPIKE" bench); fi
read -r -a mock_flags <<<"$MOCK_FLAGS"
read -r -a mock_ttft_flags <<<"$MOCK_TTFT_FLAGS"
out_dir=${out_dir:-bench-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/turnpike-matrix.XXXXXX")
clk_tck=$(getconf CLK_TCK)

# ---- processes: everything started is recorded here and stopped by PID on exit ----------
started_pids=()
cleanup() {
  local pid
  for pid in "${started_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME CMD...: runs CMD in the background, logs to the run dir, sets $last_pid.
start() {
  local name=$1; shift
  "$@" >"$run_dir/$name.log" 2>&1 &
  last_pid=$!
  started_pids+=("$last_pid")
}

# wait_port PORT PID: until something accepts on 127.0.0.1:PORT (or PID died, or 10 s).
wait_port() {
  local port=$1 pid=$2 i
  for ((i = 0; i < 100; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "process $pid for port $port exited; its log:" >&2
      cat "$run_dir"/*.log >&2 || true
      exit 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on port $port after 10 s" >&2
  exit 1
}

# ms_per_1000 TICKS REQUESTS
ms_per_1000() {
  awk -v t="$1" -v n="$2" -v hz="$clk_tck" \
    'BEGIN { if (n > 0) printf "%.1f", t * 1000 / hz * 1000 / n; else printf "-" }'
}

port_mock=$base_port
port_mock_ttft=$((base_port + 1))
port_nginx=$((base_port + 2))
port_nginx_ttft=$((base_port + 3))
port_nginx_fixed=$((base_port + 4))
port_tp=$((base_port + 5))
port_tp_ttft=$((base_port + 6))
port_base=$((base_port + 7))
port_base_ttft=$((base_port + 8))
port_tp_x=$((base_port + 9))

start_nginx() {
  mkdir -p "$run_dir/nginx"
  sed -e "s#@RUN_DIR@#$run_dir/nginx#g" -e "s/@WORKERS@/$proxy_workers/" \
    -e "s/@LISTEN_PORT@/$port_nginx/" -e "s/@MOCK_PORT@/$port_mock/" \
    -e "s/@TTFT_LISTEN_PORT@/$port_nginx_ttft/" -e "s/@TTFT_MOCK_PORT@/$port_mock_ttft/" \
    -e "s/@FIXED_PORT@/$port_nginx_fixed/" "$SCRIPT_DIR/nginx.conf.in" >"$run_dir/nginx/nginx.conf"
  start nginx "$NGINX" -p "$run_dir/nginx" -c "$run_dir/nginx/nginx.conf" -e "$run_dir/nginx/error.log"
  pid_nginx=$last_pid
  wait_port "$port_nginx_fixed" "$pid_nginx"
}

# start_turnpike NAME PORT MOCK_PORT [BINARY] [PROVIDER]: sets $last_pid. PROVIDER openai
# (default) or anthropic: the mock answers both dialects on one port.
start_turnpike() {
  local name=$1 port=$2 mock_port=$3 binary=${4:-$TURNPIKE} provider=${5:-openai}
  local base_url=http://127.0.0.1:$mock_port/v1
  [[ $provider == anthropic ]] && base_url=http://127.0.0.1:$mock_port
  cat >"$run_dir/$name.yaml" <<YAML
server:
  listen: 127.0.0.1:$port
  workers: $proxy_workers
  access_log: ""
governance: {enabled: false}   # the proxy path alone; bench/governance-cell.sh measures it on
models:
  - name: bench-model
    deployments:
      - provider: $provider
        base_url: $base_url
YAML
  start "$name" "$binary" serve --config "$run_dir/$name.yaml"
  wait_port "$port" "$last_pid"
}

# ---- driver self-check: turnpike bench and wrk against nginx's fixed response ------------
self_check_run() {
  local url="http://127.0.0.1:$port_nginx_fixed/v1/chat/completions" run before after
  cat >"$run_dir/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"Say hello."}],"max_tokens":20,"stream":false}'
LUA
  echo "| run | driver | connections | requests/s | CPU s (user+sys) | CPU ms per 1000 requests |"
  echo "|---|---|---|---|---|---|"
  for ((run = 1; run <= runs; run++)); do
    children_cpu_s >"$run_dir/before"
    "${bench_cmd[@]}" --url "$url" -c 50 -d "$duration" --quiet --json "$out_dir/self-check-$run.json" \
      2>"$out_dir/self-check-$run.log"
    children_cpu_s >"$run_dir/after"
    before=$(<"$run_dir/before")
    after=$(<"$run_dir/after")
    local n rps
    n=$(jq -r '.requests_ok' "$out_dir/self-check-$run.json")
    rps=$(jq -r '.requests_per_second | floor' "$out_dir/self-check-$run.json")
    awk -v r="$run" -v rps="$rps" -v c="$(awk -v a="$after" -v b="$before" 'BEGIN{print a-b}')" \
      -v n="$n" 'BEGIN { printf "| %s | turnpike bench | 50 | %d | %.2f | %.1f |\n", r, rps, c, c*1e6/n }'
    children_cpu_s >"$run_dir/before"
    "$WRK" -t1 -c50 -d"${duration}s" -s "$run_dir/post.lua" "$url" >"$out_dir/self-check-wrk-$run.txt"
    children_cpu_s >"$run_dir/after"
    before=$(<"$run_dir/before")
    after=$(<"$run_dir/after")
    n=$(awk '/requests in/ { print $1 }' "$out_dir/self-check-wrk-$run.txt")
    rps=$(awk '/Requests\/sec/ { printf "%d", $2 }' "$out_dir/self-check-wrk-$run.txt")
    awk -v r="$run" -v rps="$rps" -v c="$(awk -v a="$after" -v b="$before" 'BEGIN{print a-b}')" \
      -v n="$n" 'BEGIN { printf "| %s | wrk -t1 | 50 | %d | %.2f | %.1f |\n", r, rps, c, c*1e6/n }'
  done
}

# CPU seconds used so far by this shell's waited-for children: the second line of bash's
# `times`. It must run in this shell, not in a $(...) subshell, hence the file.
children_cpu_s() {
  times >"$run_dir/times"
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$run_dir/times"
}

if ((self_check)); then
  start_nginx
  echo "## Driver self-check ($(date -u +%Y-%m-%dT%H:%MZ), $duration s per run, nginx workers: $proxy_workers)"
  echo
  self_check_run
  exit 0
fi

# ---- the matrix ---------------------------------------------------------------------------
start mock "$TURNPIKE" mock-provider --listen "127.0.0.1:$port_mock" --workers "$mock_workers" \
  "${mock_flags[@]}"
pid_mock=$last_pid
start mock-ttft "$TURNPIKE" mock-provider --listen "127.0.0.1:$port_mock_ttft" \
  --workers "$mock_workers" "${mock_ttft_flags[@]}"
pid_mock_ttft=$last_pid
wait_port "$port_mock" "$pid_mock"
wait_port "$port_mock_ttft" "$pid_mock_ttft"
start_nginx
start_turnpike turnpike "$port_tp" "$port_mock"
pid_tp=$last_pid
start_turnpike turnpike-ttft "$port_tp_ttft" "$port_mock_ttft"
pid_tp_ttft=$last_pid

targets=(direct nginx turnpike)
if [[ -n $BASELINE ]]; then
  start_turnpike baseline "$port_base" "$port_mock" "$BASELINE"
  pid_base=$last_pid
  start_turnpike baseline-ttft "$port_base_ttft" "$port_mock_ttft" "$BASELINE"
  pid_base_ttft=$last_pid
  targets+=(baseline)
fi
# Cells: kind:connections. plain = non-streaming; stream = 20 tokens, no delay;
# ttft = 50 ms first token then 20 tokens 5 ms apart; xstream = stream, plus the translated
# target (an anthropic deployment on the same mock).
cells=(plain:1 plain:10 plain:50 plain:100 stream:1 stream:8 stream:32 xstream:32 ttft:1 ttft:8
  ttft:32)
if [[ -n $only_cells ]]; then read -r -a cells <<<"${only_cells//,/ }"; fi
if [[ " ${cells[*]}" == *" xstream:"* ]]; then
  start_turnpike turnpike-x "$port_tp_x" "$port_mock" "$TURNPIKE" anthropic
  pid_tp_x=$last_pid
fi

# run_cell RUN KIND CONNS TARGET: one warm-up, one measured run; appends a TSV row.
run_cell() {
  local run=$1 kind=$2 conns=$3 target=$4 port proxy_pid="" mock_pid stream_args=()
  case "$kind" in
    plain) mock_pid=$pid_mock ;;
    stream | xstream) mock_pid=$pid_mock; stream_args=(--stream-every 1) ;;
    ttft) mock_pid=$pid_mock_ttft; stream_args=(--stream-every 1) ;;
  esac
  case "$target:$kind" in
    direct:ttft) port=$port_mock_ttft ;;
    direct:*) port=$port_mock ;;
    nginx:ttft) port=$port_nginx_ttft; proxy_pid=$pid_nginx ;;
    nginx:*) port=$port_nginx; proxy_pid=$pid_nginx ;;
    turnpike:ttft) port=$port_tp_ttft; proxy_pid=$pid_tp_ttft ;;
    turnpike:*) port=$port_tp; proxy_pid=$pid_tp ;;
    baseline:ttft) port=$port_base_ttft; proxy_pid=$pid_base_ttft ;;
    baseline:*) port=$port_base; proxy_pid=$pid_base ;;
    translated:*) port=$port_tp_x; proxy_pid=$pid_tp_x ;;
  esac
  local url="http://127.0.0.1:$port/v1/chat/completions"
  local json="$out_dir/run$run/$kind-c$conns-$target.json"
  if [[ $warmup != 0 ]]; then
    "${bench_cmd[@]}" --url "$url" -c "$conns" -d "$warmup" "${stream_args[@]}" --quiet 2>/dev/null
  fi
  local proxy_before=0 proxy_after=0 mock_before mock_after
  [[ -n $proxy_pid ]] && proxy_before=$(cpu_ticks "$proxy_pid")
  mock_before=$(cpu_ticks "$mock_pid")
  "${bench_cmd[@]}" --url "$url" -c "$conns" -d "$duration" "${stream_args[@]}" --quiet --json "$json" \
    2>"$json.log"
  [[ -n $proxy_pid ]] && proxy_after=$(cpu_ticks "$proxy_pid")
  mock_after=$(cpu_ticks "$mock_pid")

  local total proxy_cpu="-"
  total=$(jq -r '.requests_ok + .requests_failed' "$json")
  [[ -n $proxy_pid ]] && proxy_cpu=$(ms_per_1000 $((proxy_after - proxy_before)) "$total")
  jq -r --arg kind "$kind" --arg target "$target" --arg proxy "$proxy_cpu" \
    --arg mock "$(ms_per_1000 $((mock_after - mock_before)) "$total")" \
    '[$kind, .connections, $target, .requests_per_second, .latency_ms.p50, .latency_ms.p99,
      .ttft_ms.p50, .ttft_ms.p95, .ttft_ms.p99, .requests_failed,
      .cpu.ms_per_1000_requests, $proxy, $mock] | @tsv' "$json" >>"$out_dir/run$run/cells.tsv"
  echo "$proxy_cpu $(ms_per_1000 $((mock_after - mock_before)) "$total")" >"$json.cpu"
}

# print_table RUN: the markdown table of one run, with TTFT overhead against direct.
print_table() {
  local run=$1
  echo "### Run $run"
  echo
  echo "| cell | conns | target | req/s | latency p50 ms | p99 ms | TTFT p50 ms | p95 ms | p99 ms | TTFT overhead p50 / p99 ms | failed | CPU ms/1k: load gen | proxy | mock |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' '
    {
      key = $1 ":" $2
      if (!(key in seen)) { seen[key] = 1; order[++cells] = key }
      row[key, $3] = $0
      if ($3 == "direct") { d50[key] = $7; d99[key] = $9 }
    }
    END {
      n = split("direct nginx turnpike translated baseline", names, " ")
      for (c = 1; c <= cells; c++) for (t = 1; t <= n; t++) {
        key = order[c]
        if (!((key, names[t]) in row)) continue
        split(row[key, names[t]], f, "\t"); streaming = f[1] != "plain"
        over = "-"
        if (streaming && f[3] != "direct" && (key in d50)) {
          over = sprintf("%+.2f / %+.2f", f[7] - d50[key], f[9] - d99[key])
        }
        ttft50 = streaming ? sprintf("%.2f", f[7]) : "-"
        ttft95 = streaming ? sprintf("%.2f", f[8]) : "-"
        ttft99 = streaming ? sprintf("%.2f", f[9]) : "-"
        printf "| %s | %s | %s | %.0f | %.3f | %.3f | %s | %s | %s | %s | %s | %.1f | %s | %s |\n",
          f[1], f[2], f[3], f[4], f[5], f[6], ttft50, ttft95, ttft99, over, f[10], f[11], f[12], f[13]
      }
    }' "$out_dir/run$run/cells.tsv"
  echo
}

{
  echo "## Matrix ($(date -u +%Y-%m-%dT%H:%MZ); $duration s per cell after $warmup s warm-up;" \
    "proxy workers $proxy_workers, mock workers $mock_workers)"
  echo
} | tee "$out_dir/matrix.md"
for ((run = 1; run <= runs; run++)); do
  mkdir -p "$out_dir/run$run"
  : >"$out_dir/run$run/cells.tsv"
  cell_index=0
  for cell in "${cells[@]}"; do
    kind=${cell%%:*}
    conns=${cell##*:}
    cell_targets=("${targets[@]}")
    [[ $kind == xstream ]] && cell_targets+=(translated)
    for ((t = 0; t < ${#cell_targets[@]}; t++)); do
      target=${cell_targets[$(((t + cell_index) % ${#cell_targets[@]}))]}
      echo "run $run: $kind c=$conns $target" >&2
      run_cell "$run" "$kind" "$conns" "$target"
    done
    cell_index=$((cell_index + 1))
  done
  print_table "$run" | tee -a "$out_dir/matrix.md"
done
echo "raw results: $out_dir" >&2
