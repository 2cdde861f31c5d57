#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang-14 in build-fuzz/ and runs each one.
# Usage: scripts/fuzz.sh [--smoke | --runs N | --seconds S] [--only TARGET]
#   --smoke      each target for a few seconds (CI: scripts/test.sh)
#   --runs N     each target for N inputs
#   --seconds S  each target for S seconds (the default: 60)
#   --only T     build and run target T alone (a name from fuzz/CMakeLists.txt: fuzz_config)
# Seeds come from the golden transcripts (tests/testdata/providers); what a target finds is
# kept in build-fuzz/corpus/<target>/ between runs, crashes in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=60)
only=""
while (($#)); do
  case "$1" in
    --smoke) limit=(-max_total_time="${FUZZ_SMOKE_SECONDS:-4}") ;;
    --runs) limit=(-runs="$2"); shift ;;
    --seconds) limit=(-max_total_time="$2"); shift ;;
    --only) only="$2"; shift ;;
    *) echo "usage: $0 [--smoke | --runs N | --seconds S] [--only TARGET]" >&2; exit 2 ;;
  esac
  shift
done

dir=build-fuzz
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DTURNPIKE_FUZZ=ON \
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
mkdir -p "$dir/crashes"
while read -r target; do
  [[ -z "$target" || ( -n "$only" && "$target" != "$only" ) ]] && continue
  corpus="$dir/corpus/$target"
  mkdir -p "$corpus"
  seeds_for "$target" | while read -r f; do cp -n "$f" "$corpus/$(echo "$f" | tr '/' '_')"; done
  echo "fuzz: $target ${limit[*]}"
  "$dir/fuzz/$target" "${limit[@]}" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/$target-" "$corpus" 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==|SUMMARY|Done)" || true
  # libFuzzer exits non-zero on a finding; the pipe hides it, the artifact does not.
  if ls "$dir/crashes/$target-"* >/dev/null 2>&1; then
    echo "fuzz: $target found a crash: $(ls "$dir/crashes/$target-"*)" >&2
    exit 1
  fi
done < "$dir/fuzz_targets.txt"
echo "fuzz: ${only:-every target} ran clean"
