#!/usr/bin/env bash
# Installs what is missing, builds, and starts Turnpike (port 8080) in front of the built-in
# mock provider (port 9000), creates a demo plan, tenant and API key with `turnpike admin`,
# then streams one reply with curl using that key. Ctrl-C stops both.
# The admin token is $TURNPIKE_ADMIN_TOKEN, or a random one printed below.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
bin=build/src/app/turnpike
export TURNPIKE_ADMIN_TOKEN="${TURNPIKE_ADMIN_TOKEN:-$(openssl rand -hex 16 2>/dev/null || date +%s%N)}"

"$bin" mock-provider --listen 127.0.0.1:9000 --tokens 12 --inter-token 40ms &
mock=$!
"$bin" serve --config turnpike.yaml &
gateway=$!
trap 'kill $gateway $mock 2>/dev/null; wait 2>/dev/null' EXIT INT TERM
for _ in $(seq 50); do curl -sf localhost:8080/readyz >/dev/null && break; sleep 0.1; done

# A plan with a 5 USD monthly budget, a tenant on it and a key for it (the key is shown once).
"$bin" admin plans put demo --budget 5 --rpm 600 >/dev/null
"$bin" admin tenants create demo --plan demo >/dev/null 2>&1 || true  # exists from an earlier run
key=$("$bin" admin --json keys create --tenant demo --name quickstart | sed -n 's/.*"key":"\(tp-[^"]*\)".*/\1/p')

echo; echo "$ curl -N localhost:8080/v1/chat/completions -H \"authorization: Bearer $key\" -H 'content-type: application/json' -d '{\"model\":\"mock-gpt\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'"
curl -sN localhost:8080/v1/chat/completions -H "authorization: Bearer $key" \
  -H 'content-type: application/json' \
  -d '{"model":"mock-gpt","stream":true,"messages":[{"role":"user","content":"Hello"}]}'
echo; echo "Turnpike is running on localhost:8080 (mock provider on :9000). Ctrl-C to stop."
echo "API key: $key"
echo "Admin token: TURNPIKE_ADMIN_TOKEN=$TURNPIKE_ADMIN_TOKEN (try: build/src/app/turnpike admin calls)"
wait $gateway
