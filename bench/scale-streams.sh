#!/usr/bin/env bash
# Holds N concurrent streaming requests open through one Turnpike process and reports its
# memory (docs/BENCHMARKS.md, "Scale: 10,000 concurrent streams").
#
#   bench/scale-streams.sh [--streams 10000] [--tokens 20] [--inter-token 1s]
#                          [--first-token-delay 0ms] [--proxy-workers 2] [--mock-workers 2]
#                          [--bench-threads 1] [--settle 65] [--out DIR] [--force]
#
# Starts (and on exit stops, by PID) one slow mock provider and one Turnpike on free loopback
# ports (read from their "listening on" lines), raises the open-files limit, then runs
# `turnpike bench -c N --requests N --stream-every 1`: N connections, one stream each, all
# opened at once. Each stream lasts about tokens x inter-token (the request asks for
# max_tokens 20, which caps the mock's --tokens). Turnpike's VmRSS (and open
# fds) is sampled idle, when N client connections to Turnpike are established (polling `ss`),
# and after every stream has ended and the load generator has closed its connections (again
# after --settle seconds: by then Turnpike's 60 s idle timeout has closed any connection it
# left in CLOSE-WAIT; see that column).
# Passes (exit 0) only if all N were open at once and every stream ended with data: [DONE].
# --force runs even if Turnpike's open-files limit is too small for N (to see what breaks).
#
# Needs: the turnpike binary ($TURNPIKE), ss (iproute2), jq, curl. Loopback only.
set -euo pipefail

TURNPIKE=${TURNPIKE:-build/src/app/turnpike}

streams=10000
tokens=20
inter_token=1s
first_token_delay=0ms
proxy_workers=2
mock_workers=2
bench_threads=1
settle=65
out_dir=""
force=0
args=("$@")

usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while (($#)); do
  case "$1" in
    --streams) streams=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --inter-token) inter_token=$2; shift 2 ;;
    --first-token-delay) first_token_delay=$2; shift 2 ;;
    --proxy-workers) proxy_workers=$2; shift 2 ;;
    --mock-workers) mock_workers=$2; shift 2 ;;
    --bench-threads) bench_threads=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option: $1" >&2; usage 2 ;;
  esac
done
[[ $streams =~ ^[1-9][0-9]*$ ]] || { echo "--streams must be a positive integer" >&2; exit 2; }
command -v ss >/dev/null || { echo "needs ss (iproute2)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }

out_dir=${out_dir:-bench-results/scale-$streams-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/turnpike-scale.XXXXXX")
script_start=$(date +%s.%N)

# ---- processes: everything started is recorded here and stopped by PID on exit ----------
started_pids=()
cleanup() {
  local pid i
  for pid in "${started_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Turnpike drains for at most 2 s (its config below); then anything left is killed.
  for ((i = 0; i < 50; i++)); do
    local alive=0
    for pid in "${started_pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${started_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME CMD...: runs CMD in the background, logs to the output dir, sets $last_pid.
start() {
  local name=$1; shift
  "$@" >"$out_dir/$name.log" 2>"$out_dir/$name.err" &
  last_pid=$!
  started_pids+=("$last_pid")
}

# listen_port NAME PID PREFIX: the port of the "PREFIX HOST:PORT" line PID prints (10 s).
listen_port() {
  local name=$1 pid=$2 prefix=$3 i port
  for ((i = 0; i < 100; i++)); do
    port=$(sed -n "s/^$prefix .*:\([0-9][0-9]*\)\$/\1/p" "$out_dir/$name.log")
    if [[ -n $port ]]; then echo "$port"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name (pid $pid) exited before listening:" >&2
      cat "$out_dir/$name.err" >&2 || true
      return 1
    fi
    sleep 0.1
  done
  echo "$name (pid $pid) printed no \"$prefix\" line in 10 s" >&2
  return 1
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
threads_of() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }
# established PORT sport|dport: TCP connections in ESTABLISHED with that local/remote port.
established() { ss -Htn state established "( $2 = :$1 )" | wc -l; }
# close_wait PORT: Turnpike's client connections the peer closed but Turnpike has not.
close_wait() { ss -Htn state close-wait "( sport = :$1 )" | wc -l; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# ---- limits -------------------------------------------------------------------------------
# Turnpike holds two sockets per stream (client + upstream); the mock and the load generator
# one each. Ask for plenty; without CAP_SYS_RESOURCE only up to the current hard limit.
want_fds=$((2 * streams + 4096))
if (($(ulimit -Hn) < want_fds)); then
  ulimit -Hn "$want_fds" 2>/dev/null ||
    echo "note: cannot raise the hard open-files limit above $(ulimit -Hn) (no CAP_SYS_RESOURCE?)" >&2
fi
if (($(ulimit -Sn) < want_fds)); then ulimit -Sn "$(ulimit -Hn)"; fi
nofile=$(ulimit -n)
read -r port_lo port_hi < /proc/sys/net/ipv4/ip_local_port_range
if ((port_hi - port_lo + 1 < streams + 1000)); then
  # Each of the two hops (bench -> Turnpike, Turnpike -> mock) needs N ephemeral ports to one
  # destination. Raise it with: sysctl -w net.ipv4.ip_local_port_range="1024 65000"
  echo "net.ipv4.ip_local_port_range is $port_lo-$port_hi: too few ephemeral ports for" \
    "$streams streams" >&2
  exit 1
fi

# A private copy of the binary: a rebuild by someone else mid-run must not change it.
cp "$TURNPIKE" "$run_dir/turnpike"
tp=$run_dir/turnpike

# ---- mock and Turnpike ------------------------------------------------------------------
start mock "$tp" mock-provider --listen 127.0.0.1:0 --workers "$mock_workers" \
  --tokens "$tokens" --first-token-delay "$first_token_delay" --inter-token "$inter_token"
pid_mock=$last_pid
port_mock=$(listen_port mock "$pid_mock" "mock-provider listening on")

cat >"$run_dir/turnpike.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: $proxy_workers
  access_log: ""
  sse_keepalive: 0s
  timeouts: {drain: 2s}
governance: {enabled: false}
models:
  - name: bench-model
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:$port_mock/v1
YAML
cp "$run_dir/turnpike.yaml" "$out_dir/turnpike.yaml"
start turnpike "$tp" serve --config "$run_dir/turnpike.yaml"
pid_tp=$last_pid
port_tp=$(listen_port turnpike "$pid_tp" "turnpike listening on")

sleep 1
idle_rss=$(rss_kib "$pid_tp")
idle_fds=$(fds_of "$pid_tp")
idle_threads=$(threads_of "$pid_tp")
need_fds=$((idle_fds + 2 * streams))
load_start=$(loadavg)
echo "turnpike pid $pid_tp on 127.0.0.1:$port_tp, mock pid $pid_mock on 127.0.0.1:$port_mock" >&2
echo "open-files limit $nofile; Turnpike needs $idle_fds (idle) + 2 x $streams = $need_fds;" \
  "ephemeral ports $port_lo-$port_hi; load average $load_start" >&2
if ((need_fds > nofile)); then
  echo "open-files limit $nofile < $need_fds: Turnpike cannot hold $streams streams" \
    "(client + upstream socket each)" >&2
  if ((!force)); then exit 1; fi
  echo "--force: running anyway" >&2
fi

# ---- the streams --------------------------------------------------------------------------
# Every connection sends exactly one streaming request (--requests N over N connections) and
# exits once it is read; the run ends when the last one has. -d and --timeout only bound it.
# seconds DURATION: the mock's "250ms", "2s", "1m" (or "0") in seconds.
seconds() {
  awk -v d="$1" 'BEGIN { n = d + 0; if (d ~ /ms$/) n /= 1000; else if (d ~ /m$/) n *= 60; print n }'
}
stream_s=$(awk -v n="$tokens" -v t="$(seconds "$inter_token")" -v f="$(seconds "$first_token_delay")" \
  'BEGIN { print int(f + n * t) + 1 }')
timeout_s=$((stream_s + 90))
url="http://127.0.0.1:$port_tp/v1/chat/completions"
bench_cmd=("$tp" bench --url "$url" -c "$streams" --requests "$streams" --stream-every 1
  -d "$((timeout_s + 30))" --timeout "$timeout_s" --threads "$bench_threads" --quiet
  --json "$out_dir/bench.json")
echo "${bench_cmd[*]}" >"$out_dir/bench.cmd"
cpu_before=$(cpu_ticks "$pid_tp")
t_start=$(now)
start bench "${bench_cmd[@]}"
pid_bench=$last_pid

# Poll until N client connections to Turnpike and N from Turnpike to the mock are established:
# then all N streams are open end to end; sample there. If that never happens (the bench ends
# first), the sample is the one with the most connections open. Keep the highest RSS seen.
max_open=0
max_upstream=0
best=-1
t_all_open=""
open_rss="" open_fds="" open_upstream="" open_threads=""
peak_rss=0
while kill -0 "$pid_bench" 2>/dev/null; do
  n=$(established "$port_tp" sport)
  u=$(established "$port_mock" dport)
  r=$(rss_kib "$pid_tp")
  ((r > peak_rss)) && peak_rss=$r
  ((n > max_open)) && max_open=$n
  ((u > max_upstream)) && max_upstream=$u
  if [[ -z $t_all_open ]] && ((n + u > best)); then
    best=$((n + u))
    open_rss=$r open_fds=$(fds_of "$pid_tp") open_threads=$(threads_of "$pid_tp")
    open_clients=$n open_upstream=$u
    ((n >= streams && u >= streams)) && t_all_open=$(now)
  fi
  sleep 0.2
done
bench_rc=0
wait "$pid_bench" || bench_rc=$?
t_bench_done=$(now)
cpu_after=$(cpu_ticks "$pid_tp")

# After: wait until no client connection to Turnpike is left, then sample.
for ((i = 0; i < 100; i++)); do
  (($(established "$port_tp" sport) == 0)) && break
  sleep 0.1
done
left_clients=$(established "$port_tp" sport)
left_close_wait=$(close_wait "$port_tp")
left_upstream=$(established "$port_mock" dport)
after_rss=$(rss_kib "$pid_tp")
after_fds=$(fds_of "$pid_tp")
sleep "$settle"
settled_rss=$(rss_kib "$pid_tp")
settled_fds=$(fds_of "$pid_tp")
settled_upstream=$(established "$port_mock" dport)
settled_clients=$(established "$port_tp" sport)
settled_close_wait=$(close_wait "$port_tp")
hwm=$(hwm_kib "$pid_tp")
load_end=$(loadavg)
# Turnpike's own counters (failed upstream connects, etc.), after every sample was taken.
curl -s --max-time 5 "http://127.0.0.1:$port_tp/metrics" >"$out_dir/metrics.txt" || true
connect_errors=$(awk '/^turnpike_upstream_connect_errors_total/ { print $2 }' \
  "$out_dir/metrics.txt")
tp_alive=yes
kill -0 "$pid_tp" 2>/dev/null || tp_alive=no

# ---- results ------------------------------------------------------------------------------
ok=0 failed="?" streams_ok=0 failures="bench wrote no JSON (exit $bench_rc)"
if [[ -s $out_dir/bench.json ]]; then
  ok=$(jq -r '.requests_ok' "$out_dir/bench.json")
  failed=$(jq -r '.requests_failed' "$out_dir/bench.json")
  streams_ok=$(jq -r '.streams_ok' "$out_dir/bench.json")
  failures=$(jq -r '[.failures | to_entries[] | select(.key != "by_status" and .value > 0)
      | "\(.key) \(.value)"] + [.failures.by_status | to_entries[] | "HTTP \(.key): \(.value)"]
      | if length == 0 then "none" else join(", ") end' "$out_dir/bench.json")
fi
open_at="never (at most $max_open client and $max_upstream upstream connections established)"
[[ -n $t_all_open ]] && open_at="$(elapsed "$t_start" "$t_all_open") s after start"
clk_tck=$(getconf CLK_TCK)
tp_cpu=$(awk -v t=$((cpu_after - cpu_before)) -v hz="$clk_tck" 'BEGIN { printf "%.2f", t / hz }')
pass=0
[[ -n $t_all_open && $failed == 0 && $streams_ok == "$streams" && $tp_alive == yes ]] && pass=1

{
  echo "### $streams concurrent streams ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "Mock: $tokens tokens, $first_token_delay first token, $inter_token apart," \
    "$mock_workers workers. Turnpike: $proxy_workers workers, sse_keepalive 0s," \
    "access log off. Open-files limit $nofile. Load average $load_start at start," \
    "$load_end at end."
  echo
  echo "| Turnpike | RSS MiB | open fds | client conns | client conns in CLOSE-WAIT |" \
    "upstream conns |"
  echo "|---|---|---|---|---|---|"
  echo "| idle, after start | $(mib "$idle_rss") | $idle_fds | 0 | 0 | 0 |"
  if [[ -n $t_all_open ]]; then
    echo "| $streams streams open | $(mib "$open_rss") | $open_fds | $open_clients | 0 |" \
      "$open_upstream |"
  elif ((best >= 0)); then
    echo "| most open at once (not all $streams) | $(mib "$open_rss") | $open_fds |" \
      "$open_clients | 0 | $open_upstream |"
  fi
  echo "| highest sample while streaming | $(mib "$peak_rss") | | | | |"
  echo "| all closed by the client | $(mib "$after_rss") | $after_fds | $left_clients |" \
    "$left_close_wait | $left_upstream |"
  echo "| all closed + ${settle} s | $(mib "$settled_rss") | $settled_fds | $settled_clients |" \
    "$settled_close_wait | $settled_upstream |"
  echo "| VmHWM (peak) | $(mib "$hwm") | | | | |"
  echo
  echo "- all $streams open: $open_at; bench finished after $(elapsed "$t_start" "$t_bench_done") s" \
    "(exit $bench_rc); whole script $(elapsed "$script_start" "$(now)") s"
  echo "- streams ok (ended with data: [DONE]): $streams_ok of $streams; requests ok $ok," \
    "failed $failed; failures: $failures; Turnpike's failed upstream connects:" \
    "${connect_errors:-unknown}"
  echo "- Turnpike CPU during the run: $tp_cpu s (user + sys); threads $idle_threads idle," \
    "${open_threads:-?} at N; still running: $tp_alive"
  echo "- result: $( ((pass)) && echo PASS || echo FAIL)"
  echo "- command: \`bench/scale-streams.sh ${args[*]}\`"
} | tee "$out_dir/result.md"
echo "raw results: $out_dir" >&2
((pass))
