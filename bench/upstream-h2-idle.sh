#!/usr/bin/env bash
# Idle streams over HTTP/2 at both ends (issue 26: 20,000 concurrent idle streams in one process
# under a 20,000 descriptor limit): the memory and descriptors per idle stream of the gateway.
#
#   bench/upstream-h2-idle.sh [--streams 20000] [--conns 20] [--workers 2] [--hold 15]
#
# A mock provider whose streams send their head and then wait (--first-token-delay 300s), a
# gateway (`ulimit -n 20000`, `server.http2: true` with 1,000 streams per client connection,
# the deployment `http2: true`), and `turnpike bench --http2 -c CONNS --streams-per-conn
# STREAMS/CONNS --stream-every 1` holding every stream open. After --hold seconds: the
# gateway's RSS and open descriptors against the same figures before the load, the mock's
# HTTP/2 connections and streams, and the gateway's upstream connects. KEEP_DIR=1 keeps logs.
# Needs: the turnpike binary ($TURNPIKE), jq, curl.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
streams=20000 conns=20 workers=2 hold=15
while (($#)); do
  case $1 in
    --streams) streams=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --hold) hold=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$SCRIPT_DIR/lib.sh"
bench_workdir
[[ -n ${KEEP_DIR:-} ]] && trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; echo "kept $dir" >&2' EXIT
bench_exclusive

(ulimit -n 65536 2>/dev/null || true
 exec "$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 5 --first-token-delay 300s) >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")
cat >"$dir/gw.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: $workers, access_log: "", http2: true, http2_max_concurrent_streams: 1000}
governance: {enabled: false}
upstream: {timeouts: {first_byte: 600s, idle: 600s}}
models:
  - name: bench-model
    deployments: [{provider: openai, base_url: "http://127.0.0.1:$mock_port/v1", http2: true}]
YAML
(ulimit -n 20000; exec "$TURNPIKE" serve --config "$dir/gw.yaml") >"$dir/gw.log" 2>&1 &
pids+=($!)
gw_pid=$!
gw_port=$(port_of "$dir/gw.log" "listening on")

rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
# Warm the gateway (one stream) so that the baseline holds its start-up allocations.
"$TURNPIKE" bench --url "http://127.0.0.1:$gw_port/v1/chat/completions" --http2 -c 1 \
  --streams-per-conn 1 --requests 1 -q -H 'x-mock-first-token-delay-ms: 0' >/dev/null 2>&1
rss0=$(rss "$gw_pid") fds0=$(fds "$gw_pid")
(ulimit -n 65536 2>/dev/null || true
 exec "$TURNPIKE" bench --url "http://127.0.0.1:$gw_port/v1/chat/completions" --http2 -c "$conns" \
  --streams-per-conn $((streams / conns)) --stream-every 1 -d $((hold + 30)) --timeout 600 -q) \
  >"$dir/bench.log" 2>&1 &
pids+=($!)
sleep "$hold"
rss1=$(rss "$gw_pid") fds1=$(fds "$gw_pid")
open=$(curl -s "http://127.0.0.1:$gw_port/metrics" | awk '$1 == "turnpike_http2_streams_total" {print $2}')
connects=$(curl -s "http://127.0.0.1:$gw_port/metrics" | awk '$1 == "turnpike_upstream_connects_total" {print $2}')
mock=$(curl -s "http://127.0.0.1:$mock_port/mock/stats" | jq -c '{streams_started, http2}')
echo "streams asked: $streams over $conns client connections; gateway workers: $workers"
echo "gateway inbound h2 streams opened: $open; upstream connects: $connects; mock: $mock"
echo "gateway RSS: $rss0 -> $rss1 KiB; descriptors: $fds0 -> $fds1"
awk -v a="$rss0" -v b="$rss1" -v n="$streams" 'BEGIN {printf "RSS per idle stream: %.2f KiB\n", (b - a) / n}'
