#!/usr/bin/env bash
# Instructions per request that governance adds, counted with callgrind (repeatable whatever
# else runs on the machine), split by thread: the worker (on the request path) and the store
# thread (the call log's SQLite writes, off the request path).
#
#   bench/governance-callgrind.sh [--requests 10000] [--conns 8] [--log-store on|off]
#                                 [--cache-sim] [--off-without-key] [--stream] [--llm-cache]
#                                 [--body FILE] [--nginx] [--http2 STREAMS] [--upstream-http2]
#
# Runs the same non-streaming load twice through one Turnpike (1 worker) under
# `valgrind --tool=callgrind --separate-threads=yes`: governance off, then on (a key with a plan
# budget, RPM and TPM limits, call log on). As in governance-cell.sh, both get the same
# requests, the key's `Authorization` header included (the off instance ignores it);
# --off-without-key sends it to the governed instance only; --stream makes every request a
# stream (`turnpike bench --stream-every 1`). --llm-cache compares the LLM response cache
# instead: both instances governed, the second with `llm_cache: {enabled: true}`, and every
# request a different body (`turnpike bench --distinct`), so that each one is a miss that
# leads its call and stores its answer (--body FILE: their JSON body, default one short user
# message). --nginx measures nginx (bench/nginx.conf.in, one
# process: `master_process off`, so the process under callgrind is its worker) in place of the
# ungoverned instance, with the same client, requests and mock: the one-proxy-hop limit that
# the governed worker's count is held against. --cache-sim also simulates the
# caches and prints first-level data-cache and last-level misses per request (D1mr + D1mw,
# DLmr + DLmw): memory traffic, which instruction counts do not show. --http2 STREAMS: the
# client speaks cleartext HTTP/2 (prior knowledge) with STREAMS concurrent streams on each of
# the --conns connections (`turnpike bench --http2`); Turnpike with `server.http2`, nginx with
# `listen ... http2`. --upstream-http2: Turnpike calls the mock over HTTP/2 (the deployment's
# `http2: true`; the mock serves h2 by prior knowledge). Instrumentation is switched on only
# for the measured requests (after 2,000 warm-up requests). Prints instructions per request
# per thread. Note: valgrind hides SHA-NI from OpenSSL, so the key hash counts ~6k
# instructions here against ~85 ns natively (see docs/BENCHMARKS.md).
#
# Needs: the turnpike binary ($TURNPIKE, default build/src/app/turnpike; $MOCK for the mock
# provider, default the same), valgrind, jq.
set -euo pipefail
TURNPIKE=${TURNPIKE:-build/src/app/turnpike}
# The mock provider: $MOCK, default $TURNPIKE. Pin it when comparing two binaries, so that both
# read the same upstream bytes.
MOCK=${MOCK:-$TURNPIKE}
requests=10000 conns=8 log_store=on cache_sim=no off_key=yes llm_cache=no against_nginx=no body=''
NGINX=${NGINX:-nginx}
stream_args=()
h2_args=()
h2_line=''
upstream_h2=no
while (($#)); do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --conns) conns=$2; shift 2 ;;
    --log-store) log_store=$2; shift 2 ;;
    --cache-sim) cache_sim=yes; shift ;;
    --off-without-key) off_key=no; shift ;;
    --stream) stream_args=(--stream-every 1); shift ;;
    --llm-cache) llm_cache=yes; shift ;;
    --body) body=$2; shift 2 ;;
    --nginx) against_nginx=yes; shift ;;
    --upstream-http2) upstream_h2=yes; shift ;;
    --http2) h2_args=(--http2 --streams-per-conn "$2") h2_line=', http2: true'; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; }
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive

"$MOCK" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

# total_in FILE [EVENT...]: the count of EVENT (default Ir) recorded in one thread's callgrind
# file; several events are summed (total_in F D1mr D1mw).
total_in() {
  local f=$1; shift
  awk -v want="${*:-Ir}" '
    /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
    /^totals:/ { n = split(want, w, " "); s = 0; for (j = 1; j <= n; j++) s += $(col[w[j]]); print s }' "$f"
}

measure() {  # measure off|on
  local which=$1 gov=false cache_line=''
  [[ $which == on || $llm_cache == yes ]] && gov=true
  [[ $which == on && $llm_cache == yes ]] && cache_line='llm_cache: {enabled: true}'
  cat >"$dir/$which.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""$h2_line}
governance: {enabled: $gov}
$cache_line
store: {path: $dir/$which.db}
call_log: {log_store: $log_store}
$(bench_models_yaml | if [[ $upstream_h2 == yes ]]; then sed 's#/v1"}#/v1", http2: true}#'; else cat; fi)
YAML
  local port pid
  if [[ $which == nginx ]]; then
    port=$(bench_nginx_conf 1 "$mock_port" off)
    if [[ -n $h2_line ]]; then
      sed -i "s/listen 127.0.0.1:$port reuseport;/listen 127.0.0.1:$port reuseport http2;/" \
        "$dir/nginx/nginx.conf"
    fi
    valgrind --tool=callgrind --separate-threads=yes --cache-sim="$cache_sim" \
      --instr-atstart=no --callgrind-out-file="$dir/cg.$which" \
      "$NGINX" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" \
      >"$dir/$which.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_listening "$port"
  else
    TURNPIKE_ADMIN_TOKEN=bench valgrind --tool=callgrind --separate-threads=yes \
      --cache-sim="$cache_sim" --instr-atstart=no --callgrind-out-file="$dir/cg.$which" \
      "$TURNPIKE" serve --config "$dir/$which.yaml" >"$dir/$which.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    port=$(port_of "$dir/$which.log" "turnpike listening on" 60)
  fi
  # The off instance has no admin API and ignores the key: it gets one of the same shape.
  local key=tp-aaaaaaaaaaaa-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
  if [[ $gov == true ]]; then
    export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=http://127.0.0.1:$port
    key=$(bench_key)
  fi
  local headers=(-H "Authorization: Bearer $key")
  local measured_args=()
  if [[ $llm_cache == yes ]]; then
    # Warm-up and measured runs each cycle through their own bodies (the measured ones say
    # "Say hello!"), so no measured request repeats an earlier one.
    headers+=(--distinct "$((requests > 2000 ? requests : 2000))")
    if [[ -n $body ]]; then
      cp "$body" "$dir/measured.json"
    else
      printf '%s' '{"model":"bench-model","messages":[{"role":"user","content":"Say hello!"}],"max_tokens":20,"stream":false}' >"$dir/measured.json"
    fi
    measured_args=(--body "$dir/measured.json")
  fi
  [[ $which == off && $off_key == no ]] && headers=()
  local url=http://127.0.0.1:$port/v1/chat/completions
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests 2000 -d 600 -q "${headers[@]}" \
    "${stream_args[@]+"${stream_args[@]}"}" "${h2_args[@]+"${h2_args[@]}"}" \
    >/dev/null 2>"$dir/warmup.err"
  callgrind_control -i on "$pid" >/dev/null 2>&1
  "$TURNPIKE" bench --url "$url" -c "$conns" --requests "$requests" -d 600 -q "${headers[@]}" \
    "${measured_args[@]+"${measured_args[@]}"}" \
    "${stream_args[@]+"${stream_args[@]}"}" "${h2_args[@]+"${h2_args[@]}"}" \
    --json "$dir/$which.json" >/dev/null 2>"$dir/$which.err"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  local ok; ok=$(jq .requests_ok "$dir/$which.json")
  [[ $ok == "$requests" ]] || echo "warning: $which: $ok of $requests requests ok" >&2
  # The worker: of the threads that run an io_context, the busiest (others run one too).
  local f worker_file='' store_file='' worker_ir=0 ir
  for f in "$dir"/cg."$which".1-*; do
    # The store thread by its loop, or (a link-time optimised build inlines the loop) by the
    # SQLite statements only it runs while requests are measured.
    if grep -q "StoreThread::Loop\|sqlite3VdbeExec" "$f"; then store_file=$f
    elif [[ $which == nginx ]] || grep -q "scheduler::run" "$f"; then
      ir=$(total_in "$f" Ir)
      if ((ir > worker_ir)); then worker_file=$f worker_ir=$ir; fi
    fi
  done
  per_request() {  # per_request FILE EVENT...: the events per measured request (0: no file)
    [[ -n $1 ]] || { echo 0; return; }
    local f=$1; shift
    jq -n "$(total_in "$f" "$@") / $requests"
  }
  local row
  row=$(printf '| %s | %.0f | %.0f |' "$which" "$(per_request "$worker_file" Ir)" \
    "$(per_request "$store_file" Ir)")
  if [[ $cache_sim == yes ]]; then
    row+=$(printf ' %.1f / %.1f | %.1f / %.1f |' \
      "$(per_request "$worker_file" D1mr D1mw)" "$(per_request "$worker_file" DLmr DLmw)" \
      "$(per_request "$store_file" D1mr D1mw)" "$(per_request "$store_file" DLmr DLmw)")
  fi
  echo "$row"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

if [[ $llm_cache == yes ]]; then
  echo "(governed both; 'off': no llm_cache; 'on': llm_cache enabled, every request a miss)"
fi
if [[ $cache_sim == yes ]]; then
  echo "| governance | worker instructions per request | store thread instructions | worker D1 / LL misses per request | store thread D1 / LL misses |"
  echo "|---|---|---|---|---|"
else
  echo "| governance | worker instructions per request | store thread instructions per request |"
  echo "|---|---|---|"
fi
if [[ $against_nginx == yes ]]; then
  measure nginx
else
  measure off
fi
measure on
