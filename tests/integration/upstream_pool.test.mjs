// The upstream pool follows the load: after a burst of concurrent requests, a second burst of
// the same size reuses the connections the first opened (turnpike_upstream_connects_total does
// not grow), although more are in flight per worker than the old fixed bound of 64 idle; and
// with upstream.pool.max_active_per_origin the gateway opens no more than the cap and queues
// the rest (turnpike_upstream_queued_total), every request still answered.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, metricsOf } from './lib/harness.mjs';

after(stopAll);

const kBurst = 160;  // ~80 per worker of the two: more than the old 64 idle per worker
// Client keep-alive longer than the test, so that the second burst rides the same client
// connections (and so the same gateway workers) as the first.
const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
after(() => agent.close());

async function burst(gw, n) {
  const statuses = await Promise.all(Array.from({ length: n }, async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(), dispatcher: agent,
    });
    await r.arrayBuffer();
    return r.status;
  }));
  assert.deepEqual(statuses.filter((s) => s !== 200), []);
}

test('a second burst opens no upstream connection', async () => {
  // Each answer waits 1 s, so a whole burst is in flight at once.
  const mock = await startMock(['--tokens', '3', '--first-token-delay', '1s']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  await burst(gw, kBurst);
  const warm = await metricsOf(gw);
  assert.ok(warm.turnpike_upstream_connects_total >= kBurst / 2, `${warm.turnpike_upstream_connects_total} connects`);
  assert.ok(warm.turnpike_upstream_idle_connections > 64 * 2 - 1, `${warm.turnpike_upstream_idle_connections} idle`);
  await burst(gw, kBurst);
  const after2 = await metricsOf(gw);
  assert.equal(after2.turnpike_upstream_connects_total, warm.turnpike_upstream_connects_total);
  assert.equal(after2.turnpike_upstream_reuses_total - warm.turnpike_upstream_reuses_total, kBurst);
});

test('the active cap opens no more than the cap and queues the rest', async () => {
  const mock = await startMock(['--tokens', '3', '--first-token-delay', '50ms']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    upstream: { pool: '{max_active_per_origin: 4}' },
  }));
  await burst(gw, 40);
  const m = await metricsOf(gw);
  assert.ok(m.turnpike_upstream_connects_total <= 8, `${m.turnpike_upstream_connects_total} connects (2 workers x 4)`);
  assert.ok(m.turnpike_upstream_queued_total > 0);
  assert.equal(m.turnpike_upstream_queue_timeouts_total, 0);
});
