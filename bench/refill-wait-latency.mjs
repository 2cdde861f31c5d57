// The latency a request pays when it finds its leased budget slice empty and waits for the
// refill (redis/lease_counters.h, core/governance_filter.h), against a warm request of the same
// tenant. One replica (SQLite store, 2 workers) over a throwaway redis-server and the mock
// provider, all on loopback. Each of N tenants (own plan with a budget) sends one request with an
// empty slice (cold: waits for one refill) then one warm request, sequentially on one kept-alive
// connection. Prints the medians and p90s of both and of their difference. Run by hand, not in CI:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/refill-wait-latency.mjs [tenants]
// Alternate two binaries to compare them (docs/BENCHMARKS.md has the numbers and the command).
import { startMock, startGateway, gatewayConfig, stopAll } from '../tests/integration/lib/harness.mjs';
import { startRedis, stopRedis } from '../tests/integration/lib/redis.mjs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const TOKEN = 'bench-admin-token';
const TENANTS = Number(process.argv[2] ?? 200);

const mock = await startMock(['--tokens', '16']);
const redis = await startRedis();
const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-refill-wait-'));
const gw = await startGateway(gatewayConfig({
  models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
  governance: { enabled: true, reconcile_interval: '0s' },
  store: { path: path.join(dir, 'turnpike.db') },
  call_log: { flush_interval: '50ms' },
  prices: { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } },
}) + `redis:\n  url: ${redis.url}\n  refill_wait: 500ms\n`, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });

async function admin(method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${route}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function timedChat(secret) {
  const start = process.hrtime.bigint();
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 16 }),
  });
  await r.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 200) throw new Error(`status ${r.status}`);
  return ms;
}

const secrets = [];
for (let i = 0; i < TENANTS; ++i) {
  await admin('PUT', `plans/p${i}`, { monthly_budget_usd: 1000 });
  await admin('POST', 'tenants', { id: `t${i}`, plan: `p${i}` });
  secrets.push((await admin('POST', 'keys', { tenant: `t${i}`, name: 'bench' })).key);
}
// Warm the connection (and the process) on a tenant that is not measured.
const warmup = secrets.pop();
for (let i = 0; i < 50; ++i) await timedChat(warmup);

const cold = [];
const warm = [];
const added = [];
for (const secret of secrets) {
  const c = await timedChat(secret);
  const w = await timedChat(secret);
  cold.push(c);
  warm.push(w);
  added.push(c - w);
}
const metrics = await (await fetch(`${gw.url}/metrics`)).text();
const wakeups = /^turnpike_budget_lease_wakeups_total (\S+)$/m.exec(metrics)?.[1] ?? 'absent';
const timeouts = /^turnpike_budget_lease_wait_timeouts_total (\S+)$/m.exec(metrics)?.[1] ?? 'absent';
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];
const f = (x) => x.toFixed(3);
console.log(`${process.env.TURNPIKE_BIN ?? 'build/src/app/turnpike'}: ${secrets.length} tenants; ` +
  `cold (waited) p50 ${f(q(cold, 0.5))} ms p90 ${f(q(cold, 0.9))}; warm p50 ${f(q(warm, 0.5))} ms p90 ${f(q(warm, 0.9))}; ` +
  `added p50 ${f(q(added, 0.5))} ms p90 ${f(q(added, 0.9))}; wakeups ${wakeups}, wait timeouts ${timeouts}`);
await stopAll();
await stopRedis(redis);
