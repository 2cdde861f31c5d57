// store.pool over a real PostgreSQL 15: the call log is written on a connection of its own, so a
// call-log batch commits while an admin operation is still waiting on the server. The admin
// operation is held by a table lock that another session (psql, outside Turnpike) takes on the
// prices table, which only the admin write touches; the call-log batches touch call_log,
// call_log_batches and spend. With pool: 4 the rows land and a call-log page is answered (a
// read lane) while the write waits; with pool: 1 (one connection, one thread, in order) the
// rows stay queued until the lock goes. Counts, never durations.
// Skipped only where the PostgreSQL binaries are absent (CI installs them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll, eventually, metricsOf } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } };
const REQUESTS = 20;
const skip = needsPostgres();

let mock;
let pg;
let databases = 0;
before(async () => {
  if (skip) return;
  mock = await startMock(['--tokens', '16']);
  pg = await startPostgres();
});
after(async () => { await stopAll(); stopAllPostgres(); });

async function gateway(pool) {
  const db = `pool_${++databases}`;
  pg.psql(`CREATE DATABASE ${db}`, 'postgres');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-pool-'));
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    // The webhook outbox polls on the control lane about once a second; off here so that lane's
    // count is the admin write's alone.
    webhooks: { enabled: false },
    store: {
      path: path.join(dir, 'turnpike.db'), engine: 'postgres',
      url: `postgresql://turnpike@127.0.0.1:${pg.port}/${db}`, pool,
    },
    call_log: { flush_interval: '50ms' },
    prices: PRICES,
  }), ENV);
  return { gw, db };
}

async function admin(gw, method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function chat(gw, secret) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 }),
  });
  await r.arrayBuffer();
  return r.status;
}

const metrics = metricsOf;

// Turnpike's statements waiting for a lock in `db`.
const lockWaits = (db) => Number(pg.psql(
  `SELECT count(*) FROM pg_stat_activity WHERE datname = '${db}' AND wait_event_type = 'Lock'`));
const callRows = (db) => Number(pg.psql('SELECT count(*) FROM call_log', db));

// A key, one answered request and its row committed: the starting point.
async function setUp(gw, db) {
  assert.equal((await admin(gw, 'PUT', 'plans/p1', {})).status, 200);
  assert.equal((await admin(gw, 'POST', 'tenants', { id: 't1', plan: 'p1' })).status, 201);
  const { key } = (await admin(gw, 'POST', 'keys', { tenant: 't1' })).body;
  assert.equal(await chat(gw, key), 200);
  assert.ok(await eventually(() => callRows(db) === 1, 5000), 'the first row');
  return key;
}

// Locks prices, starts an admin write that waits on it; resolves once Turnpike's statement is
// seen waiting on the lock.
async function blockedPriceWrite(gw, db) {
  const lock = await pg.holdInTransaction('LOCK TABLE prices IN ACCESS EXCLUSIVE MODE', db);
  let settled = null;
  const write = admin(gw, 'PUT', 'prices/mock-model', { input: 0, output: 2000, max_output_tokens: 100000 })
    .then((r) => { settled = r; return r; });
  assert.ok(await eventually(() => lockWaits(db) === 1, 5000), 'the admin write waits on the lock');
  return { lock, write, settled: () => settled };
}

test('pool: 4 - call-log batches commit and a call-log page is answered while an admin write waits on a lock', { skip }, async () => {
  const { gw, db } = await gateway(4);
  const key = await setUp(gw, db);
  const before = await metrics(gw);
  assert.equal(before.turnpike_store_connections, 4);
  const blocked = await blockedPriceWrite(gw, db);

  for (let i = 0; i < REQUESTS; ++i) assert.equal(await chat(gw, key), 200);
  assert.ok(await eventually(() => callRows(db) === 1 + REQUESTS, 5000),
    `rows committed while the admin write waits: ${callRows(db)}`);
  const page = await admin(gw, 'GET', 'calls?limit=5');
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, 5);
  // Still waiting: the rows and the page did not wait for it.
  assert.equal(blocked.settled(), null);
  assert.equal(lockWaits(db), 1);
  const during = await metrics(gw);
  assert.equal(during['turnpike_store_jobs_total{lane="read"}'] - (before['turnpike_store_jobs_total{lane="read"}'] ?? 0), 1);

  await blocked.lock.release();
  const written = await blocked.write;
  assert.equal(written.status, 200, JSON.stringify(written.body));
  // The price write and its admin audit row, both on the control lane. The audit row is posted
  // without waiting for it, so the answer can come before its job has run: wait for two, then
  // check that there is no third.
  const control = async () => {
    const now = await metrics(gw);
    return (now['turnpike_store_jobs_total{lane="control"}'] ?? 0)
      - (before['turnpike_store_jobs_total{lane="control"}'] ?? 0);
  };
  assert.ok(await eventually(async () => (await control()) >= 2, 5000), 'the write and its audit row');
  assert.equal(await control(), 2);
  assert.equal((await metrics(gw))['turnpike_call_log_write_errors_total'], 0);
});

test('pool: 1 - one connection: the rows wait in the queue behind the admin write, then land', { skip }, async () => {
  const { gw, db } = await gateway(1);
  const key = await setUp(gw, db);
  assert.equal((await metrics(gw)).turnpike_store_connections, 1);
  const blocked = await blockedPriceWrite(gw, db);

  for (let i = 0; i < 5; ++i) assert.equal(await chat(gw, key), 200);
  // The workers handed their rows over; the one store thread is inside the admin write.
  assert.ok(await eventually(async () => (await metrics(gw)).turnpike_call_log_queued === 5, 5000),
    'rows queued for the store thread');
  assert.equal(callRows(db), 1);
  assert.equal(blocked.settled(), null);

  await blocked.lock.release();
  assert.equal((await blocked.write).status, 200);
  assert.ok(await eventually(() => callRows(db) === 6, 5000), 'the queued rows land after it');
});
