// Governance end to end: virtual keys, budgets under concurrency, rate limits, the call log,
// the admin API and CLI, the store's statement budget, restarts, and reconciliation — the real
// binary over loopback with its real store: SQLite here, and PostgreSQL 15 when
// governance_postgres.test.mjs runs this file with TURNPIKE_TEST_STORE_ENGINE=postgres (a
// throwaway cluster, lib/postgres.mjs; a fresh database per gateway config).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import {
  BIN, startMock, startGateway, gatewayConfig, stopAll, sleep, eventually, waitExit, readSse, metricsOf } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
// 1 USD per request reserved with max_tokens 1000 (output 1000 USD per million tokens); the
// mock's 16 completion tokens then cost 0.016 USD.
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } };
const MAX_TOKENS = 1000;

let mock;
let slowMock;    // holds every answer 1.5 s before the first token
let streamMock;  // 50 tokens, 40 ms apart
before(async () => {
  mock = await startMock(['--tokens', '16']);
  slowMock = await startMock(['--tokens', '16', '--first-token-delay', '1500ms', '--workers', '2']);
  streamMock = await startMock(['--tokens', '50', '--inter-token', '40ms']);
});
after(async () => { await stopAll(); stopAllPostgres(); });

const engine = process.env.TURNPIKE_TEST_STORE_ENGINE ?? 'sqlite';
const pg = engine === 'postgres' ? await startPostgres() : null;
let databases = 0;
// The engine's store section; for postgres a fresh database.
function storeFor() {
  if (engine !== 'postgres') return {};
  const db = `gov_${++databases}`;
  pg.psql(`CREATE DATABASE ${db}`, 'postgres');
  return { engine: 'postgres', url: pg.url.replace(/\/turnpike$/, `/${db}`) };
}

function config(extra = {}) {
  const hotpath = extra.hotpath ?? {};
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-gov-'));
  const upstream = (extra.mock ?? mock).port;
  return gatewayConfig({
    models: {
      'mock-model': [`http://127.0.0.1:${upstream}/v1`],
      'free-model': [`http://127.0.0.1:${upstream}/v1`],
    },
    governance: { enabled: true, reconcile_interval: '0s', ...(extra.governance ?? {}) },
    store: { path: path.join(dir, 'turnpike.db'), ...storeFor(), ...(extra.store ?? {}) },
    call_log: { flush_interval: '50ms', ...(extra.call_log ?? {}) },
    hotpath,
    prices: PRICES,
  });
}

async function admin(gw, method, route, body, token = TOKEN) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

// A plan, a tenant on it and a key; returns the key's secret and id.
async function provision(gw, { plan = {}, tenant = 't1', key = {} } = {}) {
  const planId = `p-${tenant}`;
  assert.equal((await admin(gw, 'PUT', `plans/${planId}`, plan)).status, 200);
  assert.equal((await admin(gw, 'POST', 'tenants', { id: tenant, plan: planId })).status, 201);
  const created = await admin(gw, 'POST', 'keys', { tenant, name: 'test', ...key });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.key, /^tp-[a-z2-7]{12}-[A-Za-z0-9_-]{43}$/);
  return { secret: created.body.key, id: created.body.id };
}

function chat(gw, secret, { extra = {}, headers = {} } = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}), ...headers },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: MAX_TOKENS, ...extra }),
  });
}

const metrics = metricsOf;
// Another process writing the gateway's database, as an operator's sqlite3 would. The gateway's
// store thread may hold the write lock for a call-log batch at that moment; like any second
// writer on a WAL database, the CLI waits for it (.timeout) instead of failing at once.
function sqliteExec(dbPath, sql) {
  execFileSync('sqlite3', ['-cmd', '.timeout 10000', dbPath, sql]);
}
// The same for the store a config names, whichever engine (psql for PostgreSQL).
function storeExec(cfg, sql) {
  const url = /url: (postgresql:\S+)/.exec(cfg);
  if (url) {
    pg.psql(sql, url[1].split('/').pop());
  } else {
    sqliteExec(/path: (.*turnpike\.db)/.exec(cfg)[1], sql);
  }
}
const stmt = (m, op) => m[`turnpike_store_statements_total{op="${op}"}`];

async function allCalls(gw, query = '') {
  const rows = [];
  let cursor = '';
  for (;;) {
    const r = await admin(gw, 'GET', `calls?limit=1000${query}${cursor}`);
    assert.equal(r.status, 200);
    rows.push(...r.body.data);
    if (r.body.next_cursor === null) return rows;
    cursor = `&cursor=${r.body.next_cursor}`;
  }
}

const usd = (x) => Math.round(x * 1e6);  // compare money in micro-USD integers

test('keys: 401 without or with a bad key and when revoked or expired, 403 when suspended, 404 for a model not allowed', async () => {
  const gw = await startGateway(config(), ENV);
  const { secret, id } = await provision(gw, { plan: { allowed_models: ['mock-model'] } });

  const none = await chat(gw, null);
  assert.equal(none.status, 401);
  assert.equal((await none.json()).error.type, 'authentication_error');
  assert.equal((await chat(gw, 'tp-aaaaaaaaaaaa-' + 'x'.repeat(43))).status, 401);
  assert.equal((await chat(gw, secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'))).status, 401);

  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: secret, maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(c.usage.completion_tokens, 16);
  assert.equal((await chat(gw, null, { headers: { 'x-api-key': secret } })).status, 200);
  await assert.rejects(
    client.chat.completions.create({ model: 'free-model', messages: [{ role: 'user', content: 'Hi' }] }),
    (e) => e instanceof OpenAI.NotFoundError);
  const bad = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
  await assert.rejects(bad.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] }),
    (e) => e instanceof OpenAI.AuthenticationError);

  // Revocation: the very next request is refused.
  assert.equal((await admin(gw, 'POST', `keys/${id}/revoke`)).status, 200);
  await assert.rejects(client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] }),
    (e) => e instanceof OpenAI.AuthenticationError && /revoked/.test(e.message));

  // Deletion: the key is then unknown (the generic 401, no longer "revoked"), gone from the
  // admin API; its call-log rows stay.
  const deleted = await admin(gw, 'DELETE', `keys/${id}`);
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  assert.equal(deleted.body.deleted, true);
  const unknown = await chat(gw, secret);
  assert.equal(unknown.status, 401);
  assert.doesNotMatch((await unknown.json()).error.message, /revoked/);
  assert.equal((await admin(gw, 'GET', `keys/${id}`)).status, 404);
  assert.equal((await admin(gw, 'DELETE', `keys/${id}`)).status, 404);
  assert.ok(!(await admin(gw, 'GET', 'keys')).body.data.some((k) => k.id === id));
  assert.ok(await eventually(async () => (await admin(gw, 'GET', `calls?key=${id}`)).body.data.length > 0, 3000),
    'the deleted key\'s calls stay in the log');

  // Suspension of the tenant, then reinstatement.
  const other = await admin(gw, 'POST', 'keys', { tenant: 't1' });
  assert.equal((await chat(gw, other.body.key)).status, 200);
  assert.equal((await admin(gw, 'PATCH', 'tenants/t1', { status: 'suspended' })).status, 200);
  assert.equal((await chat(gw, other.body.key)).status, 403);
  assert.equal((await admin(gw, 'PATCH', 'tenants/t1', { status: 'active' })).status, 200);
  assert.equal((await chat(gw, other.body.key)).status, 200);

  // Expiry: a key whose expiry has passed.
  const expired = await admin(gw, 'POST', 'keys', { tenant: 't1', expires_at: Math.floor(Date.now() / 1000) - 1 });
  const refusedExpired = await chat(gw, expired.body.key);
  assert.equal(refusedExpired.status, 401);
  assert.match((await refusedExpired.json()).error.message, /expired/);
});

test('budget: 200 concurrent requests against a budget that admits 20; spend equals the call log', async () => {
  const gw = await startGateway(config({ mock: slowMock }), ENV);
  const { secret } = await provision(gw, { plan: { monthly_budget_usd: 20 } });
  // The provider holds every admitted request 1.5 s, so all 200 arrive while 20 hold the budget.
  const responses = await Promise.all(Array.from({ length: 200 }, () => chat(gw, secret)));
  const statuses = responses.map((r) => r.status);
  const bodies = await Promise.all(responses.map((r) => r.json()));
  const admitted = statuses.filter((s) => s === 200).length;
  assert.equal(admitted, 20, `admitted ${admitted}`);
  assert.equal(statuses.filter((s) => s === 429).length, 180);
  const refused = bodies.find((b) => b.error);
  assert.equal(refused.error.type, 'insufficient_quota');

  const spendOf = async () => (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  const spend = await spendOf();
  assert.equal(usd(spend.spent_usd), 20 * usd(0.016));
  assert.equal(spend.reserved_usd, 0);
  assert.ok(spend.spent_usd <= spend.budget_usd);
  const rows = await eventually(async () => { const r = await allCalls(gw); return r.length === 200 ? r : null; }, 5000);
  assert.ok(rows, 'all 200 rows reached the call log');
  assert.equal(rows.filter((r) => r.status === 200).length, 20);
  assert.equal(rows.reduce((sum, r) => sum + usd(r.cost_usd), 0), usd(spend.spent_usd));
  assert.ok(rows.every((r) => r.tenant === 't1' && !r.unpriced && !r.estimated));
});

test('TPM: 200 concurrent requests never take more estimated tokens than the limit; 429 has Retry-After and x-ratelimit headers', async () => {
  const gw = await startGateway(config({ mock: slowMock }), ENV);
  const tpm = 20000;
  const { secret } = await provision(gw, { key: { tpm } });
  const body = JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: MAX_TOKENS });
  const estimate = Math.ceil(body.length / 3) + MAX_TOKENS;  // governance/cost.h
  const responses = await Promise.all(Array.from({ length: 200 }, () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    })));
  const ok = responses.filter((r) => r.status === 200);
  const limited = responses.filter((r) => r.status === 429);
  assert.equal(ok.length + limited.length, 200);
  assert.ok(ok.length >= 1 && ok.length * estimate <= tpm, `admitted ${ok.length} x ${estimate} tokens under ${tpm}`);
  assert.equal(ok.length, Math.floor(tpm / estimate));
  assert.equal(ok[0].headers.get('x-ratelimit-limit-tokens'), String(tpm));
  assert.ok(Number(ok[0].headers.get('x-ratelimit-remaining-tokens')) >= 0);
  const r = limited[0];
  assert.ok(Number(r.headers.get('retry-after')) >= 1);
  assert.equal(r.headers.get('x-ratelimit-limit-tokens'), String(tpm));
  assert.equal((await r.json()).error.type, 'rate_limit_error');
  await Promise.all(responses.map((x) => x.arrayBuffer().catch(() => {})));
});

test('RPM: the request over the limit gets 429 with Retry-After', async () => {
  const gw = await startGateway(config(), ENV);
  const { secret } = await provision(gw, { plan: { rpm: 3 } });
  for (let i = 0; i < 3; ++i) assert.equal((await chat(gw, secret)).status, 200);
  const r = await chat(gw, secret);
  assert.equal(r.status, 429);
  assert.ok(Number(r.headers.get('retry-after')) >= 1);
  assert.equal(r.headers.get('x-ratelimit-limit-requests'), '3');
  assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '0');
});

test('statement budget: 1,000 warm requests execute no store statement on the request path; writer batches stay within budget', async () => {
  const gw = await startGateway(config(), ENV);
  const { secret } = await provision(gw);
  for (let i = 0; i < 20; ++i) assert.equal((await chat(gw, secret)).status, 200);
  await eventually(async () => (await metrics(gw)).turnpike_call_log_rows_total === 20, 3000);
  const before = await metrics(gw);

  let next = 0;
  const worker = async () => {
    while (next < 1000) {
      next += 1;
      const r = await chat(gw, secret);
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  const after = await eventually(async () => {
    const m = await metrics(gw);
    return m.turnpike_call_log_rows_total === 1020 ? m : null;
  }, 5000);
  assert.ok(after, 'the 1,000 rows were written');
  const delta = (op) => stmt(after, op) - stmt(before, op);
  // Request path: nothing read or written for a request.
  for (const op of ['snapshot_load', 'admin_read', 'admin_write', 'migrate', 'reconcile']) {
    assert.equal(delta(op), 0, op);
  }
  if (engine === 'sqlite') {
    // Background, per 1,000 requests: the rows go in INSERTs of 32 rows, the rest of a batch one
    // per row (so at most one statement per row, at least one per 32); per batch BEGIN/COMMIT,
    // one spend upsert per scope (tenant, key) and one per daily counter (tenant, key, model,
    // day: one here), and the tenant's id range (call_log_index; the month was noted before).
    // Budget recorded in docs/BENCHMARKS.md: 5 of these per batch (it was 4, 400, before the
    // daily counters).
    assert.ok(delta('call_log_insert') <= 1000 && delta('call_log_insert') >= Math.ceil(1000 / 32),
      `call_log_insert = ${delta('call_log_insert')}`);
    assert.equal(delta('call_log_index'), delta('transaction') / 2, 'one tenant range per batch');
    // The rows' route (tenant, key, model, deployment, month) was added by the warm-up requests
    // and is remembered: no statement looks it up again.
    assert.equal(delta('call_log_route'), 0, 'call_log_route');
    const perBatch = delta('transaction') + delta('spend_write');
    console.log(`# statements per 1,000 requests: ${delta('call_log_insert')} inserts, ${delta('call_log_index')} index notes, ${delta('transaction')} transaction, ${delta('spend_write')} spend upserts, ${delta('change_check')} change checks`);
    // Per batch exactly: one tenant, one key, one model, one day under this load.
    assert.equal(delta('spend_write'), 3 * delta('transaction') / 2, 'spend upserts per batch');
    assert.ok(perBatch <= 500, `transaction + spend_write = ${perBatch}`);
  } else {
    // PostgreSQL: a batch is one transaction (key, COPY of the rows, spend) in two round trips
    // (the server asks for COPY's data) and nothing else; a batch leaves a worker at least
    // every call_log.flush_interval (50 ms here) or per 1,024 rows. Budget
    // (docs/BENCHMARKS.md): at most 1 batch per 10 requests under this load; no BEGIN/COMMIT,
    // spend or index statement of its own. change_check: one version poll per snapshot_ttl
    // (3 s) at most.
    const roundTrips = delta('call_log_insert');
    const batches = Math.ceil(roundTrips / 2);  // a batch mid-flight at either read counts one
    console.log(`# postgres round trips per 1,000 requests: ${roundTrips} for ${batches} call-log batches, ${delta('change_check')} change checks`);
    assert.ok(batches >= 1 && batches <= 100, `call-log batches = ${batches}`);
    for (const op of ['transaction', 'spend_write', 'call_log_index', 'call_log_route']) {
      assert.equal(delta(op), 0, op);
    }
  }

  // The first request of a new key: the admin write published it; the request reads nothing.
  const fresh = await admin(gw, 'POST', 'keys', { tenant: 't1' });
  const m1 = await metrics(gw);
  assert.equal((await chat(gw, fresh.body.key)).status, 200);
  const m2 = await metrics(gw);
  const firstRequest = ['snapshot_load', 'admin_read', 'admin_write'].reduce((s, op) => s + stmt(m2, op) - stmt(m1, op), 0);
  assert.ok(firstRequest <= 3, `first request of a new key cost ${firstRequest} statements`);
  assert.equal(firstRequest, 0);
});

test('settlement: a stream the client leaves early is settled from an estimate; an unpriced model is flagged, not free; bodies are logged only when the tenant opts in', async () => {
  const gw = await startGateway(config({ mock: streamMock }), ENV);
  const { secret } = await provision(gw);
  // Leave a slow stream after the first content chunks: the provider never sent usage.
  const r = await chat(gw, secret, { extra: { stream: true } });
  const reader = r.body.getReader();
  let text = '';
  while (!text.includes('tok3')) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const leftRow = async () => (await allCalls(gw)).find((x) => x.status === 499);
  assert.ok(await eventually(leftRow, 3000), 'the stream the client left is logged');
  // An unpriced model.
  assert.equal((await chat(gw, secret, { extra: { model: 'free-model' } })).status, 200);
  // Bodies: off, then on.
  assert.equal((await admin(gw, 'PATCH', 'tenants/t1', { log_bodies: true })).status, 200);
  assert.equal((await chat(gw, secret, { extra: { user: 'body-marker' } })).status, 200);

  const rows = await eventually(async () => { const x = await allCalls(gw); return x.length === 3 ? x : null; }, 5000);
  assert.ok(rows, 'three rows');
  const [logged, free, left] = rows;  // newest first
  assert.equal(logged.model, 'mock-model');
  assert.equal(left.status, 499);
  assert.equal(left.estimated, true);
  assert.ok(left.completion_tokens > 0 && left.cost_usd > 0, JSON.stringify(left));
  assert.equal(free.unpriced, true);
  assert.equal(free.cost_usd, 0);
  assert.ok(free.completion_tokens > 0);
  assert.equal(left.request_body, undefined);
  assert.match(logged.request_body, /body-marker/);
  const spend = (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  assert.equal(usd(spend.spent_usd), rows.reduce((s, x) => s + usd(x.cost_usd), 0));
  assert.equal(spend.reserved_usd, 0);
});

test('restart: spend survives a graceful stop; a SIGKILL loses at most the rows not yet written, and spend still equals the call log', async () => {
  const cfg = config();
  let gw = await startGateway(cfg, ENV);
  const { secret } = await provision(gw);
  for (let i = 0; i < 10; ++i) assert.equal((await chat(gw, secret)).status, 200);
  const before = (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  gw.kill('SIGTERM');
  assert.equal(await waitExit(gw), 0);

  gw = await startGateway(cfg, ENV);
  const restored = (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  assert.equal(usd(restored.spent_usd), usd(before.spent_usd));
  assert.equal((await allCalls(gw)).length, 10);

  // 50 more, then SIGKILL right after the last answer.
  for (let i = 0; i < 50; ++i) assert.equal((await chat(gw, secret)).status, 200);
  gw.kill('SIGKILL');
  await waitExit(gw);
  gw = await startGateway(cfg, ENV);
  const rows = await allCalls(gw);
  const lost = 60 - rows.length;
  console.log(`# SIGKILL right after the last answer: ${lost} of 50 call-log rows lost (call_log.flush_interval 50ms)`);
  assert.ok(lost >= 0 && lost <= 50);
  const after = (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  assert.equal(usd(after.spent_usd), rows.reduce((s, x) => s + usd(x.cost_usd), 0));
});

test('prices: an admin price applies from the next request, and again after a restart', async () => {
  const cfg = config();
  let gw = await startGateway(cfg, ENV);
  const { secret } = await provision(gw);
  // The config prices output at 1000 USD per million tokens; the admin doubles it.
  const put = await admin(gw, 'PUT', 'prices/mock-model', { input: 0, output: 2000, max_output_tokens: 100000 });
  assert.equal(put.status, 200);
  const costOfNext = async () => {
    const r = await chat(gw, secret);
    assert.equal(r.status, 200);
    const id = r.headers.get('x-request-id');
    const row = await eventually(async () => (await allCalls(gw)).find((x) => x.request_id === id), 3000);
    assert.ok(row, 'the request is logged');
    return row;
  };
  let row = await costOfNext();
  assert.equal(usd(row.cost_usd), row.completion_tokens * 2000, JSON.stringify(row));

  gw.kill('SIGTERM');
  assert.equal(await waitExit(gw), 0);
  gw = await startGateway(cfg, ENV);  // the price is in the store, read at start-up
  row = await costOfNext();
  assert.equal(usd(row.cost_usd), row.completion_tokens * 2000, JSON.stringify(row));
});

test('reconcile: drift between the call log and the persisted spend is found, corrected and exported', async () => {
  const cfg = config();
  const gw = await startGateway(cfg, ENV);
  const { secret } = await provision(gw);
  for (let i = 0; i < 5; ++i) assert.equal((await chat(gw, secret)).status, 200);
  await eventually(async () => (await allCalls(gw)).length === 5, 3000);
  // Someone edits the spend table behind the gateway's back.
  storeExec(cfg, "UPDATE spend SET spent_micros = spent_micros + 1000000 WHERE scope = 'tenant'");
  const r = await admin(gw, 'POST', 'reconcile');
  assert.equal(r.status, 200);
  assert.equal(usd(r.body.drift_usd), usd(1));
  assert.equal(r.body.scopes_corrected, 1);
  assert.equal((await metrics(gw)).turnpike_spend_drift_usd, 1);
  const again = await admin(gw, 'POST', 'reconcile');
  assert.equal(again.body.drift_usd, 0);
});

test('a change another process commits to the store is picked up within hotpath.snapshot_ttl; 0s reads through on every request', async () => {
  const cfg = config({ hotpath: { snapshot_ttl: '200ms' } });
  const gw = await startGateway(cfg, ENV);
  const { secret, id } = await provision(gw);
  assert.equal((await chat(gw, secret)).status, 200);
  storeExec(cfg, `UPDATE api_keys SET status = 'revoked' WHERE public_id = '${id}'`);
  const refused = await eventually(async () => (await chat(gw, secret)).status === 401, 3000, 50);
  assert.ok(refused, 'the revocation written behind the gateway took effect');
  const m = await metrics(gw);
  assert.ok(stmt(m, 'change_check') >= 1);

  // Read-through: every request waits for a fresh snapshot (SQLite: 4 statements; PostgreSQL,
  // direct: the 4 SELECTs pipelined, 1 round trip), so a change is seen by the very next
  // request.
  const cfg0 = config({ hotpath: { snapshot_ttl: '0s' } });
  const gw0 = await startGateway(cfg0, ENV);
  const k0 = await provision(gw0);
  const before = await metrics(gw0);
  assert.equal((await chat(gw0, k0.secret)).status, 200);
  const after = await metrics(gw0);
  assert.equal(stmt(after, 'snapshot_load') - stmt(before, 'snapshot_load'), engine === 'sqlite' ? 4 : 1);
  storeExec(cfg0, `UPDATE api_keys SET status = 'revoked' WHERE public_id = '${k0.id}'`);
  assert.equal((await chat(gw0, k0.secret)).status, 401);
});

test('admin API: token required, clear errors naming the field, 409 on a duplicate; the CLI prints tables and JSON', async () => {
  const gw = await startGateway(config(), ENV);
  assert.equal((await admin(gw, 'GET', 'tenants', undefined, 'wrong')).status, 401);
  const unknown = await admin(gw, 'PUT', 'plans/p', { rpmm: 3 });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.field, 'rpmm');
  const typed = await admin(gw, 'PUT', 'plans/p', { rpm: 'many' });
  assert.equal(typed.body.error.field, 'rpm');
  assert.equal((await admin(gw, 'PUT', 'plans/p', { monthly_budget_usd: -1 })).body.error.field, 'monthly_budget_usd');
  assert.equal((await admin(gw, 'POST', 'tenants', { id: 'x', plan: 'nope' })).body.error.field, 'plan');
  assert.equal((await admin(gw, 'PUT', 'plans/p', { rpm: 5 })).status, 200);
  assert.equal((await admin(gw, 'POST', 'tenants', { id: 'x', plan: 'p' })).status, 201);
  assert.equal((await admin(gw, 'POST', 'tenants', { id: 'x', plan: 'p' })).status, 409);
  assert.equal((await admin(gw, 'GET', 'spend?month=2026-13')).body.error.field, 'month');
  assert.equal((await admin(gw, 'DELETE', 'tenants/x')).status, 405);
  assert.equal((await admin(gw, 'GET', 'nothing')).status, 404);

  const run = (...args) => execFileSync(BIN, ['admin', '--url', gw.url, ...args], { env: { ...process.env, TURNPIKE_ADMIN_TOKEN: TOKEN } }).toString();
  assert.match(run('tenants', 'list'), /^ID\s+NAME\s+PLAN\s+STATUS/m);
  const key = JSON.parse(run('--json', 'keys', 'create', '--tenant', 'x', '--rpm', '7'));
  assert.equal(key.rpm, 7);
  assert.match(run('keys', 'list', '--tenant', 'x'), new RegExp(key.id));
  assert.equal(JSON.parse(run('--json', 'keys', 'delete', key.id)).deleted, true);
  assert.doesNotMatch(run('keys', 'list', '--tenant', 'x'), new RegExp(key.id));
  const token = JSON.parse(run('--json', 'admin-tokens', 'create', '--tenant', 'x', '--name', 'ops'));
  assert.match(token.token, /^tpa-/);
  assert.match(run('admin-tokens', 'list', '--tenant', 'x'), new RegExp(token.id));
  assert.equal(JSON.parse(run('--json', 'admin-tokens', 'revoke', '--tenant', 'x', token.id)).status, 'revoked');
  // An Idempotency-Key names the key it makes: sent again, a 409 naming that key; the CLI sends
  // a fresh one per command when given none (two commands, two keys).
  const once = JSON.parse(run('--json', 'keys', 'create', '--tenant', 'x', '--idempotency-key', 'ci-run-42'));
  assert.throws(() => run('keys', 'create', '--tenant', 'x', '--idempotency-key', 'ci-run-42'),
    (e) => e.status === 1 && new RegExp(`HTTP 409: .*${once.id}.*field Idempotency-Key`).test(e.stderr.toString()));
  assert.equal(JSON.parse(run('--json', 'keys', 'list', '--tenant', 'x')).data.filter((k) => k.id === once.id).length, 1);
  const fresh = [0, 1].map(() => JSON.parse(run('--json', 'keys', 'create', '--tenant', 'x')).id);
  assert.notEqual(fresh[0], fresh[1]);
  const set = run('prices', 'set', 'mock-model', '--input', '0.5', '--output', '1.5', '--cache-write', '0.625', '--reasoning', '4.5', '--max-output-tokens', '4096');
  assert.match(set, /source: admin/);
  assert.match(set, /cache_write: 0\.625/);
  assert.match(set, /reasoning: 4\.5/);
  // A tenant's webhooks and the daily spend from the CLI (replay needs a delivery: webhooks.test.mjs).
  const hook = JSON.parse(run('--json', 'webhooks', 'create', '--tenant', 'x', '--url', 'http://127.0.0.1:9/h', '--events', 'budget.threshold_crossed'));
  assert.ok(hook.secret && hook.id, JSON.stringify(hook));
  assert.deepEqual(hook.event_types, ['budget.threshold_crossed']);
  assert.match(run('webhooks', 'list', '--tenant', 'x'), new RegExp(hook.id));
  assert.match(run('webhooks', 'deliveries', '--tenant', 'x', hook.id), /\(none\)/);
  run('webhooks', 'delete', '--tenant', 'x', hook.id);
  assert.doesNotMatch(run('webhooks', 'list', '--tenant', 'x'), new RegExp(hook.id));
  assert.deepEqual(JSON.parse(run('--json', 'spend', '--daily', '--tenant', 'x', '--group-by', 'key,model')).group_by, ['key', 'model']);
  // Without --reasoning, reasoning is priced as output.
  assert.match(run('prices', 'set', 'other-model', '--input', '0.5', '--output', '1.5', '--max-output-tokens', '4096'), /reasoning: 1\.5/);
  assert.match(run('prices', 'list'), /mock-model\s+0\.5\s+1\.5/);
  assert.throws(() => run('tenants', 'create', 'y', '--plan', 'missing'), (e) => e.status === 1 && /field plan/.test(e.stderr.toString()));
});

test('search: a plan with a price per query: N searches cost N x price in the call log and spend; the next is an ES-shaped 429', async () => {
  const PRICE = 0.002;
  const N = 4;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-gov-search-'));
  const gw = await startGateway(config() + `search:\n  path: ${path.join(dir, 'search.db')}\n`, ENV);
  const { secret } = await provision(gw, { plan: { monthly_budget_usd: N * PRICE } });
  // The CLI sets the price (a whole plan: the budget again with it).
  execFileSync(BIN, ['admin', '--url', gw.url, 'plans', 'put', 'p-t1', '--budget', String(N * PRICE), '--search-query-price', String(PRICE)],
    { env: { ...process.env, TURNPIKE_ADMIN_TOKEN: TOKEN } });
  const plan = (await admin(gw, 'GET', 'plans')).body.data.find((p) => p.id === 'p-t1');
  assert.equal(usd(plan.search_query_price_usd), usd(PRICE), JSON.stringify(plan));
  assert.equal((await admin(gw, 'PUT', 'plans/bad', { search_query_price_usd: -1 })).status, 400);

  const es = (method, route, body, type = 'application/json') => fetch(`${gw.url}/es/${route}`, {
    method, headers: { authorization: `ApiKey ${secret}`, 'content-type': type }, body,
  });
  // Writes are not queries: they do not take the price.
  assert.equal((await es('PUT', 'docs', JSON.stringify({ mappings: { properties: { title: { type: 'text' } } } }))).status, 200);
  const bulk = await es('POST', 'docs/_bulk', '{"index":{"_id":"1"}}\n{"title":"red fox"}\n{"index":{"_id":"2"}}\n{"title":"blue fox"}\n', 'application/x-ndjson');
  assert.equal(bulk.status, 200);
  // A search that fails costs nothing.
  assert.equal((await es('POST', 'missing/_search', '{}')).status, 404);
  for (let i = 0; i < N; i++) {
    const r = await es('POST', 'docs/_search', JSON.stringify({ query: { match: { title: 'fox' } } }));
    assert.equal(r.status, 200, `search ${i}`);
    assert.equal((await r.json()).hits.total.value, 2);
  }
  const refused = await es('POST', 'docs/_search', '{}');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('x-elastic-product'), 'Elasticsearch');
  const body = await refused.json();
  assert.equal(body.status, 429);
  assert.equal(body.error.type, 'status_exception');
  assert.match(body.error.reason, /budget/);

  const spend = (await admin(gw, 'GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  assert.equal(usd(spend.spent_usd), N * usd(PRICE));
  assert.equal(spend.reserved_usd, 0);
  const rows = await eventually(async () => {
    const r = await allCalls(gw);
    return r.length === N + 4 ? r : null;  // index, bulk, the 404, N searches, the 429
  }, 5000);
  assert.ok(rows, `every request reached the call log: ${JSON.stringify((await allCalls(gw)).map((r) => [r.model, r.status, r.cost_usd]))}`);
  const searches = rows.filter((r) => r.model === 'es_search' && r.status === 200);
  assert.equal(searches.length, N);
  assert.ok(searches.every((r) => usd(r.cost_usd) === usd(PRICE) && !r.unpriced), JSON.stringify(searches));
  assert.equal(rows.reduce((sum, r) => sum + usd(r.cost_usd), 0), N * usd(PRICE));
});
