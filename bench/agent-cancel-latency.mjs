// How fast a stopped agent turn lets go of its upstream call, on the replica running it (issue
// 24's bar: the upstream socket closed within 10 ms of the cancel request). One gateway
// (SQLite store, governance on) over a node fake upstream (OpenAI chat, streamed) that trickles
// a token every TRICKLE_MS and records when each request's socket closes. Samples one at a
// time, each a new streamed turn (no conversation), in three cases:
//   cancel      after the first output_text delta: POST /v1/responses/{id}/cancel; measured
//               from the cancel request's first byte written to the upstream socket's close,
//               and to the cancel's answer (which comes once the turn has stored its end)
//   disconnect  after the first delta, the client closes its socket: to the upstream close
//   before      cancel once the upstream has the request and answered its head, before any
//               token: to the upstream close, and to the cancel's answer
//   control     GET /healthz on a fresh connection, from its first byte written to the answer:
//               no turn at all, so what the machine adds (scheduling, node's loop) on its own
// Times are node's performance.now() in this one process (the client and the fake share its
// clock and its event loop, so a sample includes the loop's turn-around: an upper bound).
// Run by hand, not in CI:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/agent-cancel-latency.mjs [samples]
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startGovernedGateway, stopAll, sleep } from '../tests/integration/lib/harness.mjs';
import { startTurn, timed as timedOn } from './lib/agent_turn.mjs';

const SAMPLES = Number(process.argv[2] ?? 60);
const TRICKLE_MS = 200;       // between two tokens of the fake's stream
const FIRST_TOKEN_MS = 30_000; // the 'before' case: the first token never comes in time

// The fake upstream. `upstream.next` resolves with {socketClosed: Promise<number>} once the
// next request has arrived and its head was answered.
const upstream = { waiting: null, firstTokenMs: 0 };
const fake = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const closed = new Promise((resolve) => req.socket.once('close', () => resolve(performance.now())));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const chunk = (delta, finish = null) => `data: ${JSON.stringify({
      id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
    let n = 0;
    const tick = () => {
      if (res.destroyed) return;
      res.write(chunk(n === 0 ? { role: 'assistant', content: `tok${n} ` } : { content: `tok${n} ` }));
      ++n;
      timer = setTimeout(tick, TRICKLE_MS);
    };
    let timer = setTimeout(tick, upstream.firstTokenMs);
    res.on('close', () => clearTimeout(timer));
    const waiting = upstream.waiting;
    upstream.waiting = null;
    if (waiting) waiting({ socketClosed: closed });
  });
});
await new Promise((r) => fake.listen(0, '127.0.0.1', r));
const nextUpstream = () => new Promise((resolve) => { upstream.waiting = resolve; });

const g = await startGovernedGateway({
  name: 'agent-cancel',
  models: { chat: [`http://127.0.0.1:${fake.address().port}/v1`] },
  prices: { chat: { input: 1, output: 2, max_output_tokens: 1000 } },
});
const agent = (await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', instructions: 'Be brief.' })).body;
const port = g.gw.port;
const headers = { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' };

const client = { port, headers };
const timed = (method, path) => timedOn(client, method, path);
const cancel = (id) => timed('POST', `/v1/responses/${id}/cancel`);

async function sample(kind) {
  if (kind === 'control') {
    const h = await timed('GET', '/healthz');
    if (h.status !== 200) throw new Error(`healthz: ${h.status}`);
    return { answer: h.answeredAt - h.sentAt };
  }
  upstream.firstTokenMs = kind === 'before' ? FIRST_TOKEN_MS : 0;
  const arrived = nextUpstream();
  const turn = await startTurn(client, { model: `agent:${agent.id}`, input: 'Hello there', stream: true });
  const { socketClosed } = await arrived;
  if (kind !== 'before') await turn.firstDelta;
  if (kind === 'disconnect') {
    const at = performance.now();
    turn.req.destroy();
    turn.res.destroy();
    return { close: (await socketClosed) - at };
  }
  const c = await cancel(turn.id);
  if (c.status !== 200) throw new Error(`cancel: ${c.status}`);
  const closedAt = await socketClosed;
  await new Promise((r) => (turn.res.complete ? r() : turn.res.once('end', r)));
  return { close: closedAt - c.sentAt, answer: c.answeredAt - c.sentAt };
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const line = (label, xs) =>
  `${label.padEnd(28)} n=${xs.length}  p50 ${pct(xs, 0.5).toFixed(2)} ms  p99 ${pct(xs, 0.99).toFixed(2)} ms  max ${Math.max(...xs).toFixed(2)} ms  (over 10 ms: ${xs.filter((x) => x > 10).length})`;

for (let i = 0; i < 5; ++i) await sample('cancel');  // warm: the agent, the pools
for (const kind of ['cancel', 'disconnect', 'before', 'control']) {
  const close = [];
  const answer = [];
  for (let i = 0; i < SAMPLES; ++i) {
    const s = await sample(kind);
    if (s.close !== undefined) close.push(s.close);
    if (s.answer !== undefined) answer.push(s.answer);
    await sleep(5);
  }
  if (close.length) console.log(line(`${kind}: upstream closed`, close));
  if (answer.length) console.log(line(`${kind}: ${kind === 'control' ? 'healthz answered' : 'cancel answered'}`, answer));
}
await stopAll();
fake.close();
process.exit(0);
