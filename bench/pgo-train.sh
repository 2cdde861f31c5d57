#!/usr/bin/env bash
# The training load of a profile-guided build (scripts/pgo-build.sh): the requests whose code
# the profile lays out together. Runs the gateway binary it is given (instrumented, in a PGO
# build) against the mock provider, with governance and the call log on, through these doors
# and paths, each for a few seconds of `turnpike bench`:
#   - OpenAI chat completions, whole and streamed, at 8, 32, 50 and 1,000 connections (200 where
#     the open-files limit is under 8,192);
#   - the same over HTTP/2 (cleartext, prior knowledge), whole and streamed;
#   - Anthropic messages and OpenAI responses, whole and streamed (translated to the mock's
#     OpenAI dialect);
#   - agent turns (a conversation per connection);
#   - the LLM response cache (a second gateway with `llm_cache` on): misses and hits.
# Not in it: the search door, the other client dialects, TLS, fleet mode, the admin API beyond
# provisioning. Their code is compiled as without a profile (-fprofile-partial-training), only
# not laid out by use.
#
#   bench/pgo-train.sh [--seconds 2] GATEWAY [TOOL]
#
# GATEWAY serves; TOOL (default GATEWAY) runs the mock provider, the load and the admin
# commands. When both are one instrumented binary, the TOOL processes write their profile under
# a directory that is then removed (GCOV_PREFIX), so that only the gateway's runs count.
# --seconds is each step's length; CI's smoke of this script runs it with an uninstrumented
# binary and --seconds 0.3. Every step must answer without a failed request, or the script
# fails (and keeps its logs).
#
# Needs: jq.
set -euo pipefail
seconds=2
if [[ ${1:-} == --seconds ]]; then seconds=$2; shift 2; fi
GATEWAY=${1:?usage: bench/pgo-train.sh [--seconds S] GATEWAY [TOOL]}
TOOL=${2:-$GATEWAY}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TURNPIKE=$TOOL
source "$SCRIPT_DIR/lib.sh"
bench_workdir
# Files for 1,000 client connections, their upstream ones and the mock's; with fewer allowed,
# the many-connection steps run 200.
if (($(ulimit -Sn) < 8192)); then ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true; fi
many=1000
(($(ulimit -Sn) >= 8192)) || many=200
# Every process but the gateways writes its profile (if any) here, removed at the end.
export GCOV_PREFIX=$dir/discard

"$TOOL" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
pids+=($!)
mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")

gateway() {  # gateway NAME [EXTRA YAML LINE]: starts one; sets url
  cat >"$dir/$1.yaml" <<YAML
server: {listen: 127.0.0.1:0, workers: 2, access_log: "", http2: true}
governance: {enabled: true}
store: {path: $dir/$1.db}
call_log: {log_store: on}
${2:-}
$(bench_models_yaml)
YAML
  env -u GCOV_PREFIX TURNPIKE_ADMIN_TOKEN=bench "$GATEWAY" serve --config "$dir/$1.yaml" \
    >"$dir/$1.log" 2>&1 &
  pids+=($!)
  url=http://127.0.0.1:$(port_of "$dir/$1.log" "turnpike listening on" 30)
  export TURNPIKE_ADMIN_TOKEN=bench TURNPIKE_URL=$url
}

failures=0
# load NAME PATH [bench options...]: one step; counts its failed requests. The load driver checks
# a stream for OpenAI's closing `data: [DONE]`, which Anthropic's and the Responses API's streams
# do not send: for them (NO_DONE=1) that one failure kind is not counted.
load() {
  local name=$1 path=$2; shift 2
  "$TOOL" bench --url "$url$path" -d "$seconds" -q -H "Authorization: Bearer $key" \
    --json "$dir/$name.json" "$@" >/dev/null 2>"$dir/$name.err" || true
  local ok failed
  ok=$(jq -r '.requests_ok // 0' "$dir/$name.json" 2>/dev/null || echo 0)
  failed=$(jq -r --arg no_done "${NO_DONE:-0}" \
    '.requests_failed - (if $no_done == "1" then .failures.stream_missing_done else 0 end)' \
    "$dir/$name.json" 2>/dev/null || echo 1)
  printf '%-24s %8s ok %6s failed\n' "$name" "$ok" "$failed"
  if [[ $ok == 0 || $failed != 0 ]]; then failures=$((failures + 1)); fi
}

gateway main
key=$(bench_key)
body() { printf '%s' "$2" >"$dir/$1.json"; echo "$dir/$1.json"; }
messages=$(body messages '{"model":"bench-model","max_tokens":20,"stream":false,
  "messages":[{"role":"user","content":"Say hello!"}]}')
responses=$(body responses '{"model":"bench-model","max_output_tokens":20,"stream":false,
  "input":"Say hello!"}')
load chat-50 /v1/chat/completions -c 50
load chat-stream-32 /v1/chat/completions -c 32 --stream-every 1
load chat-mixed-8 /v1/chat/completions -c 8 --stream-every 2
load chat-many /v1/chat/completions -c "$many"
load chat-stream-many /v1/chat/completions -c "$many" --stream-every 1
load h2-chat /v1/chat/completions -c 10 --http2 --streams-per-conn 10
load h2-chat-stream /v1/chat/completions -c 10 --http2 --streams-per-conn 10 --stream-every 1
NO_DONE=1 load messages /v1/messages -c 16 --body "$messages" --stream-every 2
NO_DONE=1 load responses /v1/responses -c 16 --body "$responses" --stream-every 2
agent=$("$TOOL" admin --json agents create --tenant bench --model bench-model \
  --instructions "You are brief." | jq -r .id)
load agent-turns /v1/responses -c 8 --agent "$agent" --turns 5

gateway cache 'llm_cache: {enabled: true}'
key=$(bench_key)
load cache-misses /v1/chat/completions -c 16 --distinct 1000000 --stream-every 2
load cache-hits /v1/chat/completions -c 16 --distinct 4 --stream-every 2

# The gateways exit cleanly (SIGTERM), so an instrumented one writes its profile.
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
rm -rf "$dir/discard"
if ((failures > 0)); then
  echo "pgo-train: $failures steps had failed requests (logs: $dir/*.err, $dir/*.log)" >&2
  trap - EXIT
  exit 1
fi
echo "pgo-train: every step answered"
