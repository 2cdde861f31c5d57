#!/usr/bin/env bash
# Installs what building and testing Turnpike needs on Debian 12, skipping what is present.
# Usage: scripts/deps.sh [--test]   (--test adds the test-only packages)
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config lld
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsimdjson-dev libssl-dev libspdlog-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev libpq-dev libxxhash-dev libnghttp2-dev
  curl openssl
  jq)  # bench/pgo-train.sh, the training load of scripts/pgo-build.sh
if [[ "${1:-}" == "--test" ]]; then
  packages+=(nodejs npm nginx wrk clang-format iproute2 sqlite3 postgresql-15 pgbouncer
    redis-server clang-14 libfuzzer-14-dev libclang-rt-14-dev  # these three: scripts/fuzz.sh
    chromium  # the console's browser tests (puppeteer-core drives it; nothing downloads a browser)
    systemd)  # systemd-socket-activate: the restart test's socket-activation case
  # tests/deploy renders the Kubernetes manifests with kubectl's built-in kustomize; any kubectl
  # will do (Debian's kubernetes-client is the one installed when none is present).
  command -v kubectl >/dev/null || packages+=(kubernetes-client)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node may come from elsewhere than Debian's package (as on the CI image): accept any node >= 18.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
