#!/usr/bin/env bash
# The TLS cell of docs/BENCHMARKS.md: non-streaming chat completions over HTTP/1.1 keep-alive,
# Turnpike terminating TLS (server.tls) side by side with nginx terminating TLS with the same
# certificate, protocol versions and cipher list, both in front of the same mock provider over
# cleartext; and the same two proxies over cleartext, as the reference the TLS cost is read
# against. The four targets alternate within each run, the first one rotating.
#
#   bench/tls-cell.sh [--runs 5] [--duration 5] [--warmup 1] [--connections 50] [--workers 1]
#                     [--governance on|off] [--stream] [--close]
#
# --stream: each request asks for a stream (20 events and [DONE], chunked), read to its end.
# --close: each request on a new connection (`Connection: close`), so every TLS request pays a
# handshake: a resumed one (wrk keeps its sessions; TLS 1.3 tickets), as a client without
# keep-alive but with a session cache would.
#
# The load client is wrk (Debian's 4.1.0: `turnpike bench` has no TLS client), one thread,
# with a Lua script that POSTs the bench body with the key's Authorization header (nginx
# ignores it) and prints requests, errors and latency percentiles as JSON. The certificate is a
# self-signed ECDSA P-256 one made here with openssl; both sides offer TLS 1.2 and 1.3 with
# Turnpike's default TLS 1.2 list (http/tls_context.h), so the handshake agrees on TLS 1.3
# (TLS_AES_256_GCM_SHA384) on both. With --governance on (the default, the issue's bars),
# Turnpike checks a key, a plan budget and limits and writes the call log to SQLite.
# CPU per request: utime + stime of the proxy (and nginx's children) over the measured run.
# Starts (and on exit stops, by PID) the mock, two Turnpike instances and one nginx.
# Needs: turnpike ($TURNPIKE), nginx, wrk, openssl, jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
runs=5 duration=5 warmup=1 connections=50 workers=1 governance=on stream=false close=no
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --governance) governance=$2; shift 2 ;;
    --stream) stream=true; shift ;;
    --close) close=yes; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_workdir
bench_exclusive
gov=false; [[ $governance == on ]] && gov=true
ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

bench_tls_cert
bench_mock

gateway() {  # gateway NAME TLS_LINE
  cat >"$dir/$1.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: $workers
  access_log: ""
  $2
governance: {enabled: $gov}
store: {path: $dir/$1.db}
$(bench_models_yaml)
YAML
  TURNPIKE_ADMIN_TOKEN=bench "$TURNPIKE" serve --config "$dir/$1.yaml" >"$dir/$1.log" 2>&1 &
  echo $! >"$dir/$1.pid"
  port_of "$dir/$1.log" "turnpike listening on"
}
tp_tls_port=$(gateway tp_tls "tls: {cert_file: $dir/cert.pem, key_file: $dir/key.pem}")
pids+=("$(cat "$dir/tp_tls.pid")")
tp_plain_port=$(gateway tp_plain "")
pids+=("$(cat "$dir/tp_plain.pid")")

ng_tls_port=$(free_port) ng_plain_port=$(free_port)
bench_nginx_tls_conf "$dir/nginx" "$workers" on "\
  server { listen 127.0.0.1:$ng_tls_port ssl reuseport; location / { proxy_pass http://mock; } }
  server { listen 127.0.0.1:$ng_plain_port reuseport; location / { proxy_pass http://mock; } }" \
  "  ssl_ciphers $ciphers;"
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
sleep 0.5

key=tp-aaaaaaaaaaaa-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
if [[ $gov == true ]]; then
  export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$tp_plain_port
  plain_key=$(bench_key)
  # `turnpike admin` speaks cleartext only: the TLS instance is provisioned over https by curl.
  tls_key=$(curl -sk -H "Authorization: Bearer bench" -H 'content-type: application/json' \
    -X PUT -d '{"monthly_budget_usd":1000000,"rpm":100000000,"tpm":1000000000}' \
    "https://127.0.0.1:$tp_tls_port/admin/v1/plans/bench" >/dev/null &&
    curl -sk -H "Authorization: Bearer bench" -H 'content-type: application/json' \
      -d '{"id":"bench","plan":"bench"}' "https://127.0.0.1:$tp_tls_port/admin/v1/tenants" >/dev/null &&
    curl -sk -H "Authorization: Bearer bench" -H 'content-type: application/json' \
      -d '{"tenant":"bench","name":"bench","rpm":100000000}' \
      "https://127.0.0.1:$tp_tls_port/admin/v1/keys" | jq -r .key)
else
  plain_key=$key tls_key=$key
fi

lua() {  # lua KEY: the wrk script
  cat <<LUA
wrk.method = "POST"
wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"Say hello."}],"max_tokens":20,"stream":$stream}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $1"
$([[ $close == yes ]] && echo 'wrk.headers["Connection"] = "close"')
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('JSON {"requests":%d,"duration_us":%d,"failed":%d,"p50_us":%d,"p99_us":%d}\n',
    s.requests, s.duration, e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50), latency:percentile(99)))
end
LUA
}
lua "$plain_key" >"$dir/plain.lua"
lua "$tls_key" >"$dir/tls.lua"

hz=$(getconf CLK_TCK)
declare -A url=(
  [tp_tls]="https://127.0.0.1:$tp_tls_port/v1/chat/completions"
  [ng_tls]="https://127.0.0.1:$ng_tls_port/v1/chat/completions"
  [tp_plain]="http://127.0.0.1:$tp_plain_port/v1/chat/completions"
  [ng_plain]="http://127.0.0.1:$ng_plain_port/v1/chat/completions")
declare -A pid_of=([tp_tls]=$(cat "$dir/tp_tls.pid") [tp_plain]=$(cat "$dir/tp_plain.pid")
  [ng_tls]=$nginx_pid [ng_plain]=$nginx_pid)
targets=(tp_tls ng_tls tp_plain ng_plain)

echo "| run | Turnpike TLS req/s | nginx TLS req/s | TLS ratio | Turnpike / nginx CPU per request, TLS (µs) | CPU ratio, TLS | Turnpike plain req/s | nginx plain req/s | plain ratio | CPU per request, plain (µs) | p99 TLS Turnpike / nginx (ms) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for ((r = 1; r <= runs; r++)); do
  declare -A rps=() cpu=() p99=()
  for ((i = 0; i < ${#targets[@]}; i++)); do
    t=${targets[$(((i + r - 1) % ${#targets[@]}))]}
    script=$dir/plain.lua; [[ $t == tp_tls ]] && script=$dir/tls.lua
    [[ $t == tp_plain ]] && script=$dir/plain.lua
    wrk -t1 -c"$connections" -d"${warmup}s" -s "$script" "${url[$t]}" >/dev/null 2>&1
    before=$(cpu_ticks "${pid_of[$t]}")
    out=$(wrk -t1 -c"$connections" -d"${duration}s" -s "$script" "${url[$t]}" 2>&1)
    after=$(cpu_ticks "${pid_of[$t]}")
    json=$(grep '^JSON ' <<<"$out" | cut -c6-)
    failed=$(jq .failed <<<"$json")
    [[ $failed == 0 ]] || echo "warning: $t had $failed failures" >&2
    rps[$t]=$(jq '.requests / .duration_us * 1e6' <<<"$json")
    cpu[$t]=$(jq "($after - $before) / $hz * 1e6 / .requests" <<<"$json")
    p99[$t]=$(jq '.p99_us / 1000' <<<"$json")
  done
  printf '| %d | %.0f | %.0f | %.2f | %.1f / %.1f | %.2f | %.0f | %.0f | %.2f | %.1f / %.1f | %.1f / %.1f |\n' "$r" \
    "${rps[tp_tls]}" "${rps[ng_tls]}" "$(jq -n "${rps[tp_tls]} / ${rps[ng_tls]}")" \
    "${cpu[tp_tls]}" "${cpu[ng_tls]}" "$(jq -n "${cpu[tp_tls]} / ${cpu[ng_tls]}")" \
    "${rps[tp_plain]}" "${rps[ng_plain]}" "$(jq -n "${rps[tp_plain]} / ${rps[ng_plain]}")" \
    "${cpu[tp_plain]}" "${cpu[ng_plain]}" "${p99[tp_tls]}" "${p99[ng_tls]}"
done
