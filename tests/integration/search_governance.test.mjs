// Governance answers on the search door, as on the LLM door: a key whose plan has an RPM limit
// gets OpenAI's x-ratelimit-* headers on every search answer, and the request over the limit is
// a 429 in Elasticsearch's error shape with Retry-After, read through the official clients
// (8.19.2 and 9.4.3) as their ResponseError. A key without limits gets no x-ratelimit-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as Client8, errors as errors8 } from 'es8';
import { Client as Client9, errors as errors9 } from 'es9';
import { startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

const TOKEN = 'test-admin-token';
const RPM = 3;

let gw;

async function admin(method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status >= 300) throw new Error(`admin ${route}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

// A tenant of its own on `plan`, and its key.
async function keyOn(tenant, plan) {
  await admin('PUT', `plans/p-${tenant}`, plan);
  await admin('POST', 'tenants', { id: tenant, plan: `p-${tenant}` });
  return (await admin('POST', 'keys', { tenant, name: `k-${tenant}` })).key;
}

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-search-gov-'));
  const config = gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + `search:\n  path: ${path.join(dir, 'search.db')}\n`;
  gw = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
});
after(stopAll);

for (const [label, Client, errors] of [['8.19.2', Client8, errors8], ['9.4.3', Client9, errors9]]) {
  test(`es ${label}: x-ratelimit-* on every answer, then a 429 in ES's shape with Retry-After`, async () => {
    const tenant = `rpm-${label.replace(/\./g, '-')}`;
    const key = await keyOn(tenant, { rpm: RPM });
    // maxRetries 0: the client must see the 429 itself, not a retried answer.
    const es = new Client({ node: `${gw.url}/es`, auth: { apiKey: key }, maxRetries: 0 });
    const index = 'books';

    const created = await es.indices.create({ index }, { meta: true });  // request 1
    assert.equal(created.statusCode, 200);
    assert.equal(created.headers['x-ratelimit-limit-requests'], String(RPM));
    assert.equal(created.headers['x-ratelimit-remaining-requests'], '2');
    for (const remaining of ['1', '0']) {  // requests 2 and 3
      const r = await es.search({ index, query: { match_all: {} } }, { meta: true });
      assert.equal(r.statusCode, 200);
      assert.equal(r.body.hits.total.value, 0);
      assert.equal(r.headers['x-ratelimit-limit-requests'], String(RPM));
      assert.equal(r.headers['x-ratelimit-remaining-requests'], remaining);
      assert.match(r.headers['x-ratelimit-reset-requests'], /^\d+(ms|s|m\d+s)$/);
      assert.equal(r.headers['retry-after'], undefined);
    }

    const refused = await es.search({ index, query: { match_all: {} } }).then(
      () => assert.fail('the fourth request in a minute must be refused'),
      (err) => err);
    assert.ok(refused instanceof errors.ResponseError, String(refused));
    assert.equal(refused.meta.statusCode, 429);
    assert.equal(refused.body.status, 429);
    assert.equal(refused.body.error.type, 'status_exception');
    assert.equal(refused.body.error.root_cause[0].type, 'status_exception');
    assert.match(refused.body.error.reason, /rate limit/i);
    assert.ok(Number(refused.meta.headers['retry-after']) >= 1, JSON.stringify(refused.meta.headers));
    assert.equal(refused.meta.headers['x-ratelimit-limit-requests'], String(RPM));
    assert.equal(refused.meta.headers['x-ratelimit-remaining-requests'], '0');
    assert.equal(refused.meta.headers['x-elastic-product'], 'Elasticsearch');
  });
}

test('raw HTTP: the 429 is ES JSON with Retry-After; a key without limits gets no x-ratelimit-*', async () => {
  const send = (key, method, route, body) => fetch(`${gw.url}/es/${route}`, {
    method,
    headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const search = (key) => send(key, 'POST', 'raw/_search', { query: { match_all: {} } });
  const limited = await keyOn('raw-limited', { rpm: 2 });
  const created = await send(limited, 'PUT', 'raw');
  assert.equal(created.status, 200, await created.clone().text());
  assert.equal(created.headers.get('x-ratelimit-remaining-requests'), '1');
  await created.arrayBuffer();
  const ok = await search(limited);
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal(ok.headers.get('x-ratelimit-limit-requests'), '2');
  assert.equal(ok.headers.get('x-ratelimit-remaining-requests'), '0');
  await ok.arrayBuffer();
  const over = await search(limited);
  assert.equal(over.status, 429);
  assert.match(over.headers.get('content-type'), /^application\/json/);
  assert.equal(over.headers.get('x-elastic-product'), 'Elasticsearch');
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
  assert.equal(over.headers.get('x-ratelimit-limit-requests'), '2');
  assert.equal(over.headers.get('x-ratelimit-remaining-requests'), '0');
  const body = await over.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'status']);
  assert.equal(body.status, 429);
  assert.equal(body.error.type, 'status_exception');

  const unlimited = await keyOn('raw-unlimited', {});
  assert.equal((await send(unlimited, 'PUT', 'raw')).status, 200);
  const free = await search(unlimited);
  assert.equal(free.status, 200);
  assert.equal(free.headers.get('x-ratelimit-limit-requests'), null);
  assert.equal(free.headers.get('retry-after'), null);
  await free.arrayBuffer();
});
