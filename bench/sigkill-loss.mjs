// What a SIGKILL mid-load loses (docs/RELIABILITY.md, "SIGKILL mid-load"). One gateway (SQLite
// store, 2 workers, governance on, the call log at its defaults unless given) over the mock
// provider; C clients send requests back to back (each costs 0.016 USD: 16 output tokens at
// 1,000 USD/M); after S seconds the gateway is SIGKILLed while they run. A new gateway on the
// same database then reports the persisted spend; requests charged = spend / 0.016 (the call
// log's sum equals the spend, both written in one transaction: governance.test.mjs checks it).
// Lost = answered 200 before the kill - charged. Run by hand, not in CI:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/sigkill-loss.mjs [clients] [seconds] [flush_interval] [runs]
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, sleep, waitExit } from '../tests/integration/lib/harness.mjs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const TOKEN = 'bench-admin-token';
const CLIENTS = Number(process.argv[2] ?? 32);
const SECONDS = Number(process.argv[3] ?? 3);
const FLUSH = process.argv[4] ?? '100ms';
const RUNS = Number(process.argv[5] ?? 5);
const COST_MICROS = 16000;

const mock = await startMock(['--tokens', '16', '--workers', '2']);

async function admin(gw, method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return r.json();
}

async function run() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-sigkill-'));
  const cfg = gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: FLUSH },
    prices: { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } },
  });
  const env = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
  let gw = await startGateway(cfg, env);
  await admin(gw, 'PUT', 'plans/p', {});
  await admin(gw, 'POST', 'tenants', { id: 't1', plan: 'p' });
  const key = (await admin(gw, 'POST', 'keys', { tenant: 't1' })).key;
  let answered = 0;
  let failed = 0;
  let stop = false;
  const loops = Array.from({ length: CLIENTS }, async () => {
    while (!stop) {
      try {
        const r = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: chatBody({ max_tokens: 16 }),
        });
        await r.text();
        if (r.status === 200) answered++;  // a whole answer read after the kill was sent before it
      } catch {
        failed++;  // cut by the kill: never answered
      }
    }
  });
  await sleep(SECONDS * 1000);
  const rate = answered / SECONDS;
  gw.kill('SIGKILL');
  stop = true;
  await Promise.all(loops);
  await waitExit(gw);
  gw = await startGateway(cfg, env);
  const spend = (await admin(gw, 'GET', 'spend?tenant=t1')).data.find((s) => s.scope === 'tenant');
  const charged = Math.round(spend.spent_usd * 1e6) / COST_MICROS;
  gw.kill('SIGTERM');
  await waitExit(gw);
  return { answered, charged, lost: answered - charged, cut: failed, rate };
}

console.log(`clients ${CLIENTS}, ${SECONDS} s of load, call_log.flush_interval ${FLUSH}`);
for (let i = 0; i < RUNS; ++i) {
  const r = await run();
  console.log(`run ${i + 1}: answered ${r.answered} (${Math.round(r.rate)}/s), charged ${r.charged}, ` +
    `lost ${r.lost} rows (${(r.lost / r.rate * 1000).toFixed(0)} ms of traffic), cut in flight ${r.cut}`);
}
await stopAll();
