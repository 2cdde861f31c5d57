#!/usr/bin/env bash
# Instructions per request that OpenTelemetry tracing adds, counted with callgrind (repeatable
# whatever else runs on the machine), split by thread: the worker (on the request path) and
# the exporter thread (OTLP encoding and the HTTP posts, off the request path). One connection
# by default: each request then takes the same path through the event loop, and the worker's
# count repeats to within ~0.1% run to run; with several, how reads and writes batch depends
# on timing and moves it by several hundred instructions.
#
#   bench/otel-callgrind.sh [--requests 10000] [--conns 1] [--stream] [--traceparent]
#
# Runs the same non-streaming load three times through one Turnpike (1 worker, governance off) under
# `valgrind --tool=callgrind --separate-threads=yes`: tracing off, then on at sampling_ratio
# 1.0 exporting to a collector in node (answers 200 to every POST) every 1 s, once in each
# OTLP encoding (http/protobuf, the default, and http/json). --stream makes
# every request a stream; --traceparent sends a client traceparent with every request (all
# instances; the off one ignores it). Instrumentation is on only for the measured requests
# (after 2,000 warm-up requests, whose spans are exported before it starts). Prints
# instructions per request per thread. The callgrind files stay in $OTEL_CG_DIR when it is set
# (for callgrind_annotate), else in a temporary directory.
#
# Needs: the turnpike binary ($TURNPIKE, default build/src/app/turnpike), valgrind, jq, node.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
requests=10000 conns=1
extra=()
while (($#)); do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --stream) extra+=(--stream-every 1); shift ;;
    --traceparent) extra+=(-H "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"); shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
dir=${OTEL_CG_DIR:-$(mktemp -d)}; mkdir -p "$dir"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; }
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive

"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")
node -e '
  let n = 0;
  require("http").createServer((q, s) => {
    q.resume();
    q.on("end", () => { n++; s.writeHead(200, {"content-type": "application/json"}).end("{}"); });
  }).listen(0, "127.0.0.1", function () {
    console.log("collector listening on 127.0.0.1:" + this.address().port);
  });
  process.on("SIGTERM", () => { console.log("exports " + n); process.exit(0); });
' >"$dir/collector.log" 2>&1 &
pids+=($!)
collector_port=$(port_of "$dir/collector.log" "collector listening on")

total_in() {  # total_in FILE: the instructions (Ir) recorded in one thread's callgrind file
  awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
       /^totals:/ { print $(col["Ir"]) }' "$1"
}

measure() {  # measure off|http/protobuf|http/json
  local which=${1#http/}
  otel_gateway_config "$dir/$which.yaml" "$1" "$collector_port" "$mock_port"
  valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no \
    --callgrind-out-file="$dir/cg.$which" \
    "$TURNPIKE" serve --config "$dir/$which.yaml" >"$dir/$which.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  local port; port=$(port_of "$dir/$which.log" "turnpike listening on" 60)
  local url=http://127.0.0.1:$port/v1/chat/completions
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests 2000 -d 600 -q \
    "${extra[@]+"${extra[@]}"}" >/dev/null 2>"$dir/warmup.err"
  # The warm-up's last spans are exported before instrumentation starts (within the 1 s
  # interval), so the exporter's count is the measured requests' alone.
  [[ $which != off ]] && sleep 2
  callgrind_control -i on "$pid" >/dev/null 2>&1
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests "$requests" -d 600 -q \
    "${extra[@]+"${extra[@]}"}" --json "$dir/$which.json" >/dev/null 2>"$dir/$which.err"
  # The exporter's last batch of the run goes out within its interval (1 s).
  [[ $which != off ]] && sleep 2
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  local ok; ok=$(jq .requests_ok "$dir/$which.json")
  [[ $ok == "$requests" ]] || echo "warning: $which: $ok of $requests requests ok" >&2
  local f worker=0 exporter=0
  for f in "$dir"/cg."$which".1-*; do
    if grep -q "OtlpExporter::Run" "$f"; then exporter=$(total_in "$f")
    elif grep -q "scheduler::run" "$f"; then worker=$((worker + $(total_in "$f"))); fi
  done
  printf '| %s | %.0f | %.0f | %.0f |\n' "$which" "$(jq -n "$worker / $requests")" \
    "$(jq -n "$exporter / $requests")" "$(jq -n "($worker + $exporter) / $requests")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "| tracing | worker instructions per request | exporter thread | total |"
echo "|---|---|---|---|"
measure off
measure http/protobuf
measure http/json
