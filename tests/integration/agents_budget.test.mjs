// Agent budgets from outside (src/doors/agents/budgets.h): 100 concurrent turns against an
// agent whose monthly budget admits 10, and against a tenant's budget that admits 10: no
// overshoot (spent <= budget) and exactly the admitted turns charged (spent = admitted x the
// turn's cost; the call log's charged rows are the admitted turns); the agent's refusal is the
// tenant budget's envelope (429 insufficient_quota, through the official openai client too);
// the agent's JSON shows its spend this month, which a restart restores from the call log; the
// CLI sets the budget (`admin agents update --budget`);
// and, where PostgreSQL and Redis are installed, the same race over two replicas in fleet mode.
//
// Every turn reserves exactly what it costs: the agent caps output at 16 tokens, the mock
// answers 16 completion tokens, and input is free at 1000 USD per million output tokens, so a
// turn reserves and is charged 0.016 USD.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  BIN, startMock, startGateway, gatewayConfig, stopAll, eventually, waitExit,
} from './lib/harness.mjs';
import { startRedis, stopRedis } from './lib/redis.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres, needsRedis } from './lib/requires.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
const PRICES = { chat: { input: 0, output: 1000, max_output_tokens: 100000 } };
const TURN_TOKENS = 16;
const TURN_MICROS = 16_000;
const ADMITS = 10;
const BUDGET_USD = (ADMITS * TURN_MICROS) / 1e6;
const TURNS = 100;
const usd = (x) => Math.round(x * 1e6);  // money as integer micro-USD

let redis;
after(async () => {
  await stopAll();
  if (redis) await stopRedis(redis);
  stopAllPostgres();
});

// The provider holds every turn 1 s, so all 100 arrive while the admitted ones hold the budget.
const slowMock = () => startMock(['--tokens', String(TURN_TOKENS), '--first-token-delay', '1000ms', '--workers', '2']);

function config(mock, store, extra = '') {
  return gatewayConfig({
    models: { chat: [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store,
    call_log: { flush_interval: '50ms' },
    prices: PRICES,
  }) + extra;
}

function adminOf(gw) {
  return async (method, route, body) => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
}

// A plan, a tenant on it, a key and an agent with `agentBudget` (USD or null).
async function provision(gw, { tenant, plan, agentBudget }) {
  const admin = adminOf(gw);
  assert.equal((await admin('PUT', `plans/p-${tenant}`, plan)).status, 200);
  assert.equal((await admin('POST', 'tenants', { id: tenant, plan: `p-${tenant}` })).status, 201);
  const key = await admin('POST', 'keys', { tenant, name: 'budget' });
  assert.equal(key.status, 201);
  const agent = await admin('POST', 'agents', {
    tenant, model: 'chat', instructions: 'Be brief.', max_output_tokens: TURN_TOKENS,
    monthly_budget_usd: agentBudget,
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  return { key: key.body.key, agent: agent.body };
}

const turn = (gw, key, agent) => fetch(`${gw.url}/v1/responses`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: `agent:${agent.id}`, input: 'Hi', store: false }),
});

// `n` concurrent turns spread over `gateways`: their statuses and error bodies.
async function race(gateways, key, agent, n = TURNS) {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => turn(gateways[i % gateways.length], key, agent)));
  const bodies = await Promise.all(answers.map((r) => r.json()));
  return answers.map((r, i) => ({ status: r.status, body: bodies[i] }));
}

async function callRows(gw, tenant) {
  const r = await adminOf(gw)('GET', `calls?limit=1000&tenant=${tenant}`);
  assert.equal(r.status, 200);
  return r.body.data;
}

// The race's accounting: `admitted` turns, each charged exactly once; the rest refused with the
// budget's envelope; the spend equals the call log's charged rows.
async function expectNoOvershoot(gw, tenant, answers, spentUsd) {
  const admitted = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status === 429);
  assert.equal(admitted, ADMITS, `admitted ${admitted}`);
  assert.equal(refused.length, TURNS - ADMITS);
  for (const r of refused) {
    assert.equal(r.body.error.type, 'insufficient_quota');
    assert.equal(r.body.error.code, 'insufficient_quota');
  }
  assert.ok(usd(spentUsd) <= usd(BUDGET_USD), `spent ${spentUsd} > ${BUDGET_USD}`);
  assert.equal(usd(spentUsd), admitted * TURN_MICROS);
  const rows = await eventually(async () => {
    const r = await callRows(gw, tenant);
    return r.length === TURNS ? r : null;
  }, 5000);
  assert.ok(rows, 'every turn reached the call log');
  const charged = rows.filter((r) => r.cost_usd > 0);
  assert.equal(charged.length, admitted);
  assert.ok(charged.every((r) => r.status === 200 && usd(r.cost_usd) === TURN_MICROS));
  return refused[0].body.error;
}

test('an agent budget admits exactly what it holds out of 100 concurrent turns; so does a tenant budget, with the same refusal', async () => {
  const mock = await slowMock();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-agents-budget-'));
  const cfg = config(mock, { path: path.join(dir, 'turnpike.db') });
  let gw = await startGateway(cfg, ENV);
  const admin = adminOf(gw);

  // The agent's budget (the tenant's plan has none).
  const a = await provision(gw, { tenant: 'ta', plan: {}, agentBudget: BUDGET_USD });
  assert.equal(a.agent.monthly_budget_usd, BUDGET_USD);
  assert.equal(a.agent.spend.spent_usd, 0);
  assert.match(a.agent.spend.month, /^\d{4}-\d{2}$/);
  const agentAnswers = await race([gw], a.key, a.agent);
  const shown = (await admin('GET', `agents/${a.agent.id}`)).body;
  const agentError = await expectNoOvershoot(gw, 'ta', agentAnswers, shown.spend.spent_usd);
  assert.match(agentError.message, /this agent/);
  // The official client sees the same refusal.
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: a.key, maxRetries: 0 });
  await assert.rejects(client.responses.create({ model: `agent:${a.agent.id}`, input: 'Hi' }),
    (e) => e instanceof OpenAI.RateLimitError && e.code === 'insufficient_quota');

  // The tenant's budget (the agent has none): the same status, type and code.
  const t = await provision(gw, { tenant: 'tt', plan: { monthly_budget_usd: BUDGET_USD }, agentBudget: null });
  const tenantAnswers = await race([gw], t.key, t.agent);
  const tenantSpend = (await admin('GET', 'spend?tenant=tt')).body.data.find((s) => s.scope === 'tenant');
  const tenantError = await expectNoOvershoot(gw, 'tt', tenantAnswers, tenantSpend.spent_usd);
  assert.match(tenantError.message, /your organization/);
  assert.equal(tenantError.type, agentError.type);
  // The agent without a cap still counts what it spent.
  assert.equal(usd((await admin('GET', `agents/${t.agent.id}`)).body.spend.spent_usd), ADMITS * TURN_MICROS);

  // Raising the budget (with the CLI) admits again; a restart restores the spend from the call
  // log.
  const raised = JSON.parse(execFileSync(BIN, ['admin', '--url', gw.url, '--json', 'agents', 'update',
    a.agent.id, '--budget', String(BUDGET_USD + TURN_MICROS / 1e6)], { env: { ...process.env, TURNPIKE_ADMIN_TOKEN: TOKEN } }).toString());
  assert.equal(usd(raised.monthly_budget_usd), (ADMITS + 1) * TURN_MICROS);
  assert.equal(raised.version, 2);
  assert.equal((await turn(gw, a.key, a.agent)).status, 200);
  assert.ok(await eventually(async () => (await callRows(gw, 'ta')).length === TURNS + 2, 5000));
  gw.kill('SIGTERM');
  await waitExit(gw);
  gw = await startGateway(cfg, ENV);
  const restored = (await adminOf(gw)('GET', `agents/${a.agent.id}`)).body;
  assert.equal(usd(restored.spend.spent_usd), (ADMITS + 1) * TURN_MICROS);
  const after = await turn(gw, a.key, a.agent);
  assert.equal(after.status, 429);
  assert.equal((await after.json()).error.type, 'insufficient_quota');
});

test('fleet: two replicas over one PostgreSQL and one Redis never overshoot an agent budget', { skip: needsPostgres() || needsRedis() }, async () => {
  const mock = await slowMock();
  const pg = await startPostgres();
  redis = await startRedis();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-agents-fleet-'));
  const replica = (i) => config(mock, { engine: 'postgres', url: pg.url, path: path.join(dir, `r${i}.db`) },
    `redis:\n  url: ${redis.url}\n  lease_ttl: 2000ms\n  refill_wait: 500ms\n`);
  const a = await startGateway(replica(1), ENV);
  const b = await startGateway(replica(2), ENV);
  const { key, agent } = await provision(a, { tenant: 'tf', plan: {}, agentBudget: BUDGET_USD });
  // Replica b reads the agent from the shared store on its first turn.
  const answers = await race([a, b], key, agent);
  const admitted = answers.filter((x) => x.status === 200).length;
  assert.ok(admitted <= ADMITS, `admitted ${admitted}`);
  // A refusal is the spent budget's, or (a turn that waited redis.refill_wait for a slice that
  // another replica held) the retryable 429 of a budget being refilled.
  const refusals = answers.filter((x) => x.status !== 200);
  assert.ok(refusals.every((x) => x.status === 429 &&
    ['insufficient_quota', 'rate_limit_error'].includes(x.body.error.type)), JSON.stringify(refusals[0]));
  const rows = await eventually(async () => {
    const r = await callRows(a, 'tf');
    return r.length === TURNS ? r : null;
  }, 5000);
  assert.ok(rows, 'every turn reached the call log');
  const charged = rows.filter((r) => r.cost_usd > 0);
  assert.equal(charged.length, admitted);
  const spent = charged.reduce((s, r) => s + usd(r.cost_usd), 0);
  assert.ok(spent <= usd(BUDGET_USD), `spent ${spent}`);
  // Leases are slices of what remains: both replicas together admitted at least one turn.
  assert.ok(admitted >= 1);
});
