// The search door's admin resource, GET /admin/v1/search/indices, on both backends (the
// embedded index and Qdrant, through the fake of its REST API): the operator sees every tenant's
// indices with their document counts, `?tenant=` narrows the list, a tenant's admin token sees
// only its own (another tenant named is a 404), a virtual key is refused (401), the CLI
// (`turnpike admin search indices`) reads the same, and a deleted index leaves the list. On
// Qdrant a collection that is not one of the gateway's is left out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BIN, gatewayConfig, startGateway, stopAll, esRequest, adminOf } from './lib/harness.mjs';
import { needsQdrantOpenApi } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';

const TOKEN = 'test-admin-token';
const QDRANT_KEY = 'qdrant-secret';
const { doc, skip: qdrantSkip } = needsQdrantOpenApi();
let fake;

after(async () => {
  await stopAll();
  if (fake) await fake.close();
});

// GET /admin/v1/search/indices with `token`: { status, body }.
async function listIndices(gw, token, tenant) {
  const query = tenant === undefined ? '' : `?tenant=${encodeURIComponent(tenant)}`;
  const r = await fetch(`${gw.url}/admin/v1/search/indices${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: r.status, body: await r.json() };
}

// A gateway on `searchConfig`, tenants t1 and t2 with a key each, t1's admin token; t1 gets
// two indices (3 documents in `books`), t2 one.
async function setUp(searchConfig, env = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-search-admin-'));
  const config = gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + searchConfig(dir);
  const gw = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN, ...env } });
  const admin = adminOf(gw, TOKEN);
  await admin('plans/p1', {}, 'PUT');
  const keys = {};
  for (const t of ['t1', 't2']) {
    await admin('tenants', { id: t, plan: 'p1' });
    keys[t] = (await admin('keys', { tenant: t, name: `k-${t}` })).key;
  }
  const tenantToken = (await admin('tenants/t1/admin-tokens', { name: 't1-admin' })).token;
  const es = (t, method, route, body, ndjson) => esRequest(gw, keys[t], method, route, body, ndjson);
  for (const [t, index] of [['t1', 'books'], ['t1', 'notes'], ['t2', 'books']]) {
    const created = await es(t, 'PUT', index, { mappings: { properties: { n: { type: 'long' } } } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
  }
  const lines = [1, 2, 3].map((n) => `{"index":{"_id":"d${n}"}}\n{"n":${n}}\n`).join('');
  const bulk = await es('t1', 'POST', 'books/_bulk?refresh=true', lines, true);
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));
  return { gw, keys, tenantToken, es };
}

async function checkList({ gw, keys, tenantToken, es }) {
  const all = await listIndices(gw, TOKEN);
  assert.equal(all.status, 200, JSON.stringify(all.body));
  assert.equal(all.body.object, 'list');
  assert.deepEqual(all.body.data.map((i) => [i.tenant, i.index, i.docs_count]),
    [['t1', 'books', 3], ['t1', 'notes', 0], ['t2', 'books', 0]]);
  for (const i of all.body.data) {
    assert.equal(i.object, 'search.index');
    assert.ok(Math.abs(i.created_at - Date.now() / 1000) < 600, JSON.stringify(i));
  }

  const t2 = await listIndices(gw, TOKEN, 't2');
  assert.deepEqual(t2.body.data.map((i) => [i.tenant, i.index]), [['t2', 'books']]);

  // The tenant's own admin token: its indices only, whether or not it names itself.
  for (const tenant of [undefined, 't1']) {
    const own = await listIndices(gw, tenantToken, tenant);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(own.body.data.map((i) => [i.tenant, i.index]), [['t1', 'books'], ['t1', 'notes']]);
  }
  const other = await listIndices(gw, tenantToken, 't2');
  assert.equal(other.status, 404, JSON.stringify(other.body));
  assert.equal(JSON.stringify(other.body).includes('books'), false);
  const withKey = await listIndices(gw, keys.t1);
  assert.equal(withKey.status, 401, JSON.stringify(withKey.body));

  // The CLI reads the same route (run without blocking: the Qdrant fake answers from this
  // process's event loop).
  const { stdout } = await promisify(execFile)(BIN, ['admin', '--url', gw.url, '--json', 'search', 'indices', '--tenant', 't2'], {
    env: { ...process.env, TURNPIKE_ADMIN_TOKEN: TOKEN },
  });
  const cli = JSON.parse(stdout);
  assert.deepEqual(cli.data.map((i) => [i.tenant, i.index, i.docs_count]), [['t2', 'books', 0]]);

  const deleted = await es('t1', 'DELETE', 'notes');
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  const after = await listIndices(gw, TOKEN, 't1');
  assert.deepEqual(after.body.data.map((i) => i.index), ['books']);
}

test('search indices in the admin API: the embedded backend', async () => {
  const setup = await setUp((dir) => `search:\n  path: ${path.join(dir, 'search.db')}\n`);
  await checkList(setup);
});

test('search indices in the admin API: Qdrant (the fake), another application\'s collection left out', { skip: qdrantSkip }, async () => {
  fake = await new QdrantFake({ doc, apiKey: QDRANT_KEY }).listen();
  const setup = await setUp(() =>
    `search:\n  backend: qdrant\n  timeout: 2s\n  qdrant:\n    url: ${fake.url}\n    api_key: \${QDRANT_KEY}\n`,
  { QDRANT_KEY });
  // Other applications' collections on the same Qdrant: a name the gateway never makes, and
  // one it could (tenant "t1", index "cache") but without the gateway's metadata.
  for (const name of ['someone_else', 't1__cache']) {
    const foreign = await fetch(`${fake.url}/collections/${name}`, {
      method: 'PUT',
      headers: { 'api-key': QDRANT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ vectors: {} }),
    });
    assert.equal(foreign.status, 200, await foreign.text());
  }
  await checkList(setup);
  assert.ok(fake.callsTo('get_collections') >= 1);
  assert.deepEqual(fake.violations, []);
});
