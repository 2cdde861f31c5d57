// Instructions per agent turn against plain streamed calls, counted with callgrind (repeatable
// whatever else runs on the machine), split by thread: the workers (the request path) and the
// store thread (each turn's transaction; the call log). One replica (SQLite, governance on,
// 2 workers) over the mock provider (--tokens 16); C conversations in parallel.
//
// Four loads, each warmed (5 requests per loop) before instrumentation is switched on:
//   plain   POST /v1/chat/completions, one user message, streamed
//   presp   POST /v1/responses on the plain model, one input string, streamed
//   phist   POST /v1/chat/completions carrying a 51-message history (what a client without
//           agents sends to continue a conversation as long as a turn's window), streamed
//   turn    POST /v1/responses, model "agent:<id>", in a conversation (window 50), streamed
//
//   TURNPIKE_BIN=build/src/app/turnpike node bench/agent-turn-callgrind.mjs [requests] [C] [loads]
//   (AGENT_TOOLS=n gives the agent n function tools.)
// loads: a comma-separated subset of the four (all by default), e.g. presp,turn.
// Needs valgrind (callgrind_control). Prints instructions per request per thread group, and the
// turns' store writes per transaction (the group commit). TURNPIKE_STARTUP_TIMEOUT_MS=120000 on a
// loaded machine (the gateway starts slowly under valgrind).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopAll, sleep, metricsOf } from '../tests/integration/lib/harness.mjs';
import { startAgentGateway } from './lib/agent_turn.mjs';

const N = Number(process.argv[2] ?? 100);
const C = Number(process.argv[3] ?? 4);
const LOADS = process.argv[4]?.split(',');
const BIN = path.resolve(process.env.TURNPIKE_BIN ?? 'build/src/app/turnpike');
const dir = mkdtempSync(path.join(os.tmpdir(), 'turn-callgrind-'));
const wrapper = path.join(dir, 'turnpike-under-callgrind');
writeFileSync(wrapper, `#!/bin/sh\nexec valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no --callgrind-out-file=${dir}/cg.%p ${BIN} "$@"\n`);
chmodSync(wrapper, 0o755);

// AGENT_TOOLS=n: the agent has n function tools (each with a small JSON-schema), which every
// turn sends upstream.
const tools = Array.from({ length: Number(process.env.AGENT_TOOLS ?? 0) }, (_, i) => ({
  type: 'function', name: `tool_${i}`, description: `Looks up record kind ${i} by its id and returns its fields.`,
  parameters: { type: 'object', properties: { id: { type: 'string', description: 'The record id' }, fields: { type: 'array', items: { type: 'string' } } }, required: ['id'] },
}));
const { g, agent, headers, drain } = await startAgentGateway({ name: 'turn-callgrind', bin: wrapper, tools });
const post = async (route, body) => {
  const r = await fetch(`${g.gw.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${route}: ${r.status} ${await r.text()}`);
  await drain(r);
};
const history = [{ role: 'system', content: 'Be brief.' }];
for (let i = 0; i < 25; ++i) {
  history.push({ role: 'user', content: 'Hello there' });
  history.push({ role: 'assistant', content: 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et' });
}
history.push({ role: 'user', content: 'Hello there' });
const loads = {
  plain: async () => () => post('/v1/chat/completions', { model: 'chat', stream: true, messages: [{ role: 'user', content: 'Hello there' }] }),
  presp: async () => () => post('/v1/responses', { model: 'chat', stream: true, input: 'Hello there' }),
  phist: async () => () => post('/v1/chat/completions', { model: 'chat', stream: true, messages: history }),
  turn: async () => {
    const r = await fetch(`${g.gw.url}/v1/conversations`, { method: 'POST', headers, body: '{}' });
    const conversation = (await r.json()).id;
    return () => post('/v1/responses', { model: `agent:${agent.id}`, conversation, input: 'Hello there', stream: true });
  },
};
for (const name of LOADS ?? []) if (!(name in loads)) throw new Error(`unknown load ${name}`);
const control = (...args) => execFileSync('callgrind_control', [...args, String(g.gw.pid)], { stdio: 'ignore' });
const totals = (dump) => {
  const out = { workers: 0, store: 0 };
  for (const f of readdirSync(dir).filter((n) => n.startsWith('cg.') && n.includes(`.${dump}-`))) {
    const text = readFileSync(path.join(dir, f), 'utf8');
    const total = Number(/^totals: (\d+)/m.exec(text)?.[1] ?? 0);
    // The store thread by its loop, or (inlined in a link-time optimised build) by SQLite's.
    if (/StoreThread::Loop|sqlite3VdbeExec/.test(text)) out.store += total;
    else if (/scheduler::run/.test(text)) out.workers += total;
  }
  return out;
};
console.log(`requests ${N}, conversations/loops ${C}, mock --tokens 16, streamed; instructions per request`);
console.log('| load | workers | store thread | total |');
console.log('|---|---|---|---|');
let dump = 0;
for (const [name, make] of Object.entries(loads)) {
  if (LOADS && !LOADS.includes(name)) continue;
  const loops = [];
  for (let i = 0; i < C; ++i) loops.push(await make());
  await Promise.all(loops.map(async (one) => { for (let k = 0; k < 5; ++k) await one(); }));
  control('-i', 'on');
  await Promise.all(loops.map(async (one) => { for (let k = 0; k < N / C; ++k) await one(); }));
  await sleep(1500);  // the call log's flush
  control('-i', 'off');
  control('-d', name);
  const t = totals(++dump);
  const k = (x) => `${Math.round(x / N / 1000)}k`;
  console.log(`| ${name} | ${k(t.workers)} | ${k(t.store)} | ${k(t.workers + t.store)} |`);
}
// The turns' group commit (doors/agents/turn_writer.h): writes per transaction, whole run.
const m = await metricsOf(g.gw);
const writes = m.turnpike_agent_turn_writes_total;
const commits = m.turnpike_agent_turn_commits_total;
if (writes !== undefined) console.log(`turn writes ${writes} in ${commits} transactions (${(writes / commits).toFixed(2)} per commit)`);
await stopAll();
