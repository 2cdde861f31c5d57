// System calls per agent turn and per plain streamed chat call, counted by strace attached to
// the gateway for the measured requests only (after 60 warm-up requests of each load). One
// replica (SQLite, governance on) over the mock provider (--tokens 16); one conversation, one
// request at a time. Writes strace's summary of each load to OUT_DIR/<load>.txt.
//
//   TURNPIKE_BIN=build/src/app/turnpike node bench/agent-turn-syscalls.mjs [requests] [out_dir]
//
// STRACE_ARGS replaces "-c -f" (e.g. "-f -k -e trace=futex,write" for each call's stack).
// Needs strace; run by hand, not in CI.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { stopAll, sleep } from '../tests/integration/lib/harness.mjs';
import { startAgentGateway } from './lib/agent_turn.mjs';

const N = Number(process.argv[2] ?? 500);
const OUT = process.argv[3] ?? '/tmp/turn-syscalls';
mkdirSync(OUT, { recursive: true });
const { g, agent, headers, drain } = await startAgentGateway({ name: 'turn-syscalls' });
const conversation = (await (await fetch(`${g.gw.url}/v1/conversations`, { method: 'POST', headers, body: '{}' })).json()).id;
const post = async (route, body) => drain(await fetch(`${g.gw.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) }));
const loads = {
  plain: () => post('/v1/chat/completions', { model: 'chat', stream: true, messages: [{ role: 'user', content: 'Hello there' }] }),
  turn: () => post('/v1/responses', { model: `agent:${agent.id}`, conversation, input: 'Hello there', stream: true }),
};
for (const [name, one] of Object.entries(loads)) {
  for (let i = 0; i < 60; ++i) await one();
  await sleep(500);
  const out = `${OUT}/${name}.txt`;
  const args = (process.env.STRACE_ARGS ?? '-c -f').split(' ');
  const strace = spawn('strace', [...args, '-o', out, '-p', String(g.gw.pid)], { stdio: 'ignore' });
  await sleep(1000);  // attached to every thread
  for (let i = 0; i < N; ++i) await one();
  await sleep(500);  // the call log's flush
  strace.kill('SIGINT');
  await new Promise((resolve) => strace.on('exit', resolve));
  console.log(`${name}: ${N} requests -> ${out}`);
}
await stopAll();
