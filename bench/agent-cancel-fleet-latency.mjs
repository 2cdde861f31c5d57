// How fast a cancel sent to one replica stops a turn running on another (issue 24's bar: the
// upstream socket closed within 50 ms of the cancel request, across replicas, loopback). Two
// replicas of the real binary (PostgreSQL store, Redis: fleet mode, as in
// tests/integration/agents_fleet.test.mjs) over a node fake upstream (OpenAI chat, streamed) that
// trickles a token every TRICKLE_MS and records when each request's socket closes. Samples one
// at a time, each a new streamed turn on replica A in a new conversation, cancelled on B:
//   remote      after the first output_text delta: POST /v1/responses/{id}/cancel to B; from
//               the cancel request's first byte written to the upstream socket's close, and to
//               B's answer (which comes once A has stored the turn's end and told B)
//   local       the same cancel sent to A itself: the one-replica figure, in the same run
//   control     GET /healthz on B on a fresh connection: what the machine adds on its own
// Path of a remote cancel: B runs the cancel script (the flag and a PUBLISH to A's channel, one
// Redis round trip), A's subscriber posts the cancel to the turn's worker, which closes the
// upstream socket (doors/agents/fleet.h, redis_fleet.h).
// Times are node's performance.now() in this one process (the client and the fake share its
// clock and event loop: an upper bound). Needs PostgreSQL 15 and redis-server. Run by hand:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/agent-cancel-fleet-latency.mjs [samples]
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startGateway, gatewayConfig, stopAll, sleep, eventually } from '../tests/integration/lib/harness.mjs';
import { startTurn, timed as timedOn } from './lib/agent_turn.mjs';
import { startRedis, stopRedis } from '../tests/integration/lib/redis.mjs';
import { startPostgres, stopAllPostgres } from '../tests/integration/lib/postgres.mjs';

const SAMPLES = Number(process.argv[2] ?? 100);
const TRICKLE_MS = 200;
const TOKEN = 'bench-admin-token';
const BAR_MS = 50;

const upstream = { waiting: null };
const fake = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const closed = new Promise((resolve) => req.socket.once('close', () => resolve(performance.now())));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta) => `data: ${JSON.stringify({
      id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake',
      choices: [{ index: 0, delta, finish_reason: null }],
    })}\n\n`;
    let n = 0;
    const tick = () => {
      if (res.destroyed) return;
      res.write(chunk(n === 0 ? { role: 'assistant', content: `tok${n} ` } : { content: `tok${n} ` }));
      ++n;
      timer = setTimeout(tick, TRICKLE_MS);
    };
    let timer = setTimeout(tick, 0);
    res.on('close', () => clearTimeout(timer));
    const waiting = upstream.waiting;
    upstream.waiting = null;
    if (waiting) waiting({ socketClosed: closed });
  });
});
await new Promise((r) => fake.listen(0, '127.0.0.1', r));
const nextUpstream = () => new Promise((resolve) => { upstream.waiting = resolve; });

const pg = await startPostgres();
const redis = await startRedis();
const config = gatewayConfig({
  models: { chat: [`http://127.0.0.1:${fake.address().port}/v1`] },
  governance: { enabled: true, reconcile_interval: '0s' },
  store: { engine: 'postgres', url: pg.url },
  call_log: { flush_interval: '50ms' },
  prices: { chat: { input: 1, output: 2, max_output_tokens: 1000 } },
  sections: { redis: { url: redis.url }, agents: { cache_ttl: '60s' } },
});
const a = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
const b = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
const admin = async (route, body, method = 'POST') => {
  const r = await fetch(`${a.url}/admin/v1/${route}`, {
    method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return r.json();
};
await admin('plans/p1', {}, 'PUT');
await admin('tenants', { id: 't1', plan: 'p1' });
const key = (await admin('keys', { tenant: 't1', name: 'bench' })).key;
const agent = await admin('agents', { tenant: 't1', model: 'chat', instructions: 'Be brief.' });
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
await eventually(async () => (await fetch(`${b.url}/v1/conversations`, { method: 'POST', headers, body: '{}' })).status === 200, 10000, 50);

const on = (gw) => ({ port: gw.port, headers });
const timed = (gw, method, path) => timedOn(on(gw), method, path);

async function sample(kind) {
  if (kind === 'control') {
    const h = await timed(b, 'GET', '/healthz');
    if (h.status !== 200) throw new Error(`healthz: ${h.status}`);
    return { answer: h.answeredAt - h.sentAt };
  }
  const conversation = (await (await fetch(`${a.url}/v1/conversations`, { method: 'POST', headers, body: '{}' })).json()).id;
  const arrived = nextUpstream();
  const turn = await startTurn(on(a), { model: `agent:${agent.id}`, conversation, input: 'Hello there', stream: true });
  const { socketClosed } = await arrived;
  await turn.firstDelta;
  const c = await timed(kind === 'remote' ? b : a, 'POST', `/v1/responses/${turn.id}/cancel`);
  if (c.status !== 200 || !c.body.includes('"cancelled"')) throw new Error(`cancel: ${c.status} ${c.body.slice(0, 200)}`);
  const closedAt = await socketClosed;
  await new Promise((r) => (turn.res.complete ? r() : turn.res.once('end', r)));
  return { close: closedAt - c.sentAt, answer: c.answeredAt - c.sentAt };
}

const pct = (xs, p) => { const s = [...xs].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const line = (label, xs) =>
  `${label.padEnd(26)} n=${xs.length}  p50 ${pct(xs, 0.5).toFixed(2)} ms  p99 ${pct(xs, 0.99).toFixed(2)} ms  max ${Math.max(...xs).toFixed(2)} ms  (over ${BAR_MS} ms: ${xs.filter((x) => x > BAR_MS).length})`;

for (let i = 0; i < 5; ++i) { await sample('remote'); await sample('local'); }  // warm
// Interleaved, so that both cases see the same machine.
const results = { remote: { close: [], answer: [] }, local: { close: [], answer: [] }, control: { answer: [] } };
for (let i = 0; i < SAMPLES; ++i) {
  for (const kind of ['remote', 'local', 'control']) {
    const s = await sample(kind);
    if (s.close !== undefined) results[kind].close.push(s.close);
    results[kind].answer.push(s.answer);
    await sleep(5);
  }
}
console.log(`samples ${SAMPLES} per case, a token every ${TRICKLE_MS} ms; cancel after the first delta`);
console.log(line('remote: upstream closed', results.remote.close));
console.log(line('remote: B answered', results.remote.answer));
console.log(line('local: upstream closed', results.local.close));
console.log(line('local: A answered', results.local.answer));
console.log(line('control: healthz on B', results.control.answer));
await stopAll();
fake.close();
await stopRedis(redis);
stopAllPostgres();
process.exit(0);
