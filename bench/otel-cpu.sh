#!/usr/bin/env bash
# CPU per request with OpenTelemetry tracing off and on (the gateway process, its exporter
# thread included, from /proc), the companion of otel-callgrind.sh's instruction counts.
#
#   bench/otel-cpu.sh [--requests 30000] [--conns 8] [--rounds 3]
#
# One Turnpike (1 worker, governance off) in front of the mock provider (1 worker, 20
# tokens), started fresh for each cell; tracing exports to a collector in node (answers 200)
# at sampling_ratio 1.0 every second. The cells run interleaved, `rounds` times: off,
# protobuf, json, off, ... so that a drift of the machine falls on every cell alike. Each
# cell: 2,000 warm-up requests, then the measured ones, then 2 s for the exporter's last
# batch; the gateway's user + system ticks over that span / requests. Prints one row per cell
# and the median per setting. Ticks are 10 ms: 30,000 requests take a few seconds of CPU, so
# a tick is well under 1%.
#
# Needs: the turnpike binary ($TURNPIKE, default build/src/app/turnpike), jq, node.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
requests=30000 conns=8 rounds=3
while (($#)); do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_workdir
bench_exclusive

"$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")
node -e '
  require("http").createServer((q, s) => {
    q.resume();
    q.on("end", () => s.writeHead(200, {"content-type": "application/json"}).end("{}"));
  }).listen(0, "127.0.0.1", function () {
    console.log("collector listening on 127.0.0.1:" + this.address().port);
  });
' >"$dir/collector.log" 2>&1 &
pids+=($!)
collector_port=$(port_of "$dir/collector.log" "collector listening on")
ticks_per_second=$(getconf CLK_TCK)

cell() {  # cell off|http/protobuf|http/json: prints microseconds of CPU per request
  local which=${1#http/}
  otel_gateway_config "$dir/$which.yaml" "$1" "$collector_port" "$mock_port"
  "$TURNPIKE" serve --config "$dir/$which.yaml" >"$dir/$which.log" 2>&1 &
  local pid=$!
  local port; port=$(port_of "$dir/$which.log" "turnpike listening on" 30)
  local url=http://127.0.0.1:$port/v1/chat/completions
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests 2000 -d 600 -q >/dev/null 2>&1
  [[ $which != off ]] && sleep 2
  local before; before=$(cpu_ticks "$pid")
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests "$requests" -d 600 -q \
    --json "$dir/$which.json" >/dev/null 2>&1
  [[ $which != off ]] && sleep 2
  local after; after=$(cpu_ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local ok; ok=$(jq .requests_ok "$dir/$which.json")
  [[ $ok == "$requests" ]] || echo "warning: $which: $ok of $requests requests ok" >&2
  jq -n "($after - $before) * 1000000 / $ticks_per_second / $requests"
}

declare -A runs
echo "| round | tracing | CPU per request (µs) |"
echo "|---|---|---|"
for ((r = 1; r <= rounds; r++)); do
  for which in off http/protobuf http/json; do
    us=$(cell "$which")
    runs[$which]+="$us "
    printf '| %d | %s | %.1f |\n' "$r" "${which#http/}" "$us"
  done
done
echo
echo "| tracing | median CPU per request (µs) | vs off |"
echo "|---|---|---|"
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
off=$(median "${runs[off]}")
for which in off http/protobuf http/json; do
  m=$(median "${runs[$which]}")
  printf '| %s | %.1f | %+.1f%% |\n' "${which#http/}" "$m" "$(jq -n "($m / $off - 1) * 100")"
done
