// Tenant-scoped admin tokens: the operator gives a tenant an admin token
// (POST /admin/v1/tenants/{id}/admin-tokens, shown once, stored hashed) and takes it back
// (DELETE .../admin-tokens/{token_id}); with it, the tenant's admin manages its own keys and
// sees its own spend and calls, and nothing of another tenant's.
//
// The isolation check walks every admin route the gateway serves (GET /admin/v1/routes, so a
// route added later is covered without editing this file): with tenant a's token, each route
// aimed at tenant b's objects answers 404 (never b's data, never a 403 that would confirm b's
// object exists), and each route of the operator only answers 403. Both store engines.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

const TOKEN = 'tenant-scope-operator-token';
const ENGINES = [
  { name: 'sqlite', store: async () => ({}) },
  {
    name: 'postgres',
    skip: needsPostgres(),
    store: async () => ({ engine: 'postgres', url: (await startPostgres()).url }),
  },
];

after(async () => { await stopAll(); stopAllPostgres(); });

async function call(gw, token, method, route, body) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${gw.url}${route}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, body: text ? JSON.parse(text) : null };
}

for (const engine of ENGINES) describe(`tenant-scoped admin tokens (${engine.name})`, { skip: engine.skip }, () => {
  let gw;
  const seen = {};  // ids of the seeded objects
  const op = (method, route, body) => call(gw, TOKEN, method, `/admin/v1/${route}`, body);
  const chat = (key) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] }),
  });

  before(async () => {
    const mock = await startMock(['--tokens', '4']);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-tenant-scope-'));
    gw = await startGateway(gatewayConfig({
      models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
      governance: { enabled: true, reconcile_interval: '0s' },
      store: { path: path.join(dir, 'turnpike.db'), ...(await engine.store()) },
      call_log: { flush_interval: '20ms' },
      prices: { 'mock-model': { input: 1, output: 1, max_output_tokens: 1000 } },
    // The search door on, so that its admin resource is walked too.
    }) + `search:\n  path: ${path.join(dir, 'search.db')}\n`, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
    assert.equal((await op('PUT', 'plans/basic', {})).status, 200);
    for (const t of ['a', 'b']) {
      assert.equal((await op('POST', 'tenants', { id: t, plan: 'basic' })).status, 201);
      const key = await op('POST', 'keys', { tenant: t, name: `${t}-key` });
      assert.equal(key.status, 201);
      seen[t] = { key: key.body.key, keyId: key.body.id };
      const admin = await op('POST', `tenants/${t}/admin-tokens`, { name: `${t}-admin` });
      assert.equal(admin.status, 201, admin.text);
      assert.match(admin.body.token, /^tpa-[a-z2-7]{12}-[A-Za-z0-9_-]{43}$/);
      assert.equal(admin.body.tenant, t);
      seen[t].admin = admin.body.token;
      seen[t].adminId = admin.body.id;
      assert.equal((await chat(seen[t].key)).status, 200);
    }
    // Both calls in the log before the lists are read.
    for (let i = 0; i < 100; i++) {
      const calls = await op('GET', 'calls');
      if (calls.body.data.length >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  test("every admin route, aimed at another tenant's objects: 404, or 403 for the operator's only", async () => {
    const routes = await op('GET', 'routes');
    assert.equal(routes.status, 200);
    const froms = new Set(routes.body.data.map((r) => r.tenant.from));
    for (const from of ['none', 'path', 'query', 'body', 'owner']) assert.ok(froms.has(from), from);
    assert.ok(routes.body.data.some((r) => r.pattern === '/admin/v1/search/indices'));
    const b = seen.b;
    // A path parameter's value aimed at tenant b: its tenant, its key, its admin token.
    const valueFor = (route, param) => {
      if (route.tenant.from === 'owner' && route.tenant.name === param) return b.keyId;
      if (param === 'token_id') return b.adminId;
      if (param === 'model') return 'mock-model';
      return 'b';
    };
    let checked = 0;
    for (const route of routes.body.data) {
      for (const method of route.methods) {
        let target = route.pattern.replace(/\{(\w+)\}/g, (_, p) => encodeURIComponent(valueFor(route, p)));
        if (route.tenant.from === 'query') target += `?${route.tenant.name}=b`;
        const body = route.tenant.from === 'body' ? { [route.tenant.name]: 'b' } : {};
        const r = await call(gw, seen.a.admin, method, target, method === 'GET' ? undefined : body);
        const expected = route.tenant.from === 'none' ? 403 : 404;
        assert.equal(r.status, expected, `${method} ${target}: ${r.text}`);
        assert.equal(typeof r.body.error.message, 'string');
        for (const secret of [b.keyId, b.key, b.admin]) {
          assert.ok(!r.text.includes(secret) || target.includes(secret), `${method} ${target} shows b's ${secret}`);
        }
        checked++;
      }
    }
    assert.ok(checked >= 19, `only ${checked} routes`);
    // The answer for b's key is the answer for a key that does not exist.
    const ghost = await call(gw, seen.a.admin, 'GET', '/admin/v1/keys/aaaaaaaaaaaa');
    const real = await call(gw, seen.a.admin, 'GET', `/admin/v1/keys/${b.keyId}`);
    assert.equal(ghost.status, 404);
    assert.equal(real.body.error.message.replace(b.keyId, 'X'), ghost.body.error.message.replace('aaaaaaaaaaaa', 'X'));
  });

  test("a tenant's admin manages its own keys and sees only its own lists", async () => {
    const tok = seen.a.admin;
    const keys = await call(gw, tok, 'GET', '/admin/v1/keys');
    assert.equal(keys.status, 200);
    assert.ok(keys.body.data.length >= 1);
    assert.ok(keys.body.data.every((k) => k.tenant === 'a'), keys.text);
    assert.ok(keys.body.data.some((k) => k.id === seen.a.keyId));

    const created = await call(gw, tok, 'POST', '/admin/v1/keys', { tenant: 'a', name: 'more' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.tenant, 'a');
    const unnamed = await call(gw, tok, 'POST', '/admin/v1/keys', { name: 'x' });
    assert.equal(unnamed.status, 400);
    assert.equal(unnamed.body.error.field, 'tenant');
    assert.equal((await call(gw, tok, 'GET', `/admin/v1/keys/${created.body.id}`)).status, 200);
    const revoked = await call(gw, tok, 'POST', `/admin/v1/keys/${created.body.id}/revoke`);
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.status, 'revoked');
    assert.equal((await call(gw, tok, 'GET', '/admin/v1/tenants/a')).status, 200);

    const spend = await call(gw, tok, 'GET', '/admin/v1/spend');
    assert.equal(spend.status, 200);
    assert.ok(spend.body.data.length >= 1);
    assert.ok(spend.body.data.every((s) => s.tenant === 'a'), spend.text);
    const calls = await call(gw, tok, 'GET', '/admin/v1/calls');
    assert.equal(calls.status, 200);
    assert.ok(calls.body.data.length >= 1);
    assert.ok(calls.body.data.every((c) => c.tenant === 'a'), calls.text);
    const all = await op('GET', 'calls');
    assert.ok(all.body.data.some((c) => c.tenant === 'b'), 'the operator sees every tenant');
    // The daily counters (written with the calls' batch): its own tenant's only, on either engine.
    const daily = await call(gw, tok, 'GET', '/admin/v1/spend/daily?group_by=tenant,model');
    assert.equal(daily.status, 200, daily.text);
    assert.ok(daily.body.data.length >= 1, daily.text);
    assert.ok(daily.body.data.every((d) => d.tenant === 'a' && d.model === 'mock-model' && d.requests >= 1), daily.text);
    const everyDay = await op('GET', 'spend/daily?group_by=tenant');
    assert.deepEqual([...new Set(everyDay.body.data.map((d) => d.tenant))].sort(), ['a', 'b'], everyDay.text);

    // What only the operator may do.
    assert.equal((await call(gw, tok, 'PATCH', '/admin/v1/tenants/a', { plan: 'basic' })).status, 403);
    assert.equal((await call(gw, tok, 'POST', '/admin/v1/tenants/a/admin-tokens', {})).status, 403);
  });

  test('a virtual key is never an admin token, an admin token never a virtual key; a revoked token stops at once', async () => {
    const denied = await call(gw, seen.a.key, 'GET', '/admin/v1/keys');
    assert.equal(denied.status, 401);
    assert.equal((await chat(seen.a.admin)).status, 401);
    assert.equal((await call(gw, null, 'GET', '/admin/v1/keys')).status, 401);

    const listed = await op('GET', 'keys');
    assert.ok(!listed.body.data.some((k) => k.id === seen.a.adminId), 'admin tokens are not keys');
    const tokens = await op('GET', 'tenants/a/admin-tokens');
    assert.deepEqual(tokens.body.data.map((t) => t.id), [seen.a.adminId]);
    assert.ok(!tokens.text.includes(seen.a.admin), 'the secret is shown once');
    assert.equal((await op('GET', `keys/${seen.a.adminId}`)).status, 404);
    assert.equal((await op('DELETE', `tenants/b/admin-tokens/${seen.a.adminId}`)).status, 404);

    const extra = await op('POST', 'tenants/a/admin-tokens', {});
    assert.equal((await call(gw, extra.body.token, 'GET', '/admin/v1/keys')).status, 200);
    const gone = await op('DELETE', `tenants/a/admin-tokens/${extra.body.id}`);
    assert.equal(gone.status, 200);
    assert.equal(gone.body.status, 'revoked');
    assert.equal((await call(gw, extra.body.token, 'GET', '/admin/v1/keys')).status, 401);
  });
});

test('failed admin authentications are limited per client address: the 11th within a minute is a 429 with Retry-After, even with the right token', async () => {
  const mock = await startMock(['--tokens', '2']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-admin-failures-'));
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
  }), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  assert.equal((await call(gw, TOKEN, 'GET', '/admin/v1/plans')).status, 200);
  for (let i = 0; i < 10; i++) {
    assert.equal((await call(gw, `guess-${i}`, 'GET', '/admin/v1/plans')).status, 401);
  }
  const r = await fetch(`${gw.url}/admin/v1/plans`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 429);
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.equal((await r.json()).error.type, 'rate_limited');
  // Other doors are not the admin API's business.
  assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
});
