// Tenants' own provider keys (BYOK) and the admin audit log, on the real binary, on SQLite and
// on PostgreSQL 15: a tenant's key reaches the provider only for that tenant's calls, the admin
// API never returns it, rotation re-seals it, and after the run no log file and no database
// file of either engine holds its plaintext. The provider is a tiny HTTP server here that
// records the Authorization header of every call.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { gatewayConfig, startGateway, stopAll, waitExit, eventually } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

after(async () => {
  await stopAll();
  stopAllPostgres();
});

const ADMIN = 'byok-admin-token';
const SECRET = `sk-tenant-own-${randomBytes(12).toString('hex')}`;
const DEFAULT_KEY = 'sk-deployment-default';
const KEY_A = `a:${randomBytes(32).toString('base64')}`;
const KEY_B = `b:${randomBytes(32).toString('base64')}`;

// An OpenAI-compatible provider that remembers each call's Authorization header.
async function startProvider() {
  const seen = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'c1', object: 'chat.completion', created: 1, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}/v1`, seen };
}

function configText({ dir, provider, store }) {
  const text = gatewayConfig({
    models: { m: [{ base_url: provider.url, api_key: DEFAULT_KEY, name: 'dep-a' }] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store,
    call_log: { flush_interval: '50ms' },
    prices: { m: { input: 1, output: 1, max_output_tokens: 100 } },
  });
  return text.replace('  access_log: ""', `  access_log: ${path.join(dir, 'access.log')}`);
}

async function start(ctx, dataKey) {
  const gw = await startGateway(configText(ctx),
    { env: { TURNPIKE_ADMIN_TOKEN: ADMIN, TURNPIKE_DATA_KEY: dataKey } });
  ctx.logs.push(gw);
  return gw;
}

async function stop(gw) {
  gw.kill('SIGTERM');
  await waitExit(gw);
}

function adminAs(gw, token) {
  return async (method, route, body) => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, body: text ? JSON.parse(text) : null };
  };
}

async function chat(gw, key) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
}

// Every file under `dir`, recursively.
function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    const st = statSync(file);
    if (st.isDirectory()) out.push(...filesUnder(file));
    else if (st.isFile()) out.push(file);
  }
  return out;
}

async function run(engine, t) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `turnpike-byok-${engine}-`));
  const provider = await startProvider();
  const pg = engine === 'postgres' ? await startPostgres() : null;
  const store = pg ? { engine: 'postgres', url: pg.url, path: path.join(dir, 'turnpike.db') }
    : { path: path.join(dir, 'turnpike.db') };
  const ctx = { dir, provider, store, logs: [] };
  let gw = await start(ctx, KEY_A);
  let op = adminAs(gw, ADMIN);
  assert.equal((await op('PUT', 'plans/p', {})).status, 200);
  for (const id of ['t1', 't2']) assert.equal((await op('POST', 'tenants', { id, plan: 'p' })).status, 201);
  const k1 = (await op('POST', 'keys', { tenant: 't1' })).body.key;
  const k2 = (await op('POST', 'keys', { tenant: 't2' })).body.key;
  const t1token = (await op('POST', 'tenants/t1/admin-tokens', {})).body;
  const t1 = adminAs(gw, t1token.token);

  // t1's admin stores its own key; no answer carries it.
  assert.equal((await t1('PUT', 'tenants/t1/provider-keys/nope', { api_key: SECRET })).status, 404);
  assert.equal((await t1('PUT', 'tenants/t2/provider-keys/dep-a', { api_key: SECRET })).status, 404);
  const bad = await t1('PUT', 'tenants/t1/provider-keys/dep-a', { api_key: `${SECRET}\r\nx: y` });
  assert.equal(bad.status, 400);
  assert.ok(!bad.text.includes(SECRET));
  const put = await t1('PUT', 'tenants/t1/provider-keys/dep-a', { api_key: SECRET });
  assert.equal(put.status, 200, put.text);
  assert.ok(!put.text.includes(SECRET));
  assert.equal(put.body.last4, SECRET.slice(-4));
  assert.equal(put.body.data_key_id, 'a');
  const listed = await t1('GET', 'tenants/t1/provider-keys');
  assert.deepEqual(listed.body.data.map((k) => k.deployment), ['dep-a']);
  assert.ok(!listed.text.includes(SECRET));

  // t1's calls carry its key, t2's the deployment's.
  await chat(gw, k1);
  await chat(gw, k2);
  assert.deepEqual(provider.seen.splice(0), [`Bearer ${SECRET}`, `Bearer ${DEFAULT_KEY}`]);

  // The audit log: the operator sees every write, t1's admin its own tenant's only.
  const all = await eventually(async () => {
    const r = await op('GET', 'audit?limit=100');
    return r.body.data.length >= 9 ? r : null;
  });
  assert.ok(all, 'audit rows');
  const routes = all.body.data.map((r) => `${r.method} ${r.route} ${r.status}`);
  assert.ok(routes.includes('PUT /admin/v1/tenants/{id}/provider-keys/{deployment} 200'));
  assert.ok(routes.includes('PUT /admin/v1/tenants/{id}/provider-keys/{deployment} 404'));
  assert.ok(routes.includes('POST /admin/v1/tenants 201'));
  const mine = (await t1('GET', 'audit?limit=100')).body.data;
  assert.ok(mine.length >= 3);
  assert.ok(mine.every((r) => r.tenant === 't1'));
  assert.ok(mine.some((r) => r.token === t1token.id && r.object === 'dep-a' && r.status === 200));
  assert.equal((await t1('GET', 'audit?tenant=t2')).status, 404);
  const page = (await op('GET', 'audit?limit=2')).body;
  assert.equal(page.data.length, 2);
  const next = (await op('GET', `audit?limit=2&cursor=${page.next_cursor}`)).body.data;
  assert.ok(next[0].id < page.data[1].id);
  assert.ok(!all.text.includes(SECRET));

  // Rotation: b becomes the current key, a stays to open what it sealed; rotate; drop a.
  await stop(gw);
  gw = await start(ctx, `${KEY_B},${KEY_A}`);
  await chat(gw, k1);
  assert.deepEqual(provider.seen.splice(0), [`Bearer ${SECRET}`]);
  op = adminAs(gw, ADMIN);
  assert.equal((await adminAs(gw, t1token.token)('POST', 'provider-keys/rotate')).status, 403);
  const rotated = await op('POST', 'provider-keys/rotate');
  assert.deepEqual(rotated.body, { resealed: 1, data_key_id: 'b' });
  await stop(gw);
  gw = await start(ctx, KEY_B);
  await chat(gw, k1);
  assert.deepEqual(provider.seen.splice(0), [`Bearer ${SECRET}`]);
  assert.equal((await adminAs(gw, ADMIN)('GET', 'tenants/t1/provider-keys')).body.data[0].data_key_id, 'b');
  // Deleted: t1 is back on the deployment's key.
  assert.equal((await adminAs(gw, ADMIN)('DELETE', 'tenants/t1/provider-keys/dep-a')).status, 200);
  await chat(gw, k1);
  assert.deepEqual(provider.seen.splice(0), [`Bearer ${DEFAULT_KEY}`]);
  await stop(gw);

  // No log and no database file holds the plaintext (SQLite's file, WAL and shm; PostgreSQL's
  // whole data directory, WAL included, after a checkpoint).
  if (pg) pg.psql('CHECKPOINT');
  const files = [...filesUnder(dir), ...(pg ? filesUnder(pg.dir) : [])];
  assert.ok(files.some((f) => f.endsWith('access.log')));
  assert.ok(files.length >= 2);
  const hits = files.filter((f) => readFileSync(f).includes(SECRET));
  assert.deepEqual(hits, []);
  for (const proc of ctx.logs) {
    assert.ok(!proc.errors().includes(SECRET) && !proc.output().includes(SECRET));
  }
  t.diagnostic(`${engine}: ${files.length} files searched, 0 hits`);
}

test('BYOK and the audit log on SQLite', async (t) => run('sqlite', t));

test('BYOK and the audit log on PostgreSQL', { skip: needsPostgres() }, async (t) => run('postgres', t));

