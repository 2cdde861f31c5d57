#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang-14 in build-fuzz/ and runs each one.
# Usage: scripts/fuzz.sh [--smoke | --runs N | --seconds S | --goal] [--jobs J] [--only TARGET]
#   --smoke      each target for a few seconds (CI: scripts/test.sh)
#   --runs N     each target for N inputs
#   --seconds S  each target for S seconds (the default: 60)
#   --goal       each target to issue 28's goal: 10 million inputs for the HTTP reader, the SSE
#                and NDJSON parsers and the stream decoders (GOAL_TARGETS), 1 million for the
#                rest (FUZZ_GOAL_BIG / FUZZ_GOAL_SMALL change them); goes on after a finding
#                and prints a table: target, executions, cov, ft, findings (full logs in
#                build-fuzz/logs/); with --seconds S as well, a target stops at S seconds
#                if it has not reached its goal by then (the table says which did)
#   --jobs J     J libFuzzer processes per target (-fork=J: they share the corpus; the runs
#                limit counts every job's inputs together). Default 1.
#   --only T     build and run target T alone (a name from fuzz/CMakeLists.txt: fuzz_config)
# Seeds come from the golden transcripts (tests/testdata/providers); what a target finds is
# kept in build-fuzz/corpus/<target>/ between runs, crashes in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=60)
only=""
seconds=""
goal=0
jobs=1
while (($#)); do
  case "$1" in
    --smoke) limit=(-max_total_time="${FUZZ_SMOKE_SECONDS:-4}") ;;
    --runs) limit=(-runs="$2"); shift ;;
    --seconds) limit=(-max_total_time="$2"); seconds="$2"; shift ;;
    --goal) goal=1 ;;
    --jobs) jobs="$2"; shift ;;
    --only) only="$2"; shift ;;
    *) echo "usage: $0 [--smoke | --runs N | --seconds S | --goal] [--jobs J] [--only TARGET]" >&2
       exit 2 ;;
  esac
  shift
done
# The targets whose goal is 10 million inputs; every other one has 1 million.
GOAL_TARGETS=" fuzz_http_read fuzz_http_response fuzz_sse_parser fuzz_ndjson_parser fuzz_openai_stream \
fuzz_anthropic_stream fuzz_gemini_stream fuzz_cohere_stream "
goal_runs() {
  if [[ "$GOAL_TARGETS" == *" $1 "* ]]; then echo "${FUZZ_GOAL_BIG:-10000000}"
  else echo "${FUZZ_GOAL_SMALL:-1000000}"; fi
}

dir=build-fuzz
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DTURNPIKE_FUZZ=ON -DTURNPIKE_UNITY_BUILD=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$dir" "${only:-fuzz_targets}"

# Seeds per target: the transcripts' files of the kind the target reads.
seeds_for() {
  case "$1" in
    fuzz_anthropic_request) ls tests/testdata/providers/anthropic/*/client_request.json ;;
    fuzz_chat_request) ls tests/testdata/providers/*/*/client_request.json \
      tests/testdata/providers/*/*/upstream_request.json ;;
    fuzz_anthropic_stream) ls tests/testdata/providers/*/*/upstream_stream.sse ;;
    fuzz_openai_stream) ls tests/testdata/providers/*/*/upstream_stream.sse ;;
    fuzz_gemini_stream) ls tests/testdata/providers/gemini/*/upstream_stream.sse ;;
    fuzz_cohere_stream) ls tests/testdata/providers/cohere/*/upstream_stream.sse ;;
    fuzz_search_dsl) ls fuzz/corpus/search_dsl/* ;;
    fuzz_search_bulk) ls fuzz/corpus/search_bulk/* ;;
    fuzz_http_read) ls fuzz/corpus/http_read/* ;;
    fuzz_http_response) ls fuzz/corpus/http_response/* ;;
    fuzz_http2_frames) ls fuzz/corpus/http2_frames/* ;;
    fuzz_gemini_request) ls tests/testdata/providers/gemini_client/*/client_request.json \
      tests/testdata/providers/gemini/*/upstream_request.json ;;
    fuzz_cohere_request) ls tests/testdata/providers/cohere_client/*/client_request.json \
      tests/testdata/providers/cohere/*/upstream_request.json ;;
    fuzz_responses_request) ls tests/testdata/providers/openai_responses/*/client_request.json \
      tests/testdata/providers/openai_responses/upstream_*/upstream_request.json ;;
    fuzz_sse_parser) ls tests/testdata/providers/*/*/*.sse fuzz/corpus/sse_parser/* ;;
    fuzz_ndjson_parser) ls tests/testdata/providers/*/*/*.ndjson fuzz/corpus/ndjson_parser/* \
      fuzz/corpus/search_bulk/* ;;
    fuzz_config) ls turnpike.yaml deploy/kubernetes/base/turnpike.yaml fuzz/corpus/config/* ;;
    fuzz_recording_decode) ls fuzz/corpus/recording_decode/* ;;
    fuzz_admin_body) ls fuzz/corpus/admin_body/* ;;
    fuzz_agent_json) ls fuzz/corpus/agent_json/* \
      tests/testdata/providers/openai_responses/*/client_request.json ;;
    fuzz_request_digest) ls tests/testdata/providers/*/*/client_request.json \
      fuzz/corpus/request_digest/* ;;
    fuzz_chat_accumulator) ls tests/testdata/providers/*/*openai*/upstream_stream.sse \
      tests/testdata/providers/anthropic/reverse_*/upstream_stream.sse \
      tests/testdata/providers/{anthropic,cohere,gemini,ollama}/*/client_stream.sse ;;
    *) ls tests/testdata/providers/*/*/*.json ;;  # a target added without seeds of its own
  esac
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$dir/crashes" "$dir/logs"
jobs_flag=()
((jobs > 1)) && jobs_flag=(-fork="$jobs" -ignore_crashes=0)
table=()
found=0
while read -r target; do
  [[ -z "$target" || ( -n "$only" && "$target" != "$only" ) ]] && continue
  corpus="$dir/corpus/$target"
  mkdir -p "$corpus"
  seeds_for "$target" | while read -r f; do cp -n "$f" "$corpus/$(echo "$f" | tr '/' '_')"; done
  ((goal)) && limit=(-runs="$(goal_runs "$target")" ${seconds:+-max_total_time="$seconds"})
  log="$dir/logs/$target.log"
  echo "fuzz: $target ${limit[*]} ${jobs_flag[*]}"
  started=$(date +%s)
  "$dir/fuzz/$target" "${limit[@]}" "${jobs_flag[@]}" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/$target-" "$corpus" >"$log" 2>&1 || true
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==|SUMMARY|Done)" "$log" || true
  # libFuzzer exits non-zero on a finding; the artifact says so whatever the exit code.
  findings=$(find "$dir/crashes" -name "$target-*" | wc -l)
  if ((findings)); then
    echo "fuzz: $target found: $(find "$dir/crashes" -name "$target-*" | tr '\n' ' ')" >&2
    found=1
    ((goal)) || exit 1
  fi
  # Executions: the final stats, else (-fork prints none) the last status line's count.
  # cov and ft: the last status line.
  execs=$(awk -F: '/^stat::number_of_executed_units/ {n += $4} END {print n + 0}' "$log")
  ((execs)) || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  reached=-
  ((goal)) && { ((${execs:-0} >= $(goal_runs "$target"))) && reached=yes || reached=no; }
  table+=("$(printf '%-24s %12s %7s %7s %9s %7s %5s' "$target" "${execs:-?}" "${cov:-?}" \
    "${ft:-?}" "$findings" "$(($(date +%s) - started))" "$reached")")
done < "$dir/fuzz_targets.txt"
printf '%-24s %12s %7s %7s %9s %7s %5s\n' target executions cov ft findings seconds goal
printf '%s\n' "${table[@]}"
((found)) && { echo "fuzz: a target found something (build-fuzz/crashes/)" >&2; exit 1; }
echo "fuzz: ${only:-every target} ran clean"
