#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: unit tests (ctest) and the
# integration tests (node --test: the real binary over loopback with official clients).
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan+UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test

dir=build
# Each target's files compiled in batches (cmake/unity.cmake): a clean build in about three
# quarters of the time. `cmake -B build -DTURNPIKE_UNITY_BUILD=OFF` for quicker incremental
# builds after.
args=(-DTURNPIKE_UNITY_BUILD=ON)
if [[ "${1:-}" == "--sanitize" ]]; then
  dir=build-asan
  args+=(-DTURNPIKE_SANITIZE=ON -DTURNPIKE_BUILD_BENCH=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
scripts/build.sh "$dir" "${args[@]}"

(cd "$dir" && ctest --output-on-failure -j2)
# The libFuzzer targets, a few seconds each (their own clang build in build-fuzz/; once).
if [[ "$dir" == build ]]; then scripts/fuzz.sh --smoke; fi

# npm ci wipes node_modules and installs it again (about a minute here): skipped when what is
# installed came from this very lockfile (CI's sanitizer run after the release one).
lock_sum=$(sha256sum tests/integration/package-lock.json | cut -d' ' -f1)
stamp=tests/integration/node_modules/.installed-from-lock
if [[ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ]]; then
  (cd tests/integration && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$stamp"
fi
# A test that hangs fails after 5 minutes (the slowest passes in ~12 s) instead of taking the
# rest of CI's time with it. A test file that needs an optional part (PostgreSQL, PgBouncer,
# redis-server, Qdrant's OpenAPI document) skips without it, and the parts missing are named at
# the end; under CI=true it fails instead (tests/integration/lib/requires.mjs).
skipped=$(mktemp)
trap 'rm -f "$skipped"' EXIT
rc=0
TURNPIKE_SKIPPED="$skipped" TURNPIKE_BIN="$PWD/$dir/src/app/turnpike" node --test \
  --test-concurrency=1 --test-timeout=300000 tests/integration/ || rc=$?
if [[ -s "$skipped" ]]; then
  echo "Skipped for want of a part of the suite:"
  sort -u "$skipped" | sed 's/^/  /'
fi
exit "$rc"
