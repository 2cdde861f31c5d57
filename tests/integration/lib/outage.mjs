// Outages of PostgreSQL and Redis under load, shared by fleet_outages.test.mjs (short, in CI)
// and bench/outage.mjs (longer, by hand). docs/RELIABILITY.md "Store and Redis outages".
//
// A fleet: one throwaway PostgreSQL 15 cluster (lib/postgres.mjs), one redis-server
// (lib/redis.mjs), the mock provider and two replicas of the real binary with the default
// fleet.outage_deadline (2 s). An outage is one of four: each server killed (SIGKILL to every one
// of its processes, then started again on the same port and data) or frozen (SIGSTOP to every one
// of its processes: a black hole that still completes TCP handshakes in the kernel, then
// SIGCONT). Load: `clients` loops, each sending plain chat requests back to back to the replicas
// in turn, every request with its own x-request-id, timed from send to the whole answer.
// What is counted (never a duration asserted): requests that took longer than the deadline plus
// MARGIN_MS, requests that got no answer at all, 503s without Retry-After or not in OpenAI's
// error shape, statuses other than 200/429/503, and, once the servers are back, requests
// answered 200 whose call-log row is missing or present more than once.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, sleep, eventually } from './harness.mjs';
import { startRedis, stopRedis } from './redis.mjs';
import { startPostgres } from './postgres.mjs';

export const TOKEN = 'test-admin-token';
export const DEADLINE_MS = 2000;  // fleet.outage_deadline's default: the configs set none
// What a request may take beyond the deadline: the mock's answer and a loaded 2-core machine.
export const MARGIN_MS = 1000;
// A client gives up on a request after this (counted as unanswered): far past the bound.
const ABANDON_MS = 15_000;
const PG_CTL = '/usr/lib/postgresql/15/bin/pg_ctl';
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } };

export async function startFleet({ replicas = 2 } = {}) {
  const fleet = {
    dir: mkdtempSync(path.join(os.tmpdir(), 'turnpike-outage-')),
    mock: await startMock(['--tokens', '16']),
    pg: await startPostgres(),
    redis: await startRedis(),
    gws: [],
  };
  for (let i = 0; i < replicas; ++i) fleet.gws.push(await startGateway(fleetConfig(fleet, i), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } }));
  return fleet;
}

function fleetConfig(fleet, i) {
  return gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${fleet.mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { engine: 'postgres', url: fleet.pg.url, path: path.join(fleet.dir, `replica${i}.db`) },
    call_log: { flush_interval: '50ms' },
    prices: PRICES,
    sections: { redis: { url: fleet.redis.url } },
  });
}

export async function admin(gw, method, route, body, headers = {}) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ABANDON_MS),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() };
}

// A tenant on a plan with a budget (its counters are Redis leases) and one key; { id, key }.
export async function provision(gw, tenant, plan = { monthly_budget_usd: 10_000 }) {
  const put = await admin(gw, 'PUT', `plans/p-${tenant}`, plan);
  if (put.status !== 200) throw new Error(`plan: ${JSON.stringify(put)}`);
  const made = await admin(gw, 'POST', 'tenants', { id: tenant, plan: `p-${tenant}` });
  if (made.status !== 201) throw new Error(`tenant: ${JSON.stringify(made)}`);
  return newKey(gw, tenant);
}

export async function newKey(gw, tenant, name = 'k') {
  const created = await admin(gw, 'POST', 'keys', { tenant, name });
  if (created.status !== 201) throw new Error(`key: ${JSON.stringify(created)}`);
  return { id: created.body.id, key: created.body.key, tenant };
}

export async function chat(gw, secret, requestId) {
  const started = performance.now();
  try {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, 'x-request-id': requestId },
      body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 16 }),
      signal: AbortSignal.timeout(ABANDON_MS),
    });
    const body = await r.json();
    return { id: requestId, status: r.status, ms: performance.now() - started, retryAfter: r.headers.get('retry-after'), body };
  } catch (e) {
    return { id: requestId, status: 0, ms: performance.now() - started, error: String(e) };
  }
}

// Every process of the cluster: the postmaster (postmaster.pid's first line) and its children.
function postgresPids(pg) {
  const postmaster = readFileSync(path.join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0].trim();
  let children = [];
  try {
    children = execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch { /* none */ }
  return [Number(postmaster), ...children.map(Number)];
}

// pg.start() without blocking the event loop (the clients' timings would include the wait):
// the same pg_ctl command as lib/postgres.mjs, run asynchronously.
function startPostgresAsync(pg) {
  const data = path.join(pg.dir, 'data');
  const opts = `-p ${pg.port} -k ${pg.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const args = ['-D', data, '-l', path.join(pg.dir, 'log'), '-o', opts, '-w', 'start'];
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', PG_CTL, ...args]] : [PG_CTL, args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { timeout: 120_000 }, (error) => (error ? reject(error) : resolve()));
  });
}

function signalAll(pids, signal) {
  for (const pid of pids) {
    try { process.kill(pid, signal); } catch { /* gone */ }
  }
}

// name -> async (fleet, holdMs, during): the outage, `during()` run while it lasts (its value
// returned); the server is always back when it returns, even if `during` threw.
export const OUTAGES = {
  'postgres killed': async (fleet, holdMs, during) => {
    signalAll(postgresPids(fleet.pg), 'SIGKILL');
    try {
      const [value] = await Promise.all([during(), sleep(holdMs)]);
      return value;
    } finally {
      await startPostgresAsync(fleet.pg);
    }
  },
  'postgres frozen': async (fleet, holdMs, during) => {
    const pids = postgresPids(fleet.pg);
    signalAll(pids, 'SIGSTOP');
    try {
      const [value] = await Promise.all([during(), sleep(holdMs)]);
      return value;
    } finally {
      signalAll(pids, 'SIGCONT');
    }
  },
  'redis killed': async (fleet, holdMs, during) => {
    const { port } = fleet.redis;
    await stopRedis(fleet.redis, 'SIGKILL');
    try {
      const [value] = await Promise.all([during(), sleep(holdMs)]);
      return value;
    } finally {
      fleet.redis = await startRedis(port);
    }
  },
  'redis frozen': async (fleet, holdMs, during) => {
    fleet.redis.proc.kill('SIGSTOP');
    try {
      const [value] = await Promise.all([during(), sleep(holdMs)]);
      return value;
    } finally {
      fleet.redis.proc.kill('SIGCONT');
    }
  },
};

// Runs `clients` request loops over the fleet's replicas: `beforeMs` of load, the outage (held
// `holdMs`, `during` run inside it), `afterMs` more. Returns every request's result and what
// `during` returned. The loops stop whatever happens.
export async function loadThrough(fleet, { secret, tag, clients = 4, beforeMs = 200, holdMs = 2600, afterMs = 400, outage, during = async () => null }) {
  const results = [];
  let stop = false;
  let n = 0;
  const loop = async (c) => {
    for (let i = c; !stop; ++i) {
      results.push(await chat(fleet.gws[i % fleet.gws.length], secret, `${tag}-${++n}`));
    }
  };
  const loops = Array.from({ length: clients }, (_, c) => loop(c));
  try {
    await sleep(beforeMs);
    const duringValue = await OUTAGES[outage](fleet, holdMs, during);
    await sleep(afterMs);
    return { results, during: duringValue };
  } finally {
    stop = true;
    await Promise.all(loops);
  }
}

// What the answers broke, as counts (0 everywhere is the bar).
export function tally(results) {
  const statuses = {};
  const out = { total: results.length, statuses, overDeadline: 0, unanswered: 0, badStatus: 0, bad503: 0, slowestMs: 0 };
  for (const r of results) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    out.slowestMs = Math.max(out.slowestMs, Math.round(r.ms));
    if (r.ms > DEADLINE_MS + MARGIN_MS) ++out.overDeadline;
    if (r.status === 0) ++out.unanswered;
    else if (![200, 429, 503].includes(r.status)) ++out.badStatus;
    if (r.status === 503 && !(Number(r.retryAfter) >= 1 && typeof r.body?.error?.message === 'string')) ++out.bad503;
  }
  return out;
}

// Once PostgreSQL answers again: the call log's rows for `tenant` by request id, waited for
// until every request answered 200 has one (or `timeoutMs`). Returns { missing, doubled }.
export async function checkRows(fleet, tenant, results, timeoutMs = 8000) {
  const ok = results.filter((r) => r.status === 200).map((r) => r.id);
  let counts = new Map();
  const read = () => {
    counts = new Map();
    const text = fleet.pg.psql(`SELECT request_id, COUNT(*) FROM call_log WHERE tenant_id = '${tenant}' GROUP BY 1`);
    for (const line of text.split('\n').filter(Boolean)) {
      const [id, count] = line.split('|');
      counts.set(id, Number(count));
    }
    return ok.every((id) => counts.has(id));
  };
  await eventually(() => {
    try { return read(); } catch { return false; }  // not up yet
  }, timeoutMs, 100);
  let missing = 0;
  for (const id of ok) if (!counts.has(id)) ++missing;
  let doubled = 0;
  for (const count of counts.values()) if (count > 1) ++doubled;
  return { ok: ok.length, rows: [...counts.values()].reduce((a, b) => a + b, 0), missing, doubled };
}

// Polls `gw` with `secret` until it answers 401 (the revocation took effect); ms it took, or -1.
export async function refusedWithin(gw, secret, timeoutMs, tag) {
  const start = performance.now();
  let i = 0;
  const refused = await eventually(async () => (await chat(gw, secret, `${tag}-${++i}`)).status === 401, timeoutMs, 20);
  return refused ? Math.round(performance.now() - start) : -1;
}
