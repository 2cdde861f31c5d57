// Call-log retention (call_log.retention) on the real binary, on SQLite and PostgreSQL 15: rows
// older than the retention are deleted by the store thread's job, the others and the spend rows
// stay. Rows are made old by rewriting their time in the database (sqlite3, psql), as an
// operator's tool would, while the gateway runs; the job (purge_interval 200ms) finds them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll, eventually, metricsOf, chatBody } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

after(async () => {
  await stopAll();
  stopAllPostgres();
});

const TOKEN = 'retention-admin';
const CALLS = 5;
const AGED = 3;
const DAY_MS = 86_400_000;

async function run(engine) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `turnpike-retention-${engine}-`));
  const mock = await startMock(['--tokens', '4']);
  const pg = engine === 'postgres' ? await startPostgres() : null;
  const dbPath = path.join(dir, 'turnpike.db');
  const store = pg ? { engine: 'postgres', url: pg.url, path: dbPath } : { path: dbPath };
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store,
    call_log: { flush_interval: '50ms', retention: '90d', purge_interval: '200ms' },
  }), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  const admin = async (method, route, body) => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return r.json();
  };
  await admin('PUT', 'plans/p', {});
  await admin('POST', 'tenants', { id: 't', plan: 'p' });
  const { key } = await admin('POST', 'keys', { tenant: 't' });
  for (let i = 0; i < CALLS; i++) {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chatBody(),
    });
    assert.equal(r.status, 200);
    await r.text();
    // Each call its own group commit (PostgreSQL: its own chunk), so that some can be aged.
    await eventually(async () => (await admin('GET', 'calls?limit=100')).data.length === i + 1);
  }
  const spendBefore = (await admin('GET', 'spend')).data;
  const idsBefore = (await admin('GET', 'calls?limit=100')).data.map((r) => r.id).sort((a, b) => a - b);
  assert.equal(idsBefore.length, CALLS);

  // Nothing is older than 90 days yet: the job has run (at start, then every 200 ms) for nothing.
  assert.equal((await metricsOf(gw)).turnpike_call_log_purged_rows_total, 0);

  const aged = idsBefore.slice(0, AGED);
  const shift = 100 * DAY_MS;
  if (pg) {
    pg.psql(`UPDATE call_log_chunks SET time_ms = (SELECT array_agg(t - ${shift} ORDER BY o) ` +
      `FROM unnest(time_ms) WITH ORDINALITY AS u(t, o)) WHERE first_id <= ${aged[AGED - 1]}`);
  } else {
    execFileSync('sqlite3', ['-cmd', '.timeout 10000', dbPath,
      `UPDATE call_log_rows SET time_ms = time_ms - ${shift} WHERE id <= ${aged[AGED - 1]}`]);
  }
  const purged = await eventually(async () => {
    const m = await metricsOf(gw);
    return m.turnpike_call_log_purged_rows_total === AGED ? m : null;
  }, 5000);
  assert.ok(purged, 'the aged rows were purged');
  const idsAfter = (await admin('GET', 'calls?limit=100')).data.map((r) => r.id).sort((a, b) => a - b);
  assert.deepEqual(idsAfter, idsBefore.slice(AGED));
  assert.deepEqual((await admin('GET', 'spend')).data, spendBefore);
  assert.ok(purged['turnpike_store_statements_total{op="call_log_purge"}'] >= 1);
}

test('retention purges old call-log rows on SQLite', () => run('sqlite'));
test('retention purges old call-log rows on PostgreSQL', { skip: needsPostgres() }, () => run('postgres'));
