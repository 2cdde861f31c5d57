#!/usr/bin/env bash
# Instructions per request over TLS against cleartext, Turnpike against nginx: each proxy runs
# one worker under `valgrind --tool=callgrind` (instrumentation on only while measured), in
# front of the same mock provider over cleartext, loaded by wrk (one thread, $conns keep-alive
# connections, the bench body) for a fixed time; the instructions of the worker thread (nginx:
# its one process, master_process off) are divided by the requests wrk completed.
#
#   bench/tls-callgrind.sh [--seconds 10] [--conns 8] [--keep DIR]
#                          [--targets tp_tls,tp_plain,ng_tls,ng_plain,tp_upstream_tls]
#
# Targets: tp_* Turnpike, ng_* nginx, *_tls clients over TLS, *_plain over cleartext;
# tp_upstream_tls: clients over cleartext, Turnpike to the provider over TLS (an nginx, not
# measured, terminating TLS in front of the mock; tls_verify off, keep-alive both hops).
#
# Governance off (this isolates what TLS costs; bench/governance-callgrind.sh measures
# governance). TLS: a self-signed ECDSA P-256 certificate made here, TLS 1.3 on both
# (TLS_AES_256_GCM_SHA384), HTTP/1.1. Every connection's handshake falls in the warm-up, so
# the counts are per request on warm connections. valgrind reports no SHA-NI to OpenSSL; AES-NI
# and PCLMUL it does, on both sides alike.
# Needs: turnpike ($TURNPIKE; the mock from $MOCK, default the same), nginx, wrk, openssl,
# valgrind, jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
MOCK=${MOCK:-$TURNPIKE}
NGINX=${NGINX:-nginx}
seconds=10 conns=8 targets=tp_tls,tp_plain,ng_tls,ng_plain,tp_upstream_tls keep=''
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;  # copy the callgrind files there, for callgrind_annotate
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_workdir
bench_exclusive

bench_tls_cert
"$MOCK" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

cat >"$dir/w.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"Say hello."}],"max_tokens":20,"stream":false}'
wrk.headers["Content-Type"] = "application/json"
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('JSON {"requests":%d,"failed":%d}\n', s.requests,
    e.connect + e.read + e.write + e.timeout + e.status))
end
LUA

# start_upstream_tls: an nginx (not measured) terminating TLS in front of the mock, on
# $upstream_tls_port, for tp_upstream_tls.
start_upstream_tls() {
  upstream_tls_port=$(free_port)
  bench_nginx_tls_conf "$dir/up" 1 off \
    "  server { listen 127.0.0.1:$upstream_tls_port ssl; location / { proxy_pass http://mock; } }"
  "$NGINX" -p "$dir/up" -c "$dir/up/nginx.conf" -e "$dir/up/error.log" >/dev/null 2>&1 &
  pids+=($!)
  wait_listening "$upstream_tls_port"
}

total_ir() { awk '/^events:/ { for (i = 2; i <= NF; i++) if ($i == "Ir") c = i } /^totals:/ { print $c }' "$1"; }

measure() {  # measure tp_tls|tp_plain|ng_tls|ng_plain
  local which=$1 port pid scheme=http
  [[ $which == tp_tls || $which == ng_tls ]] && scheme=https
  if [[ $which == ng_* ]]; then
    port=$(free_port)
    local ssl=''
    [[ $which == ng_tls ]] && ssl=" ssl"
    bench_nginx_tls_conf "$dir/$which" 1 off \
      "  server { listen 127.0.0.1:$port$ssl; location / { proxy_pass http://mock; } }"
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/cg.$which" \
      "$NGINX" -p "$dir/$which" -c "$dir/$which/nginx.conf" -e "$dir/$which/error.log" \
      >"$dir/$which.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_listening "$port"
  else
    local tls='' models
    [[ $which == tp_tls ]] && tls=", tls: {cert_file: $dir/cert.pem, key_file: $dir/key.pem}"
    models=$(bench_models_yaml)
    if [[ $which == tp_upstream_tls ]]; then
      local to="https://localhost:$upstream_tls_port/v1\", tls_verify: false"
      models=$(sed "s#http://127.0.0.1:$mock_port/v1\"#$to#" <<<"$models")
    fi
    cat >"$dir/$which.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""$tls}
governance: {enabled: false}
store: {path: $dir/$which.db}
$models
YAML
    valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no \
      --callgrind-out-file="$dir/cg.$which" \
      "$TURNPIKE" serve --config "$dir/$which.yaml" >"$dir/$which.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    port=$(port_of "$dir/$which.log" "turnpike listening on" 60)
  fi
  local url=$scheme://127.0.0.1:$port/v1/chat/completions
  wrk -t1 -c"$conns" -d3s -s "$dir/w.lua" "$url" >/dev/null 2>&1
  callgrind_control -i on "$pid" >/dev/null 2>&1
  local out; out=$(wrk -t1 -c"$conns" -d"${seconds}s" -s "$dir/w.lua" "$url" 2>&1)
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  local json requests failed
  json=$(grep '^JSON ' <<<"$out" | cut -c6-)
  requests=$(jq .requests <<<"$json") failed=$(jq .failed <<<"$json")
  [[ $failed == 0 ]] || echo "warning: $which: $failed failed" >&2
  # The worker: the busiest of the dumped threads (nginx: its one process).
  local f ir best=0 best_file=''
  for f in "$dir"/cg."$which"*; do
    ir=$(total_ir "$f")
    if ((ir > best)); then best=$ir best_file=$f; fi
  done
  # The connections' handshakes fall in the window (each wrk run opens its own): their
  # SSL_do_handshake, inclusive, is taken out, so that the count is per request on a warm
  # connection whatever the number of requests the window held.
  local handshakes
  handshakes=$(callgrind_annotate --inclusive=yes --threshold=100 "$best_file" 2>/dev/null |
    awk '!seen && /:SSL_do_handshake / { gsub(",", "", $1); print $1; seen = 1 }')
  handshakes=${handshakes:-0}
  printf '| %s | %d | %.0f | %.0f |\n' "$which" "$requests" "$(jq -n "$best / $requests")" \
    "$(jq -n "($best - $handshakes) / $requests")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  [[ -z $keep ]] || { mkdir -p "$keep"; cp "$dir"/cg."$which"* "$keep"/; }
}

echo "| target | requests | worker instructions per request | without the handshakes |"
echo "|---|---|---|---|"
IFS=, read -ra list <<<"$targets"
[[ ,$targets, == *,tp_upstream_tls,* ]] && start_upstream_tls
for t in "${list[@]}"; do measure "$t"; done
