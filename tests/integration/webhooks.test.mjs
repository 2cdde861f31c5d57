// The webhook outbox end to end (doors/webhooks/): budget alerts at 50/80/100% of a small budget
// arrive once per threshold, signed by the Standard Webhooks scheme (verified here with
// node:crypto); a receiver that answers 500 is retried with the same webhook-id; the admin API
// lists and replays deliveries; and the bar: a delivery survives a restart of the gateway and of
// the receiver (nothing lost; any duplicate carries the same webhook-id).
// webhooks_postgres.test.mjs runs this file with TURNPIKE_TEST_STORE_ENGINE=postgres (a
// throwaway cluster, lib/postgres.mjs; a fresh database per gateway).
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  eventually, gatewayConfig, metricsOf, startGateway, startMock, stopAll, waitExit,
} from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
// 16 completion tokens at 1000 USD per million: 0.016 USD a request; ten make the budget.
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } };
const BUDGET_USD = 0.16;
// poll_interval far above what any test waits: every delivery and retry here is sent because
// the loop was woken (a queued or replayed delivery) or slept until the next one fell due.
const WEBHOOKS = {
  poll_interval: '60s', retry_base: '100ms', retry_max: '400ms', max_attempts: 1000,
  timeout: '2s',
};

let mock;
before(async () => { mock = await startMock(['--tokens', '16']); });
after(async () => { await stopAll(); stopAllPostgres(); });

const engine = process.env.TURNPIKE_TEST_STORE_ENGINE ?? 'sqlite';
const pg = engine === 'postgres' ? await startPostgres() : null;
let databases = 0;
// The engine's store section: the SQLite file in `dir`, or a fresh PostgreSQL database.
function storeFor(dir) {
  if (engine !== 'postgres') return { path: path.join(dir, 'turnpike.db') };
  const db = `webhooks_${++databases}`;
  pg.psql(`CREATE DATABASE ${db}`, 'postgres');
  return { engine: 'postgres', url: pg.url.replace(/\/turnpike$/, `/${db}`), path: path.join(dir, 'turnpike') };
}

// A receiver on `port` (0: any): every request it gets ({id, timestamp, signature, body,
// status}); `answers` is the list of statuses to give, then 200.
function startReceiver(port = 0, answers = []) {
  const got = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const status = answers.length ? answers.shift() : 200;
      got.push({
        id: req.headers['webhook-id'], timestamp: req.headers['webhook-timestamp'],
        signature: req.headers['webhook-signature'], body, status,
      });
      res.writeHead(status).end();
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => {
    resolve({ server, got, port: server.address().port, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) });
  }));
}

// The Standard Webhooks check a receiver makes.
function verify(secret, m) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${m.id}.${m.timestamp}.${m.body}`).digest();
  const [version, sig] = m.signature.split(',');
  return version === 'v1' && timingSafeEqual(Buffer.from(sig, 'base64'), expected);
}

function config(dir, webhooks = WEBHOOKS) {
  return gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: storeFor(dir),
    call_log: { flush_interval: '50ms' },
    prices: PRICES,
    sections: { webhooks },
  });
}

async function api(gw, method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

// A plan with the small budget, tenant t1 on it, a key; its secret.
async function provision(gw) {
  assert.equal((await api(gw, 'PUT', 'plans/p1', { monthly_budget_usd: BUDGET_USD })).status, 200);
  assert.equal((await api(gw, 'POST', 'tenants', { id: 't1', plan: 'p1' })).status, 201);
  const key = await api(gw, 'POST', 'keys', { tenant: 't1', name: 'k' });
  assert.equal(key.status, 201);
  return key.body.key;
}

async function spend(gw, key, requests) {
  for (let i = 0; i < requests; i++) {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(r.status, 200, `request ${i}: ${await r.text()}`);
    await r.arrayBuffer().catch(() => {});
  }
}

// The distinct deliveries a receiver accepted, by webhook-id: {id -> body}.
function accepted(receiver) {
  const out = new Map();
  for (const m of receiver.got) if (m.status === 200) out.set(m.id, JSON.parse(m.body));
  return out;
}

test('budget alerts: one signed delivery per threshold; a 500 is retried under the same id; list and replay', async () => {
  const receiver = await startReceiver(0, [500]);
  const gw = await startGateway(config(mkdtempSync(path.join(os.tmpdir(), 'turnpike-wh-'))), ENV);
  const key = await provision(gw);
  const created = await api(gw, 'POST', 'tenants/t1/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { id: wid, secret } = created.body;
  assert.match(secret, /^whsec_/);
  const listed = await api(gw, 'GET', 'tenants/t1/webhooks');
  assert.equal(listed.body.data.length, 1);
  assert.equal(listed.body.data[0].secret, undefined, 'the secret is shown once');
  assert.equal((await api(gw, 'POST', 'tenants/t1/webhooks', { url: 'ftp://x' })).status, 400);

  await spend(gw, key, 10);
  // 50%, 80%, 100% crossed, and the budget exceeded: four deliveries.
  const got = await eventually(() => accepted(receiver).size >= 4 && accepted(receiver), 8000);
  assert.ok(got, `received: ${JSON.stringify(receiver.got.map((m) => [m.status, m.body]))}`);
  for (const m of receiver.got) assert.ok(verify(secret, m), `signature of ${m.id}`);
  const crossed = [...got.values()].filter((b) => b.type === 'budget.threshold_crossed')
    .map((b) => b.data.threshold_percent).sort((a, b) => a - b);
  assert.deepEqual(crossed, [50, 80, 100]);
  assert.equal([...got.values()].filter((b) => b.type === 'budget.exceeded').length, 1);
  // The 500 was retried with the same id, and only that one was sent twice.
  assert.equal(receiver.got.length, 5);
  assert.equal(receiver.got[0].status, 500);
  assert.ok(got.has(receiver.got[0].id));

  // More spend crosses nothing new.
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_budget_alerts_total{threshold="50"}'], 1);
  assert.equal(m['turnpike_budget_alerts_total{threshold="80"}'], 1);
  assert.equal(m['turnpike_budget_alerts_total{threshold="100"}'], 1);

  const page = await api(gw, 'GET', `tenants/t1/webhooks/${wid}/deliveries?limit=3`);
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, 3);
  assert.equal(page.body.has_more, true);
  const rest = await api(gw, 'GET', `tenants/t1/webhooks/${wid}/deliveries?after=${page.body.last_id}`);
  const all = [...page.body.data, ...rest.body.data];
  assert.equal(all.length, 4);
  await eventually(async () => (await api(gw, 'GET', `tenants/t1/webhooks/${wid}/deliveries`)).body.data.every((d) => d.status === 'delivered'));
  const first = all.find((d) => d.id === receiver.got[0].id);
  assert.equal(first.attempts, 2);

  // Replay: the same id again; another tenant's path does not reach it.
  assert.equal((await api(gw, 'POST', 'tenants', { id: 't2', plan: 'p1' })).status, 201);
  assert.equal((await api(gw, 'POST', `tenants/t2/webhook-deliveries/${first.id}/replay`)).status, 404);
  assert.equal((await api(gw, 'POST', `tenants/t1/webhook-deliveries/${first.id}/replay`)).status, 202);
  assert.ok(await eventually(() => receiver.got.length === 6, 5000));
  assert.equal(receiver.got[5].id, first.id);
  assert.ok(verify(secret, receiver.got[5]));

  assert.equal((await api(gw, 'DELETE', `tenants/t2/webhooks/${wid}`)).status, 404);
  assert.equal((await api(gw, 'DELETE', `tenants/t1/webhooks/${wid}`)).status, 200);
  assert.equal((await api(gw, 'GET', `tenants/t1/webhooks/${wid}`)).status, 404);
  await receiver.close();
});

test('budget alerts: a plan\'s own thresholds replace the gateway\'s; the store keeps them', async () => {
  const receiver = await startReceiver(0);
  const gw = await startGateway(config(mkdtempSync(path.join(os.tmpdir(), 'turnpike-wh-plan-'))), ENV);
  const key = await provision(gw);
  const put = await api(gw, 'PUT', 'plans/p1', { monthly_budget_usd: BUDGET_USD, budget_alerts: [60, 20] });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual(put.body.budget_alerts, [20, 60]);
  const plans = await api(gw, 'GET', 'plans');
  assert.deepEqual(plans.body.data.find((p) => p.id === 'p1').budget_alerts, [20, 60]);
  assert.equal((await api(gw, 'POST', 'tenants/t1/webhooks', { url: `http://127.0.0.1:${receiver.port}/hook` })).status, 201);

  await spend(gw, key, 10);
  // Past the whole budget: the plan's 20% and 60% only (none at 100%, so no budget.exceeded).
  const got = await eventually(() => accepted(receiver).size >= 2 && accepted(receiver), 8000);
  assert.ok(got, `received: ${JSON.stringify(receiver.got.map((m) => [m.status, m.body]))}`);
  const crossed = [...got.values()].map((b) => `${b.type}:${b.data.threshold_percent}`).sort();
  assert.deepEqual(crossed, ['budget.threshold_crossed:20', 'budget.threshold_crossed:60']);
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_budget_alerts_total{threshold="20"}'], 1);
  assert.equal(m['turnpike_budget_alerts_total{threshold="60"}'], 1);
  // The gateway's own thresholds are listed, not crossed for this plan.
  assert.equal(m['turnpike_budget_alerts_total{threshold="50"}'], 0);
  assert.equal(receiver.got.length, 2);
  await receiver.close();
});

test('bar: deliveries survive a restart of the gateway and of the receiver; duplicates keep their id', async () => {
  // The receiver's port, closed while the events happen.
  const probe = await startReceiver();
  const port = probe.port;
  await probe.close();
  const text = config(mkdtempSync(path.join(os.tmpdir(), 'turnpike-wh-restart-')));
  let gw = await startGateway(text, ENV);
  const key = await provision(gw);
  const created = await api(gw, 'POST', 'tenants/t1/webhooks', { url: `http://127.0.0.1:${port}/hook` });
  const { secret } = created.body;
  await spend(gw, key, 10);
  // Attempted (refused) at least once each before the restart.
  await eventually(async () => (await metricsOf(gw))['turnpike_webhook_deliveries_total{outcome="retried"}'] >= 4, 5000);
  gw.kill('SIGTERM');
  assert.equal(await waitExit(gw), 0);

  gw = await startGateway(text, ENV);
  const receiver = await startReceiver(port);
  const got = await eventually(() => accepted(receiver).size >= 4 && accepted(receiver), 8000);
  assert.ok(got, `received after the restart: ${JSON.stringify(receiver.got)}`);
  const types = [...got.values()].map((b) => `${b.type}:${b.data.threshold_percent}`).sort();
  assert.deepEqual(types, ['budget.exceeded:100', 'budget.threshold_crossed:100',
    'budget.threshold_crossed:50', 'budget.threshold_crossed:80']);
  for (const m of receiver.got) assert.ok(verify(secret, m));
  // Any repeat is a repeat of an id already seen, never a new id for the same event.
  assert.equal(new Set(receiver.got.map((m) => m.id)).size, 4);
  // The restarted gateway announced nothing twice (the alerts are in the store).
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_budget_alerts_total{threshold="50"}'] ?? 0, 0);
  await receiver.close();
});

// Engine-neutral (the turn's event goes through the same outbox): on SQLite only, to keep the
// PostgreSQL run short.
test('agent turns: a completed turn reaches the tenant\'s webhook subscribed to response.completed', { skip: engine === 'postgres' && 'run on SQLite only' }, async () => {
  const receiver = await startReceiver();
  const gw = await startGateway(config(mkdtempSync(path.join(os.tmpdir(), 'turnpike-wh-agents-'))), ENV);
  assert.equal((await api(gw, 'PUT', 'plans/p1', {})).status, 200);
  assert.equal((await api(gw, 'POST', 'tenants', { id: 't1', plan: 'p1' })).status, 201);
  const key = (await api(gw, 'POST', 'keys', { tenant: 't1', name: 'k' })).body.key;
  const hook = await api(gw, 'POST', 'tenants/t1/webhooks', {
    url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ['response.completed'],
  });
  assert.equal(hook.status, 201);
  assert.deepEqual(hook.body.event_types, ['response.completed']);
  const agent = await api(gw, 'POST', 'agents', { tenant: 't1', model: 'mock-model' });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const r = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `agent:${agent.body.id}`, input: 'hi', max_output_tokens: 16 }),
  });
  const response = await r.json();
  assert.equal(r.status, 200, JSON.stringify(response));
  assert.ok(await eventually(() => receiver.got.length >= 1, 5000));
  const event = JSON.parse(receiver.got[0].body);
  assert.equal(event.type, 'response.completed');
  assert.equal(event.data.response_id, response.id);
  assert.equal(event.data.agent_id, agent.body.id);
  assert.equal(event.data.tenant, 't1');
  assert.ok(verify(hook.body.secret, receiver.got[0]));
  await receiver.close();
});

test('an idle outbox makes no store statement: it sleeps until a delivery is queued or due', async () => {
  // The default poll_interval (the other tests set one far above their waits).
  const { poll_interval: _, ...defaults } = WEBHOOKS;
  const gw = await startGateway(config(mkdtempSync(path.join(os.tmpdir(), 'turnpike-wh-idle-')), defaults), ENV);
  const key = await provision(gw);
  const statements = async () => {
    const m = await metricsOf(gw);
    return (m['turnpike_store_statements_total{op="webhook_read"}'] ?? 0) +
      (m['turnpike_store_statements_total{op="webhook_write"}'] ?? 0);
  };
  // The start-up look (a claim that finds nothing, and the next-due read) is over by now.
  assert.ok(await eventually(async () => (await statements()) >= 2, 5000), 'the first look');
  const before = await statements();
  await spend(gw, key, 2);  // requests below every alert threshold queue nothing
  await new Promise((r) => setTimeout(r, 1500));
  // Before, the loop claimed every poll_interval (1 s by default) whatever was pending.
  assert.equal((await statements()) - before, 0);
});
