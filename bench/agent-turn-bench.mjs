// An agent turn against a plain proxied chat call of the same model, side by side in one run
// (issue: "the cost of a turn"). One replica (SQLite store, governance on) over the mock provider
// on loopback. For each concurrency C, rounds alternate: C loops each sending N/C streamed chat
// completions, then C loops each holding one conversation and sending N/C streamed turns. Per
// round: the gateway's overhead p50 from the call log (overhead_us: for a turn all of it is
// before the upstream request, since its response head goes out first; for a chat call it adds
// the head's forwarding), and the gateway process's CPU per request (/proc utime + stime; a
// turn's system time also on its own).
// Run by hand, not in CI:
//   TURNPIKE_BIN=build/src/app/turnpike node bench/agent-turn-bench.mjs [requests] [rounds]
import { readFileSync } from 'node:fs';
import { stopAll, sleep } from '../tests/integration/lib/harness.mjs';
import { startAgentGateway } from './lib/agent_turn.mjs';

const N = Number(process.argv[2] ?? 400);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = [1, 8, 32];

const { g, agent, headers, drain } = await startAgentGateway({ name: 'agent-bench' });

// utime + stime and stime alone, clock ticks (1/100 s).
const times = () => {
  const f = readFileSync(`/proc/${g.gw.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { all: Number(f[11]) + Number(f[12]), system: Number(f[12]) };
};

const plain = async () => {
  const r = await fetch(`${g.gw.url}/v1/chat/completions`, {
    method: 'POST', headers,
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'Hello there' }] }),
  });
  await drain(r);
};
const turn = (conv) => async () => {
  const r = await fetch(`${g.gw.url}/v1/responses`, {
    method: 'POST', headers,
    body: JSON.stringify({ model: `agent:${agent.id}`, conversation: conv, input: 'Hello there', stream: true }),
  });
  if (r.status !== 200) throw new Error(`turn: ${r.status} ${await r.text()}`);
  await drain(r);
};

async function newConversation() {
  const r = await fetch(`${g.gw.url}/v1/conversations`, { method: 'POST', headers, body: '{}' });
  return (await r.json()).id;
}

// The call log's overhead_us of the newest `count` rows of `model`.
async function overheads(model, count) {
  const values = [];
  let cursor = '';
  while (values.length < count) {
    const page = (await g.admin('GET', `calls?limit=500&model=${encodeURIComponent(model)}${cursor}`)).body;
    for (const c of page.data) if (c.overhead_us !== null) values.push(c.overhead_us);
    if (page.next_cursor === null) break;
    cursor = `&cursor=${page.next_cursor}`;
  }
  return values.slice(0, count);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

async function round(kind, c) {
  const loops = [];
  for (let i = 0; i < c; ++i) loops.push(kind === 'plain' ? plain : turn(await newConversation()));
  const t0 = times();
  await Promise.all(loops.map(async (one) => { for (let k = 0; k < N / c; ++k) await one(); }));
  const t1 = times();
  const cpu = (t1.all - t0.all) * 10_000 / N;  // µs of gateway CPU per request
  const system = (t1.system - t0.system) * 10_000 / N;  // of it in the kernel
  await sleep(300);  // the call log's flush
  const model = kind === 'plain' ? 'chat' : `agent:${agent.id}`;
  return { p50: median(await overheads(model, N)), cpu, system };
}

// Warm-up: connections, caches, the store.
await round('plain', 8);
await round('agent', 8);
console.log(`requests per round ${N}, rounds ${ROUNDS}, mock --tokens 16, streamed`);
console.log('| C | plain overhead p50 (µs) | turn overhead p50 (µs) | plain CPU/req (µs) | turn CPU/req (µs) | CPU ratio | turn system CPU/req (µs) |');
console.log('|---|---|---|---|---|---|---|');
for (const c of CONCURRENCY) {
  const p = [], a = [];
  for (let r = 0; r < ROUNDS; ++r) {
    p.push(await round('plain', c));
    a.push(await round('agent', c));
  }
  const pp = median(p.map((x) => x.p50)), ap = median(a.map((x) => x.p50));
  const pc = median(p.map((x) => x.cpu)), ac = median(a.map((x) => x.cpu));
  const as = median(a.map((x) => x.system));
  console.log(`| ${c} | ${pp} | ${ap} | ${pc.toFixed(0)} | ${ac.toFixed(0)} | ${(ac / pc).toFixed(2)} | ${as.toFixed(0)} |`);
}
await stopAll();
