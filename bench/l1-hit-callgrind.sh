#!/usr/bin/env bash
# Instructions per L1 hit (cache/l1_cache.cc), a base commit's against the work tree's, counted
# with callgrind (repeatable whatever else runs on the machine).
#
#   bench/l1-hit-callgrind.sh [BASE_COMMIT]   (default HEAD)
#
# Compiles one small loop (below) twice, against BASE's src/cache/{l1_cache,key,envelope} and
# against the work tree's, with the same flags (-O2): 1,024 keys over 8 tenants, 4 KB bodies,
# every lookup a hit, one thread. Each binary runs 100k and 300k lookups under callgrind; the
# difference over 200k is the cost of one hit (the setup cancels out). Prints both.
#
# Needs: g++, valgrind, libxxhash and OpenSSL headers (as the build does).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
base=${1:-HEAD}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/loop.cc" <<'CC'
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cache/l1_cache.h"

using namespace turnpike::cache;

int main(int argc, char** argv) {
  const long lookups = std::atol(argv[1]);
  constexpr int kKeys = 1024;
  constexpr int64_t kNow = 1'700'000'000'000;
  std::vector<CacheKey> keys;
  for (int i = 0; i < kKeys; ++i) {
    Digest128 digest{};
    digest[0] = static_cast<uint8_t>(i);
    digest[1] = static_cast<uint8_t>(i >> 8);
    keys.push_back(MakeKey("tenant-" + std::to_string(i % 8), "products", digest));
  }
  L1Cache l1({});
  for (const CacheKey& key : keys) {
    auto envelope = std::make_shared<Envelope>();
    envelope->body.assign(4096, 'x');
    envelope->expires_at_ms = kNow + 60'000;
    l1.Insert(key, envelope);
  }
  std::vector<HashedId> ids;
  for (const CacheKey& key : keys) ids.push_back(HashedId(key));
  long misses = 0;
  for (long n = 0; n < lookups; ++n) misses += l1.Find(ids[n % kKeys], 0, kNow) == nullptr;
  if (misses != 0) {
    std::fprintf(stderr, "%ld misses in the hit loop\n", misses);
    return 1;
  }
}
CC

for which in base tree; do
  mkdir -p "$dir/$which/cache"
  for f in l1_cache.cc l1_cache.h envelope.cc envelope.h key.cc key.h string_map.h; do
    if [[ $which == base ]]; then
      git show "$base:src/cache/$f" >"$dir/$which/cache/$f"
    else
      cp "src/cache/$f" "$dir/$which/cache/$f"
    fi
  done
  nice g++ -std=c++20 -O2 -DNDEBUG -I"$dir/$which" -Isrc -o "$dir/loop-$which" "$dir/loop.cc" \
    "$dir/$which/cache/l1_cache.cc" "$dir/$which/cache/key.cc" "$dir/$which/cache/envelope.cc" \
    -lxxhash -lcrypto -lpthread
done

ir_of() {  # ir_of BINARY LOOKUPS: instructions of the whole run
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "| L1 | instructions per hit |"
echo "|---|---|"
for which in base tree; do
  low=$(ir_of "$dir/loop-$which" 100000)
  high=$(ir_of "$dir/loop-$which" 300000)
  echo "| $which ($([[ $which == base ]] && git rev-parse --short "$base" || echo 'work tree')) | $(((high - low) / 200000)) |"
done
