// No metric label takes a value a client controls without a bound: after one request of each
// kind (so that every series a kind of request can make exists), hundreds of requests with
// random model names, paths, methods, index names, request ids and keys add no series to
// /metrics — every door's, governance's and the store's included.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

const TOKEN = 'cardinality-admin-token';
const RANDOM_ROUNDS = 60;
let gw;
before(async () => {
  const mock = await startMock(['--tokens', '2']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-cardinality-'));
  gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
  }), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
});
after(stopAll);

// The set of series (name and labels) /metrics shows, values left out.
async function series() {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const out = new Set();
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+(\{[^}]*\})?) /.exec(line);
    if (m) out.add(m[1]);
  }
  return out;
}

const rand = () => Math.random().toString(36).slice(2, 10);

// One round of requests with client-chosen values in every place a label could come from.
async function round(random) {
  const model = random ? `model-${rand()}` : 'mock-model';
  const key = random ? `tp-${rand()}` : 'tp-nope';
  const chat = (extra = {}) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json',
      'x-request-id': random ? rand() : 'fixed' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  const statuses = [
    (await chat()).status,
    (await chat({ stream: true })).status,
    (await fetch(`${gw.url}/v1/${random ? rand() : 'nope'}`)).status,
    (await fetch(`${gw.url}/v1/chat/completions`, { method: random ? 'PUT' : 'DELETE' })).status,
    (await fetch(`${gw.url}/es/${random ? `idx-${rand()}` : 'idx'}/_search`, {
      method: 'POST', headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' }, body: '{}',
    })).status,
    (await fetch(`${gw.url}/admin/v1/${random ? rand() : 'nope'}`, {
      headers: { authorization: `Bearer ${TOKEN}` } })).status,
    (await fetch(`${gw.url}/v1beta/models/${model}:generateContent`, {
      method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: '{}',
    })).status,
  ];
  return statuses;
}

test('requests with random models, paths, methods, indices, ids and keys add no series', async () => {
  await round(false);
  await round(false);
  // The scrape's own series (route "metrics", 200) is counted once its answer went out, which
  // may be after the next scrapes were answered (another worker; ASan on a busy machine): scrape
  // until that series is there and two scrapes agree.
  const scrapes = 'turnpike_requests_total{route="metrics",model="",status="200"}';
  let warm = await series();
  for (let i = 0; i < 50; i++) {
    const again = await series();
    if (warm.has(scrapes) && again.size === warm.size && [...again].every((s) => warm.has(s))) {
      break;
    }
    warm = again;
  }
  assert.ok(warm.has(scrapes), `no ${scrapes} after 50 scrapes`);
  assert.ok(warm.size > 50, `only ${warm.size} series`);
  for (let i = 0; i < RANDOM_ROUNDS; i++) await round(true);
  const after = await series();
  const added = [...after].filter((s) => !warm.has(s));
  assert.deepEqual(added, [], `series added by client-chosen values: ${added.slice(0, 10).join(', ')}`);
});
