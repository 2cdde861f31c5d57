#!/usr/bin/env bash
# Counts the instructions Turnpike's worker spends per proxied stream, with callgrind
# (repeatable whatever else runs on the machine).
#
#   bench/callgrind-streams.sh [--streams 1000] [--conns 10] [--keepalive 15s] [--out DIR]
#                              [--plain]   # non-streaming requests instead
#
# Starts one mock provider (20 tokens, no delay; natively) and one Turnpike with 1 worker
# under `valgrind --tool=callgrind`, runs `turnpike bench --requests N --stream-every 1
# --warmup 0` through it, stops Turnpike (SIGTERM, so callgrind writes its file) and prints
# the inclusive instruction count of turnpike::http::Server::Run (the worker loop) divided by
# N, then the functions with the highest inclusive counts. Stops exactly the PIDs it started.
#
# MOCK=PATH runs the mock provider (and the load generator) from another binary, so that two
# Turnpike builds can be measured against the same mock.
#
# Needs: the turnpike binary ($TURNPIKE, default build/src/app/turnpike), valgrind, jq.
set -euo pipefail

TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
MOCK=${MOCK:-$TURNPIKE}
streams=1000
conns=10
keepalive=15s
out_dir=""
stream_args=(--stream-every 1)
kind=stream
while (($#)); do
  case "$1" in
    --streams) streams=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --keepalive) keepalive=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --plain) stream_args=(); kind=request; shift ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
out_dir=${out_dir:-$(mktemp -d "${TMPDIR:-/tmp}/turnpike-callgrind.XXXXXX")}
mkdir -p "$out_dir"

started_pids=()
cleanup() {
  local pid
  for pid in "${started_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() {
  local name=$1; shift
  "$@" >"$out_dir/$name.log" 2>&1 &
  last_pid=$!
  started_pids+=("$last_pid")
}

# listen_port NAME PID PREFIX: the port of the "PREFIX HOST:PORT" line PID prints (120 s:
# Turnpike starts slowly under valgrind).
listen_port() {
  local name=$1 pid=$2 prefix=$3 i port
  for ((i = 0; i < 1200; i++)); do
    port=$(sed -n "s/^$prefix .*:\([0-9][0-9]*\)\$/\1/p" "$out_dir/$name.log")
    if [[ -n $port ]]; then echo "$port"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name (pid $pid) exited before listening:" >&2
      cat "$out_dir/$name.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$name did not print its port" >&2
  return 1
}

start mock "$MOCK" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 \
  --first-token-delay 0ms --inter-token 0ms
port_mock=$(listen_port mock "$last_pid" "mock-provider listening on")

cat >"$out_dir/turnpike.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: 1
  access_log: ""
  sse_keepalive: $keepalive
governance: {enabled: false}
models:
  - name: bench-model
    deployments:
      - provider: openai
        base_url: http://127.0.0.1:$port_mock/v1
YAML
start turnpike valgrind --tool=callgrind --callgrind-out-file="$out_dir/callgrind.out" \
  "$TURNPIKE" serve --config "$out_dir/turnpike.yaml"
pid_tp=$last_pid
port_tp=$(listen_port turnpike "$pid_tp" "turnpike listening on")

"$MOCK" bench --url "http://127.0.0.1:$port_tp/v1/chat/completions" -c "$conns" \
  --requests "$streams" "${stream_args[@]}" --warmup 0 -d 600 --quiet --json "$out_dir/bench.json" \
  2>"$out_dir/bench.log"
ok=$(jq -r .requests_ok "$out_dir/bench.json")
kill -TERM "$pid_tp"
wait "$pid_tp" 2>/dev/null || true

callgrind_annotate --inclusive=yes "$out_dir/callgrind.out" >"$out_dir/inclusive.txt" 2>/dev/null
run_ir=$(grep -m 1 'turnpike::http::Server::Run()' "$out_dir/inclusive.txt" | awk '{gsub(",", "", $1); print $1}')
echo "${kind}s OK: $ok (requested $streams, $conns connections, sse_keepalive $keepalive)"
awk -v ir="$run_ir" -v n="$streams" -v kind="$kind" \
  'BEGIN { printf "Server::Run inclusive: %d instructions, %.1fk per %s\n", ir, ir / n / 1000, kind }'
echo "callgrind output: $out_dir/callgrind.out (annotated: $out_dir/inclusive.txt)"
