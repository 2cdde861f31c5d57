// The JSON nesting cap on the doors that parse with Boost.JSON (its default: 32 levels): the
// admin API and the search door answer a document nested deeper with a 400 in their own error
// shape, at 33 levels and at 100,000 (no stack overflow), and keep serving. The chat
// inspector's own cap (128) is bad_input.test.mjs's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

const TOKEN = 'test-admin-token';
let gw;
let key;

async function send(route, auth, body) {
  const r = await fetch(`${gw.url}${route}`, {
    method: route.startsWith('/es/') ? 'POST' : 'PUT',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, body: await r.json() };
}

const nested = (depth) => `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-json-depth-'));
  const config = gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
  }) + `search:\n  path: ${path.join(dir, 'search.db')}\n`;
  gw = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  const admin = (route, body) => send(`/admin/v1/${route}`, `Bearer ${TOKEN}`, JSON.stringify(body));
  assert.equal((await admin('plans/p', {})).status, 200);
  const post = async (route, body) => (await fetch(`${gw.url}/admin/v1/${route}`, {
    method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })).json();
  await post('tenants', { id: 't', plan: 'p' });
  key = (await post('keys', { tenant: 't' })).key;
  const index = await fetch(`${gw.url}/es/books`, { method: 'PUT', headers: { authorization: `ApiKey ${key}` } });
  assert.equal(index.status, 200, await index.text());
});
after(stopAll);

test('admin API: 32 levels parse, 33 and 100,000 are a 400 "too deep"', async () => {
  const auth = `Bearer ${TOKEN}`;
  // 32 levels is JSON the parser takes: the plan's own validation answers (unknown field).
  const ok = await send('/admin/v1/plans/deep', auth, nested(32));
  assert.equal(ok.status, 400);
  assert.equal(ok.body.error.field, 'x');
  for (const depth of [33, 100000]) {
    const r = await send('/admin/v1/plans/deep', auth, nested(depth));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /too deep/);
  }
  assert.equal((await send('/admin/v1/plans/after', auth, '{}')).status, 200);
});

test('search door: 33 and 100,000 levels are a 400 in Elasticsearch\'s shape', async () => {
  const auth = `ApiKey ${key}`;
  for (const depth of [33, 100000]) {
    const r = await send('/es/books/_search', auth, nested(depth));
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.status, 400);
    assert.ok(r.body.error.type, JSON.stringify(r.body));
  }
  const fine = await send('/es/books/_search', auth, '{"query":{"match_all":{}}}');
  assert.equal(fine.status, 200, JSON.stringify(fine.body));
});
