// The PostgreSQL engine as a fleet: replicas over one PostgreSQL 15 (a throwaway cluster,
// lib/postgres.mjs) and through PgBouncer 1.18 in transaction pooling mode. A revocation on one
// replica reaches the others (LISTEN/NOTIFY; measured), and the snapshot_ttl poll is the bound
// when a notification is lost; PostgreSQL restarted under load: no request hangs, and the
// call log ends with exactly one row per answered request (spooled, replayed, never twice);
// start-up with PostgreSQL unreachable exits clearly or waits (--wait-for-deps).
// Skipped only where the PostgreSQL binaries are absent (CI installs them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  startMock, startGateway, startProcess, gatewayConfig, stopAll, sleep, eventually, waitExit, metricsOf } from './lib/harness.mjs';
import {
  startPostgres, startPgBouncer, stopAllPostgres, freePort,
} from './lib/postgres.mjs';
import { needsPgbouncer, needsPostgres } from './lib/requires.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } };
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

function freshDatabase() {
  const db = `fleet_${++databases}`;
  pg.psql(`CREATE DATABASE ${db}`, 'postgres');
  return db;
}
const urlOf = (port, db) => `postgresql://turnpike@127.0.0.1:${port}/${db}`;

function config(store, { hotpath = {} } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-fleet-'));
  return gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db'), engine: 'postgres', ...store },
    call_log: { flush_interval: '50ms' },
    hotpath,
    prices: PRICES,
  });
}

async function admin(gw, method, route, body, headers = {}) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function chatStatus(gw, secret, timeoutMs = 5000) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    signal: AbortSignal.timeout(timeoutMs),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 1000 }),
  });
  await r.arrayBuffer();
  return r.status;
}

// Plan p1 and tenant t1 on it, through `gw`.
async function provisionTenant(gw) {
  assert.equal((await admin(gw, 'PUT', 'plans/p1', {})).status, 200);
  assert.equal((await admin(gw, 'POST', 'tenants', { id: 't1', plan: 'p1' })).status, 201);
}

const metrics = metricsOf;
const stmt = (m, op) => m[`turnpike_store_statements_total{op="${op}"}`];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// Revokes `n` keys one by one through `a` and polls `b` (every 2 ms) until each is refused;
// returns the delays in ms, sorted.
async function revocationDelays(a, b, n) {
  const delays = [];
  for (let i = 0; i < n; ++i) {
    const created = await admin(a, 'POST', 'keys', { tenant: 't1' });
    assert.equal(created.status, 201);
    const secret = created.body.key;
    assert.ok(await eventually(async () => (await chatStatus(b, secret)) === 200, 5000, 5), 'B knows the new key');
    const start = performance.now();
    assert.equal((await admin(a, 'POST', `keys/${created.body.id}/revoke`)).status, 200);
    const refused = await eventually(async () => (await chatStatus(b, secret)) === 401, 5000, 2);
    assert.ok(refused, `key ${i} refused on B`);
    delays.push(performance.now() - start);
  }
  return delays.sort((x, y) => x - y);
}

test('two replicas over one PostgreSQL: a key revoked on A is refused on B (LISTEN/NOTIFY; delay measured); one shared call log', { skip }, async () => {
  const db = freshDatabase();
  const store = { url: urlOf(pg.port, db) };
  const a = await startGateway(config(store), ENV);
  const b = await startGateway(config(store), ENV);
  await provisionTenant(a);
  const delays = await revocationDelays(a, b, 50);
  console.log(`# revocation A -> B over LISTEN/NOTIFY, 50 keys: p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms, max ${delays.at(-1).toFixed(1)} ms`);
  // Both replicas log into the one database: 50 answered requests on B at least (one 200 per
  // key, plus the polls answered before the revocation arrived; a refused key's 401 writes no
  // row), every row once.
  await sleep(300);
  const [rows, distinct] = pg.psql('SELECT count(*), count(DISTINCT request_id) FROM call_log', db).split('|').map(Number);
  assert.ok(rows >= 50, `rows ${rows}`);
  assert.equal(rows, distinct);

  // A key deleted on A: refused on B, and gone from B's admin API (its snapshot).
  const doomed = await admin(a, 'POST', 'keys', { tenant: 't1' });
  assert.ok(await eventually(async () => (await chatStatus(b, doomed.body.key)) === 200, 5000, 5));
  assert.equal((await admin(a, 'DELETE', `keys/${doomed.body.id}`)).status, 200);
  assert.ok(await eventually(async () => (await chatStatus(b, doomed.body.key)) === 401, 5000, 5),
    'the deleted key refused on B');
  assert.equal((await admin(b, 'GET', `keys/${doomed.body.id}`)).status, 404);

  // One create sent to both replicas at once with one Idempotency-Key (a client retrying on
  // another replica): PostgreSQL's primary key lets one in; the other is a 409 naming it.
  for (let i = 0; i < 10; ++i) {
    const headers = { 'idempotency-key': `both-replicas-${i}` };
    const answers = await Promise.all([a, b].map((gw) => admin(gw, 'POST', 'keys', { tenant: 't1', name: `both-${i}` }, headers)));
    const made = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 409);
    assert.equal(made.length, 1, JSON.stringify(answers));
    assert.equal(refused.length, 1, JSON.stringify(answers));
    assert.match(refused[0].body.error.message, new RegExp(`already: ${made[0].body.id}\\.`));
    for (const gw of [a, b]) {
      assert.ok(await eventually(async () => (await admin(gw, 'GET', 'keys?tenant=t1')).body.data.filter((k) => k.name === `both-${i}`).length === 1, 5000, 10));
    }
  }
});

test('reconcile over two replicas: 409 while another holds the store\'s reconcile lock, then the drift is added once', { skip }, async () => {
  const db = freshDatabase();
  const store = { url: urlOf(pg.port, db) };
  const a = await startGateway(config(store), ENV);
  const b = await startGateway(config(store), ENV);
  await provisionTenant(a);
  const created = await admin(a, 'POST', 'keys', { tenant: 't1' });
  assert.equal(created.status, 201);
  for (let i = 0; i < 4; ++i) {
    assert.equal(await chatStatus(i % 2 ? b : a, created.body.key), 200);
  }
  await eventually(() => Number(pg.psql('SELECT count(*) FROM call_log', db)) === 4, 3000);
  const spentAndLogged = () => pg.psql(
    "SELECT (SELECT spent_micros FROM spend WHERE scope = 'tenant'), (SELECT SUM(cost_micros) FROM call_log)", db)
    .split('|').map(Number);
  // The tenant's spend row holds the four requests' cost before it is edited (the edit must
  // land on a row, not before it exists).
  assert.ok(await eventually(() => { const [s, l] = spentAndLogged(); return s > 0 && s === l; }, 3000),
    `spend and call log: ${spentAndLogged()}`);
  // Someone edits the spend table behind the replicas' backs.
  assert.equal(pg.psql("UPDATE spend SET spent_micros = spent_micros + 1000000 WHERE scope = 'tenant' RETURNING 1", db), '1');
  // Another replica's reconcile, as far as the store knows: a session holding its lock.
  const holder = await pg.holdInTransaction('SELECT pg_advisory_xact_lock(7463726532)', db);
  const busy = await admin(a, 'POST', 'reconcile');
  assert.equal(busy.status, 409, JSON.stringify(busy.body));
  assert.match(JSON.stringify(busy.body), /another replica is reconciling/);
  await holder.release();
  // Both at once: the drift is taken out once (the other answers 409 or finds none).
  const [ra, rb] = await Promise.all([admin(a, 'POST', 'reconcile'), admin(b, 'POST', 'reconcile')]);
  const drifts = [ra, rb].filter((r) => r.status === 200).map((r) => r.body.drift_usd);
  assert.ok(drifts.length >= 1, `${ra.status} ${rb.status}`);
  for (const r of [ra, rb]) assert.ok(r.status === 200 || r.status === 409, `${r.status}`);
  assert.equal(drifts.reduce((x, y) => x + y, 0), 1,
    `drifts ${JSON.stringify([ra.body, rb.body])}, spend and call log now: ${spentAndLogged()}`);
  const [spent, logged] = spentAndLogged();
  assert.equal(spent, logged);
});

test('a lost notification: the snapshot_ttl poll still finds the change (one statement per poll)', { skip }, async () => {
  const db = freshDatabase();
  const gw = await startGateway(config({ url: urlOf(pg.port, db) }, { hotpath: { snapshot_ttl: '300ms' } }), ENV);
  await provisionTenant(gw);
  const key = (await admin(gw, 'POST', 'keys', { tenant: 't1' })).body;
  assert.equal(await chatStatus(gw, key.key), 200);
  // Triggers off for this transaction (so no NOTIFY), the version bumped by hand: only the poll
  // can see it.
  pg.psql(`BEGIN; SET LOCAL session_replication_role = replica;
    UPDATE api_keys SET status = 'revoked' WHERE public_id = '${key.id}';
    UPDATE records_version SET version = version + 1; COMMIT;`, db);
  const before = stmt(await metrics(gw), 'change_check');
  assert.ok(await eventually(async () => (await chatStatus(gw, key.key)) === 401, 5000, 20), 'refused after the poll');
  assert.ok(stmt(await metrics(gw), 'change_check') > before, 'a version poll found it');
});

test('through PgBouncer 1.18 (transaction pooling): unnamed statements, no pipelining, LISTEN on notify_url; revocation reaches the other replica', { skip: skip || needsPgbouncer() }, async () => {
  const bouncer = await startPgBouncer(pg);
  // PgBouncer routes database "turnpike" only: this test uses it (a fresh schema there).
  pg.psql('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
  const store = { url: bouncer.url, notify_url: pg.url };
  const a = await startGateway(config(store, { hotpath: { snapshot_ttl: '0s' } }), ENV);
  const b = await startGateway(config(store), ENV);
  await provisionTenant(a);
  // Read-through on A: each request reloads, 4 statements sent one by one (no pipeline).
  const key = (await admin(a, 'POST', 'keys', { tenant: 't1' })).body;
  const m0 = await metrics(a);
  assert.equal(await chatStatus(a, key.key), 200);
  assert.equal(stmt(await metrics(a), 'snapshot_load') - stmt(m0, 'snapshot_load'), 4);
  const delays = await revocationDelays(a, b, 20);
  console.log(`# revocation A -> B through PgBouncer (LISTEN direct), 20 keys: p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms`);
  await sleep(300);
  const [rows, distinct] = pg.psql('SELECT count(*), count(DISTINCT request_id) FROM call_log').split('|').map(Number);
  assert.ok(rows >= 20 && rows === distinct, `rows ${rows}, distinct ${distinct}`);
  bouncer.stop();
});

test('PostgreSQL restarted mid-load: no request hangs, admin writes answer 503 while it is down, and the call log has one row per answered request', { skip }, async () => {
  const db = freshDatabase();
  const cfg = config({ url: urlOf(pg.port, db) });
  const spoolPath = `${/path: (.*turnpike\.db)/.exec(cfg)[1]}.spool`;
  const gw = await startGateway(cfg, ENV);
  await provisionTenant(gw);
  const { key } = (await admin(gw, 'POST', 'keys', { tenant: 't1' })).body;

  let stop = false;
  let answered = 0;
  let failed = 0;
  const worker = async () => {
    while (!stop) {
      try {
        const status = await chatStatus(gw, key, 5000);
        assert.equal(status, 200);
        answered += 1;
      } catch (e) {
        failed += 1;  // a hang past 5 s, or a refused request
      }
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, worker));
  await sleep(500);
  pg.stop('fast');
  await sleep(300);
  const during = await admin(gw, 'PUT', 'plans/p2', {});
  assert.equal(during.status, 503, JSON.stringify(during.body));
  const spooled = await eventually(async () => (await metrics(gw)).turnpike_store_spooled_rows > 0, 3000);
  assert.ok(spooled, 'rows spooled while PostgreSQL is down');
  await sleep(500);
  // A copy of the spool as it is now: replayed again after the rows are in, as a crash between
  // a commit and the spool's rewrite would.
  copyFileSync(spoolPath, `${spoolPath}.copy`);
  pg.start();
  await sleep(700);
  stop = true;
  await load;
  assert.equal(failed, 0, 'every request answered 200 within 5 s');
  const drained = await eventually(async () => {
    const m = await metrics(gw);
    return m.turnpike_store_spooled_rows === 0 && m.turnpike_call_log_queued === 0;
  }, 10000, 100);
  assert.ok(drained, 'the spool was replayed');
  await sleep(300);
  const [rows, distinct, spend] = pg.psql(
    "SELECT count(*), count(DISTINCT request_id), (SELECT COALESCE(SUM(spent_micros), 0) FROM spend WHERE scope = 'tenant') = COALESCE(SUM(cost_micros), 0) FROM call_log", db).split('|');
  console.log(`# PostgreSQL restart under load: ${answered} requests answered, ${rows} call-log rows`);
  assert.equal(Number(rows), answered, 'rows = answered requests');
  assert.equal(Number(distinct), answered, 'no row twice');
  assert.equal(spend, 't', 'spend equals the call log');
  assert.equal((await metrics(gw)).turnpike_call_log_write_errors_total, 0);

  // Replay after a crash: the restarted gateway finds the old spool and sends it again at
  // start-up; the rows are there already, so nothing changes.
  gw.kill('SIGTERM');
  assert.equal(await waitExit(gw), 0);
  renameSync(`${spoolPath}.copy`, spoolPath);
  const again = await startGateway(cfg, ENV);
  const replayed = await metrics(again);
  assert.equal(replayed.turnpike_store_spooled_rows, 0, 'replayed at start-up');
  assert.equal(replayed.turnpike_store_spool_lost_rows_total, 0, 'the server took the replay');
  const after = pg.psql(
    "SELECT count(*), count(DISTINCT request_id), (SELECT SUM(spent_micros) FROM spend WHERE scope = 'tenant') FROM call_log", db);
  const [rows2, distinct2] = after.split('|').map(Number);
  assert.equal(rows2, answered, 'a replayed spool writes no row twice');
  assert.equal(distinct2, answered);
  assert.equal(Number(after.split('|')[2]), answered * 16000, 'nor any spend twice');
});

test('start-up with PostgreSQL unreachable: a clear message and exit 1; --wait-for-deps waits until it is up', { skip }, async () => {
  const port = await freePort();
  const text = config({ url: urlOf(port, 'turnpike') });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-wait-'));
  const file = path.join(dir, 'turnpike.yaml');
  writeFileSync(file, text);
  await assert.rejects(startProcess(['serve', '--config', file], ENV),
    (e) => /cannot reach PostgreSQL at postgresql:\/\/turnpike@127\.0\.0\.1:\d+\/turnpike/.test(e.message) && /exited 1/.test(e.message));

  // Waiting: nothing listens on the configured port until, after start-up began, a TCP proxy
  // to the running cluster appears there.
  const net = await import('node:net');
  // A start meant to wait (the sleep, then up to a retry interval): more than the default 10 s.
  const waiting = startProcess(['serve', '--wait-for-deps', '--config', file], { ...ENV, timeoutMs: 60_000 });
  await sleep(1500);
  const proxy = net.createServer((client) => {
    const server = net.connect(pg.port, '127.0.0.1');
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  await new Promise((r) => proxy.listen(port, '127.0.0.1', r));
  const gw = await waiting;
  assert.match(gw.errors(), /waiting for PostgreSQL \(--wait-for-deps\)/);
  gw.kill('SIGTERM');
  assert.equal(await waitExit(gw), 0);
  proxy.close();
});
