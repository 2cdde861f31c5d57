// Agent turns in fleet mode (doors/agents/fleet.h, docs/adr/0002): replicas of the real binary
// over ONE PostgreSQL 15 and ONE redis-server. Checks: a conversation continued on the other
// replica sees the previous turn's items, and back again (the first replica's cached memory is
// stale and is not used); a second turn on B while one runs on A is a 409 conversation_busy; a
// cancel sent to B stops A's turn (its stream ends response.cancelled, B answers and GET shows
// cancelled; the time from the cancel request to the upstream socket closing is printed, not
// asserted); deleting a conversation on B cancels its turn on A before it goes; a warm turn
// makes no statement and one Redis round trip before its first token;
// a background turn whose replica is SIGKILLed ends failed on the others (the sweep), and its
// conversation is free again. Skipped where PostgreSQL or Redis is absent (CI installs them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import {
  startMock, startGateway, gatewayConfig, stopAll, waitExit, metricsOf, sleep, eventually,
} from './lib/harness.mjs';
import { startRedis, stopRedis } from './lib/redis.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres, needsRedis } from './lib/requires.mjs';

const TOKEN = 'test-admin-token';
const PRICES = { chat: { input: 1, output: 2, max_output_tokens: 1000 }, slow: { input: 1, output: 2, max_output_tokens: 1000 } };
const OWNER_TTL_MS = 1000;
const SWEEP_MS = 200;
const skip = needsPostgres() || needsRedis();

let pg;
let redis;
let mock;
let slow;  // a fake upstream that streams until its client goes, recording when it went
let replicas = [];
let secret;
let describer;  // agent on the mock's --reply describe
let slowAgent;  // agent on the fake upstream

// A chat-completions upstream that streams a token every 20 ms for a minute; `closes` gets the
// time (performance.now()) each request's socket closed before the stream ended.
function startSlowUpstream() {
  const closes = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const chunk = (delta) => `data: ${JSON.stringify({
        id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'slow',
        choices: [{ index: 0, delta, finish_reason: null }],
      })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      const timer = setInterval(() => {
        if (++n > 3000) { clearInterval(timer); res.end('data: [DONE]\n\n'); return; }
        res.write(chunk({ content: `t${n} ` }));
      }, 20);
      res.on('close', () => {
        if (n <= 3000) closes.push(performance.now());
        clearInterval(timer);
      });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ server, closes, port: server.address().port });
  }));
}

function replicaConfig() {
  return gatewayConfig({
    models: {
      chat: [`http://127.0.0.1:${mock.port}/v1`],
      slow: [`http://127.0.0.1:${slow.port}/v1`],
    },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { engine: 'postgres', url: pg.url },
    call_log: { flush_interval: '50ms' },
    prices: PRICES,
    sections: {
      redis: { url: redis.url },
      agents: { cache_ttl: '60s', fleet_owner_ttl: `${OWNER_TTL_MS}ms`, fleet_sweep_interval: `${SWEEP_MS}ms` },
    },
  });
}

async function startReplica() {
  return startGateway(replicaConfig(), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
}

function clientOf(gw) {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: secret, maxRetries: 0 });
}

async function admin(gw, method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function metric(gw, name, label) {
  const m = await metricsOf(gw);
  let n = 0;
  for (const [k, v] of Object.entries(m)) {
    if (k.startsWith(name) && (label === undefined || k.includes(label))) n += v;
  }
  return n;
}

function post(gw, body) {
  return fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

before(async () => {
  if (skip) return;
  pg = await startPostgres();
  redis = await startRedis();
  mock = await startMock(['--reply', 'describe']);
  slow = await startSlowUpstream();
  replicas = [await startReplica(), await startReplica()];
  const [a, b] = replicas;
  assert.equal((await admin(a, 'PUT', 'plans/p1', {})).status, 200);
  assert.equal((await admin(a, 'POST', 'tenants', { id: 't1', plan: 'p1' })).status, 201);
  const key = await admin(a, 'POST', 'keys', { tenant: 't1', name: 'fleet' });
  assert.equal(key.status, 201);
  secret = key.body.key;
  describer = (await admin(a, 'POST', 'agents', { tenant: 't1', model: 'chat', instructions: 'Be brief.' })).body;
  slowAgent = (await admin(a, 'POST', 'agents', { tenant: 't1', model: 'slow' })).body;
  // B learns the key through the change feed.
  await eventually(async () => (await fetch(`${b.url}/v1/conversations`, {
    method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}',
  })).status === 200, 10000, 50);
});

after(async () => {
  // FLEET_DEBUG=1: each replica's stderr (a crash's message, its config).
  if (process.env.FLEET_DEBUG) {
    for (const r of replicas) console.log(`replica exit ${r.exitCode_} ${r.signalCode}: ${r.errors()}`);
  }
  await stopAll();
  if (slow) slow.server.close();
  if (redis) await stopRedis(redis);
  stopAllPostgres();
});

test('a conversation continued on the other replica sees every turn before it', { skip }, async () => {
  const [a, b] = replicas;
  const model = `agent:${describer.id}`;
  const conv = await clientOf(a).conversations.create();
  const first = await clientOf(a).responses.create({ model, conversation: conv.id, input: 'my name is Ann' });
  assert.equal(first.output_text, 'system: Be brief. | user: my name is Ann');
  const second = await clientOf(b).responses.create({ model, conversation: conv.id, input: 'who am I?' });
  assert.equal(second.output_text,
    `system: Be brief. | user: my name is Ann | assistant: ${first.output_text} | user: who am I?`);
  // A cached the memory after its turn (cache_ttl 60s): B's turn made it stale.
  const third = await clientOf(a).responses.create({ model, conversation: conv.id, input: 'and now?' });
  assert.equal(third.output_text,
    `system: Be brief. | user: my name is Ann | assistant: ${first.output_text} | user: who am I? | ` +
    `assistant: ${second.output_text} | user: and now?`);
  // An item added through the API on B is in A's next turn.
  await clientOf(b).conversations.items.create(conv.id, { items: [{ type: 'message', role: 'user', content: 'PS' }] });
  const fourth = await clientOf(a).responses.create({ model, conversation: conv.id, input: 'end' });
  assert.ok(fourth.output_text.endsWith('| user: PS | user: end'), fourth.output_text);
});

test('a warm turn: no statement and one Redis round trip before its first token', { skip }, async () => {
  const [, b] = replicas;
  const model = `agent:${describer.id}`;
  const conv = await clientOf(b).conversations.create();
  await clientOf(b).responses.create({ model, conversation: conv.id, input: 'cold' });
  const reads0 = await metric(b, 'turnpike_store_statements_total', 'op="agent_read"');
  const before0 = await metric(b, 'turnpike_agent_fleet_round_trips_total', 'phase="before_first_token"');
  const end0 = await metric(b, 'turnpike_agent_fleet_round_trips_total', 'phase="end"');
  const TURNS = 5;
  for (let i = 0; i < TURNS; ++i) {
    await clientOf(b).responses.create({ model, conversation: conv.id, input: `warm ${i}` });
  }
  assert.equal(await metric(b, 'turnpike_store_statements_total', 'op="agent_read"') - reads0, 0,
    'warm turns read nothing');
  assert.equal(await metric(b, 'turnpike_agent_fleet_round_trips_total', 'phase="before_first_token"') - before0,
    TURNS, 'one round trip before the first token per turn');
  assert.equal(await metric(b, 'turnpike_agent_fleet_round_trips_total', 'phase="end"') - end0, TURNS);
});

test('a second turn on B while one runs on A is busy; a cancel sent to B stops it', { skip }, async () => {
  const [a, b] = replicas;
  const model = `agent:${slowAgent.id}`;
  const conv = await clientOf(a).conversations.create();
  const stream = await clientOf(a).responses.create({ model, conversation: conv.id, input: 'Long', stream: true });
  const iterator = stream[Symbol.asyncIterator]();
  const created = (await iterator.next()).value;
  assert.equal(created.type, 'response.created');
  const id = created.response.id;
  for (let e = await iterator.next(); e.value.type !== 'response.output_text.delta';) e = await iterator.next();

  const busy = await post(b, { model, conversation: conv.id, input: 'Too soon' });
  assert.equal(busy.status, 409);
  assert.equal((await busy.json()).error.code, 'conversation_busy');

  const closes = slow.closes.length;
  const t0 = performance.now();
  const cancelled = await clientOf(b).responses.cancel(id);
  const answered = performance.now();
  assert.equal(cancelled.status, 'cancelled');
  const rest = [];
  for (let e = await iterator.next(); !e.done; e = await iterator.next()) rest.push(e.value.type);
  assert.equal(rest.at(-1), 'response.cancelled');
  assert.equal((await clientOf(b).responses.retrieve(id)).status, 'cancelled');
  await eventually(() => slow.closes.length > closes, 3000);
  console.log(`cancel across replicas: upstream socket closed ${(slow.closes.at(-1) - t0).toFixed(1)} ms ` +
    `after the cancel was sent to B; B answered in ${(answered - t0).toFixed(1)} ms`);
  // The conversation is free again, on either replica.
  const next = await post(b, { model: `agent:${describer.id}`, conversation: conv.id, input: 'after' });
  assert.equal(next.status, 200);
});

test('deleting a conversation on B cancels its turn running on A', { skip }, async () => {
  const [a, b] = replicas;
  const conv = await clientOf(a).conversations.create();
  const stream = await clientOf(a).responses.create({ model: `agent:${slowAgent.id}`, conversation: conv.id, input: 'Long', stream: true });
  const iterator = stream[Symbol.asyncIterator]();
  const created = (await iterator.next()).value;
  const id = created.response.id;
  for (let e = await iterator.next(); e.value.type !== 'response.output_text.delta';) e = await iterator.next();
  const closes = slow.closes.length;
  const deleted = await clientOf(b).conversations.delete(conv.id);
  assert.equal(deleted.deleted, true);
  await eventually(() => slow.closes.length > closes, 3000);
  const rest = [];
  for (let e = await iterator.next(); !e.done; e = await iterator.next()) rest.push(e.value.type);
  assert.equal(rest.at(-1), 'response.cancelled');
  assert.equal((await clientOf(a).responses.retrieve(id)).status, 'cancelled');
  const gone = await fetch(`${a.url}/v1/conversations/${conv.id}/items`, { headers: { authorization: `Bearer ${secret}` } });
  assert.equal(gone.status, 404);
});

test('a background turn whose replica is killed ends failed; its conversation is free', { skip }, async () => {
  const [a] = replicas;
  const c = await startReplica();
  await eventually(async () => (await fetch(`${c.url}/v1/conversations`, {
    method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}',
  })).status === 200, 10000, 50);
  const conv = await clientOf(a).conversations.create();
  const queued = await clientOf(c).responses.create({
    model: `agent:${slowAgent.id}`, conversation: conv.id, input: 'Long', background: true,
  });
  await sleep(300);
  c.kill('SIGKILL');
  await waitExit(c);
  const killed = performance.now();
  let failed;
  await eventually(async () => {
    failed = await clientOf(a).responses.retrieve(queued.id);
    return failed.status === 'failed';
  }, 15000, 50);
  console.log(`owner gone: failed ${(performance.now() - killed).toFixed(0)} ms after the kill ` +
    `(owner TTL ${OWNER_TTL_MS} ms, sweep every ${SWEEP_MS} ms)`);
  assert.equal(failed.error.code, 'server_error');
  assert.match(failed.error.message, /replica running this turn stopped/);
  // The lock of the dead turn has expired with its owner key.
  const next = await post(a, { model: `agent:${describer.id}`, conversation: conv.id, input: 'again' });
  assert.equal(next.status, 200);
});
