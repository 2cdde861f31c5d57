// PostgreSQL and Redis outages under load in fleet mode (issue 28; docs/RELIABILITY.md "Store and
// Redis outages"): each server killed and restarted, and frozen (SIGSTOP: a black hole) and
// thawed, while four clients send requests back to back to two replicas with the default
// fleet.outage_deadline (2 s). Counted, each asserted 0: requests that took longer than the
// deadline plus a margin, requests never answered, answers other than 200/429/503, 503s without
// Retry-After or OpenAI's error shape, and, once the server is back, 200s whose call-log row is
// missing or doubled. A key revoked during the outage is refused by the other replica within
// REVOKE_BOUND_MS of the revocation (Redis outages: written to PostgreSQL as usual; PostgreSQL
// outages: the write answers 503 with Retry-After and is retried once the server is back).
// The longer run is bench/outage.mjs. Skipped only without PostgreSQL or redis-server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { stopAll, sleep, eventually, metricsOf } from './lib/harness.mjs';
import { stopRedis } from './lib/redis.mjs';
import { stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres, needsRedis } from './lib/requires.mjs';
import {
  DEADLINE_MS, MARGIN_MS, startFleet, provision, newKey, admin, chat, loadThrough, tally, checkRows, refusedWithin,
} from './lib/outage.mjs';

const skip = needsPostgres() || needsRedis();
// A revocation's bound (docs/RELIABILITY.md): the change feed's delay (LISTEN/NOTIFY, or its
// reconnect and one reload after a PostgreSQL outage) on a loaded machine.
const REVOKE_BOUND_MS = 5000;

let fleet;
before(async () => {
  if (skip) return;
  fleet = await startFleet();
});
after(async () => {
  await stopAll();
  if (fleet?.redis) await stopRedis(fleet.redis);
  stopAllPostgres();
});

// The outage under load; every count of lib/outage.mjs's tally and checkRows must be 0.
async function outageUnderLoad(name, tenant, during) {
  const [a, b] = fleet.gws;
  const provisioning = performance.now();
  const { key } = await provision(a, tenant);
  const revoked = await newKey(a, tenant, 'revoked');
  // Both replicas know the key to revoke before the outage starts.
  let warm = 0;
  for (const gw of [a, b]) {
    assert.ok(await eventually(async () => (await chat(gw, revoked.key, `${tenant}-warm-${++warm}`)).status === 200, REVOKE_BOUND_MS, 20));
  }
  const started = performance.now();
  console.log(`${name}: provisioned in ${Math.round(started - provisioning)} ms`);
  const run = await loadThrough(fleet, { secret: key, tag: tenant, outage: name, during: () => during(revoked) });
  const loadedMs = Math.round(performance.now() - started);
  const t = tally(run.results);
  const rows = await checkRows(fleet, tenant, run.results);
  console.log(`${name}: ${JSON.stringify(t)} rows ${JSON.stringify(rows)} revocation ${JSON.stringify(run.during)}; ` +
    `load ${loadedMs} ms, rows after ${Math.round(performance.now() - started) - loadedMs} ms`);
  assert.ok(t.statuses[200] > 0, 'requests were served');
  assert.equal(t.overDeadline, 0, `requests over ${DEADLINE_MS} + ${MARGIN_MS} ms`);
  assert.equal(t.unanswered, 0, 'requests never answered');
  assert.equal(t.badStatus, 0, `statuses ${JSON.stringify(t.statuses)}`);
  assert.equal(t.bad503, 0, '503s without Retry-After or an error body');
  assert.equal(rows.missing, 0, `200s without a call-log row (${rows.ok} answered 200)`);
  assert.equal(rows.doubled, 0, 'request ids logged twice');
  for (const gw of fleet.gws) {
    // The spool is rewritten once its replay is done: a moment after the rows are visible.
    const replayed = await eventually(async () => (await metricsOf(gw)).turnpike_store_spooled_rows === 0, 5000);
    assert.ok(replayed, 'the spool was replayed');
    assert.equal((await metricsOf(gw)).turnpike_store_spool_lost_rows_total, 0);
  }
  // The revocation made during the outage: accepted (Redis), or refused within the deadline
  // with Retry-After (PostgreSQL) and retried now; then refused by the other replica within the
  // bound.
  const revocation = run.during;
  assert.equal(revocation.status, revocation.expected, JSON.stringify(revocation));
  if (revocation.retry) {
    assert.ok(revocation.ms <= DEADLINE_MS + MARGIN_MS, `the revocation waited ${revocation.ms} ms`);
    assert.ok(Number(revocation.retryAfter) >= 1, 'Retry-After');
    assert.equal(await retryRevoke(revoked), 200, 'the retried revocation');
  }
  if (revocation.create) await checkIdempotentCreate(tenant, revocation.create);
  const refusedMs = await refusedWithin(b, revoked.key, REVOKE_BOUND_MS, `${tenant}-revoked`);
  assert.ok(refusedMs >= 0, 'the key revoked during the outage is refused by the other replica');
  return run;
}

// Redis down: the revocation is written to PostgreSQL at once.
async function revokeThroughA(revoked) {
  await sleep(100);
  const r = await admin(fleet.gws[0], 'POST', `keys/${revoked.id}/revoke`);
  return { status: r.status, expected: 200 };
}

// PostgreSQL down: the revocation cannot be written; it answers 503 with Retry-After within the
// deadline, and is retried once the server is back (outageUnderLoad). A frozen server may still
// take the first write once thawed (the answer could not wait for it); the retry is harmless.
// A key made during the outage, with an Idempotency-Key: refused like the revocation (503), and
// retried once the server is back. A frozen server may take the first write when thawed; the
// retry is then a 409 naming that key, never a second one.
async function revokeRefused(revoked) {
  await sleep(100);
  const started = performance.now();
  const idempotency = { 'idempotency-key': `outage-${revoked.id}` };
  const [r, made] = await Promise.all([
    admin(fleet.gws[0], 'POST', `keys/${revoked.id}/revoke`),
    admin(fleet.gws[0], 'POST', 'keys', { tenant: revoked.tenant, name: 'made-in-outage' }, idempotency),
  ]);
  return {
    status: r.status, expected: 503, ms: Math.round(performance.now() - started), retryAfter: r.retryAfter, retry: true,
    create: { status: made.status, retryAfter: made.retryAfter, headers: idempotency },
  };
}

// The create refused during the outage, retried on the other replica until the server answers:
// made now (201) or made by the first attempt after all (409 naming it); either way one key
// with that name, the same one on both replicas.
async function checkIdempotentCreate(tenant, create) {
  assert.equal(create.status, 503, `the create during the outage: ${JSON.stringify(create)}`);
  assert.ok(Number(create.retryAfter) >= 1, 'Retry-After on the create');
  let again;
  for (let i = 0; i < 40; ++i) {
    again = await admin(fleet.gws[1], 'POST', 'keys', { tenant, name: 'made-in-outage' }, create.headers);
    if (again.status !== 503) break;
    await sleep(Number(again.retryAfter ?? 1) * 250);
  }
  assert.ok(again.status === 201 || again.status === 409, JSON.stringify(again));
  const id = again.status === 201 ? again.body.id : /made with this Idempotency-Key already: ([a-z2-7]{12})/.exec(again.body.error.message)?.[1];
  assert.ok(id, JSON.stringify(again));
  console.log(`the create retried after the outage: ${again.status} (${id})`);
  for (const gw of fleet.gws) {
    const one = await eventually(async () => {
      const listed = await admin(gw, 'GET', `keys?tenant=${tenant}`);
      const made = listed.body.data.filter((k) => k.name === 'made-in-outage');
      return made.length === 1 && made[0].id === id;
    }, REVOKE_BOUND_MS, 50);
    assert.ok(one, 'exactly one key made through the outage, on each replica');
  }
}

async function retryRevoke(revoked) {
  for (let i = 0; i < 40; ++i) {
    const again = await admin(fleet.gws[0], 'POST', `keys/${revoked.id}/revoke`);
    if (again.status !== 503) return again.status;
    await sleep(Number(again.retryAfter ?? 1) * 250);
  }
  return 503;
}

test('PostgreSQL killed mid-load and restarted: nothing waits past the deadline, every 200 logged once', { skip }, async () => {
  await outageUnderLoad('postgres killed', 'pgkilled', revokeRefused);
});

test('PostgreSQL frozen mid-load (SIGSTOP) and thawed: nothing waits past the deadline, every 200 logged once', { skip }, async () => {
  await outageUnderLoad('postgres frozen', 'pgfrozen', revokeRefused);
});

test('Redis killed mid-load and restarted: nothing waits past the deadline, every 200 logged once', { skip }, async () => {
  await outageUnderLoad('redis killed', 'rediskilled', revokeThroughA);
});

test('Redis frozen mid-load (SIGSTOP) and thawed: nothing waits past the deadline, every 200 logged once', { skip }, async () => {
  await outageUnderLoad('redis frozen', 'redisfrozen', revokeThroughA);
});
