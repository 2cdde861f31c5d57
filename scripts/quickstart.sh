#!/usr/bin/env bash
# Installs what is missing, builds, and starts Turnpike (port 8080) in front of the built-in
# mock provider (port 9000), then streams one reply with curl. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
bin=build/src/app/turnpike

"$bin" mock-provider --listen 127.0.0.1:9000 --tokens 12 --inter-token 40ms &
mock=$!
"$bin" serve --config turnpike.yaml &
gateway=$!
trap 'kill $gateway $mock 2>/dev/null; wait 2>/dev/null' EXIT INT TERM
for _ in $(seq 50); do curl -sf localhost:8080/readyz >/dev/null && break; sleep 0.1; done

echo; echo "$ curl -N localhost:8080/v1/chat/completions -H 'content-type: application/json' -d '{\"model\":\"mock-gpt\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'"
curl -sN localhost:8080/v1/chat/completions -H 'content-type: application/json' \
  -d '{"model":"mock-gpt","stream":true,"messages":[{"role":"user","content":"Hello"}]}'
echo; echo "Turnpike is running on localhost:8080 (mock provider on :9000). Ctrl-C to stop."
wait $gateway
