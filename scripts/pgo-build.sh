#!/usr/bin/env bash
# A profile-guided build of the turnpike binary.
# Usage: scripts/pgo-build.sh [BUILD_DIR] [extra cmake args...]
#
# Two builds of one folder (default build-pgo), then BUILD_DIR/src/app/turnpike is the result:
#   1. instrumented (TURNPIKE_PGO=generate), the turnpike target only;
#   2. the training load, bench/pgo-train.sh, which serves with the instrumented binary (its
#      profile lands next to each object) and must answer every request;
#   3. optimised with that profile and link-time optimisation (TURNPIKE_PGO=use, TURNPIKE_LTO;
#      linked with GNU ld, which GCC's link-time optimiser needs).
# About twice a plain build's time (on 2 cores: two builds of about 10 minutes, 30 seconds of
# training; the second's link is most of its time). The container image (deploy/Dockerfile) is
# built this way; what it buys is in docs/BENCHMARKS.md ("Profile-guided builds and huge pages
# for the heap"). The tests' and micro-benchmarks' binaries are not built here.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-pgo}"
shift || true
common=(-G Ninja -DTURNPIKE_BUILD_TESTS=OFF -DTURNPIKE_BUILD_BENCH=OFF "$@")
# A profile from an earlier training would be merged into this one's: none is kept.
[[ -d $dir ]] && find "$dir" -name '*.gcda' -delete
cmake -S . -B "$dir" "${common[@]}" -DTURNPIKE_PGO=generate -DTURNPIKE_LTO=OFF >/dev/null
ninja -C "$dir" turnpike
bench/pgo-train.sh "$dir/src/app/turnpike"
cmake -S . -B "$dir" "${common[@]}" -DTURNPIKE_PGO=use -DTURNPIKE_LTO=ON >/dev/null
ninja -C "$dir" turnpike
echo "profile-guided build: $dir/src/app/turnpike"
