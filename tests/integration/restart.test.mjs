// Rolling restart (SIGUSR2, src/app/restart.h): a new process takes the listening sockets over,
// the old one drains and exits. Open streams finish whole, new connections are answered
// throughout, budgets hold while both processes serve, and a child that cannot start leaves
// the old process serving.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { BIN, startMock, startGateway, gatewayConfig, stopAll, chatBody, eventually, sleep, metricsOf } from './lib/harness.mjs';

// Successors are not children of the test (their parent exits): stopped here.
const successors = new Set();
after(async () => {
  for (const pid of successors) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  await stopAll();
});

const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

// The pid of the process that took the listeners over from `gw` (its "took over" line, on the
// stderr it inherited), once it has said so.
async function successorOf(gw, timeoutMs = 10000) {
  const pid = await eventually(() => {
    const m = /process (\d+) took over \d+ listening sockets \(restart\)/.exec(gw.errors());
    return m && Number(m[1]);
  }, timeoutMs);
  assert.ok(pid, `no successor took over: ${gw.errors()}`);
  successors.add(pid);
  return pid;
}

function exited(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((r) => proc.once('exit', (code) => r(code)));
}

// Opens a stream and resolves once its first bytes arrived; `.rest` resolves to the whole text.
async function openStream(url, model = 'mock-model') {
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody({ model, stream: true }),
  });
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  const first = await reader.read();
  const rest = (async () => {
    let text = first.done ? '' : decoder.decode(first.value, { stream: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text;
  })();
  return { status: r.status, rest };
}

const dataEvents = (text) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));

// Requests in a loop until stop(), one after the other on the loop's own connection (a new one
// once the old process answers `Connection: close`): every answer counted by status, every
// failure kept. Its own client, so that no connection another test request left idle in a
// shared pool is picked up just as the old process closes it (docs/RELIABILITY.md).
function requestLoop(url, send) {
  const tally = { statuses: {}, errors: [], stopped: false };
  const dispatcher = new Agent({ connections: 1 });
  tally.done = (async () => {
    while (!tally.stopped) {
      try {
        const r = await send(url, dispatcher);
        await r.text();
        tally.statuses[r.status] = (tally.statuses[r.status] ?? 0) + 1;
      } catch (e) {
        tally.errors.push(String(e.cause ?? e));
      }
    }
  })();
  tally.stop = async () => { tally.stopped = true; await tally.done; await dispatcher.close(); };
  return tally;
}

test('SIGUSR2 with 500 open streams: every stream completes whole, new requests are answered throughout, the old process exits', async () => {
  const TOKENS = 20;
  const STREAMS = 500;
  const slow = await startMock(['--tokens', String(TOKENS), '--inter-token', '100ms', '--workers', '2']);
  const fast = await startMock(['--tokens', '4']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${slow.port}/v1`], 'fast-model': [`http://127.0.0.1:${fast.port}/v1`] },
    server: { timeouts: '{drain: 20s}' },
  }));
  const contentOf = (events) => events.slice(0, -1).map((e) => JSON.parse(e)).filter((c) => c.choices?.[0]?.delta?.content).length;

  const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(gw.url)));
  assert.ok(streams.every((s) => s.status === 200));
  const send = (url, dispatcher) => undiciFetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody({ model: 'fast-model' }), dispatcher,
  });
  const loops = [requestLoop(gw.url, send), requestLoop(gw.url, send)];
  await sleep(100);

  const oldExit = exited(gw);
  process.kill(gw.pid, 'SIGUSR2');
  const successor = await successorOf(gw);
  assert.notEqual(successor, gw.pid);
  assert.equal(await oldExit, 0, `the old process drained and exited: ${gw.errors()}`);
  await sleep(200);  // requests keep flowing to the successor alone
  await Promise.all(loops.map((l) => l.stop()));

  const texts = await Promise.all(streams.map((s) => s.rest));
  const events = texts.map(dataEvents);
  const whole = events.filter((e) => e.at(-1) === '[DONE]' && contentOf(e) === TOKENS);
  assert.equal(whole.length, STREAMS, 'every stream open at the restart completed with its exact event count');
  assert.equal(new Set(events.map((e) => e.length)).size, 1, 'every stream has the same number of events');
  assert.ok(events[0].length >= TOKENS + 1);
  for (const l of loops) {
    assert.deepEqual(l.errors, [], 'no request failed during the handover');
    assert.deepEqual(Object.keys(l.statuses), ['200']);
  }
  const answered = loops.reduce((n, l) => n + l.statuses[200], 0);
  assert.ok(answered > 0);
  assert.ok(alive(successor));
  const after = await send(gw.url);
  assert.equal(after.status, 200, 'the successor serves the same port');
  await after.text();
  process.kill(successor, 'SIGTERM');
  await eventually(() => !alive(successor), 5000);
});

test('budget across a restart: admitted requests never exceed the budget, and each is charged once', async () => {
  // Each request costs exactly 16 output tokens at 1,000 USD/M = 0.016 USD, estimated at the
  // same (max_tokens 16, no input price): a budget of N such requests admits exactly N.
  const N = 60;
  const mock = await startMock(['--tokens', '16', '--first-token-delay', '20ms', '--workers', '2']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-restart-'));
  const token = 'restart-admin-token';
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
    prices: { 'mock-model': { input: 0, output: 1000, max_output_tokens: 100000 } },
  }), { env: { TURNPIKE_ADMIN_TOKEN: token } });
  const admin = async (method, route, body) => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
  assert.equal((await admin('PUT', 'plans/p', { monthly_budget_usd: N * 0.016 })).status, 200);
  assert.equal((await admin('POST', 'tenants', { id: 't1', plan: 'p' })).status, 201);
  const key = (await admin('POST', 'keys', { tenant: 't1' })).body.key;

  const send = (url, dispatcher) => undiciFetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: chatBody({ max_tokens: 16 }),
    dispatcher,
  });
  const loops = Array.from({ length: 6 }, () => requestLoop(gw.url, send));
  const admittedSoFar = () => loops.reduce((n, l) => n + (l.statuses[200] ?? 0), 0);
  await eventually(() => admittedSoFar() >= N / 3, 10000, 5);
  const oldExit = exited(gw);
  process.kill(gw.pid, 'SIGUSR2');
  const successor = await successorOf(gw);
  // Both processes admit until the old one stops accepting; then the budget runs out.
  await eventually(() => loops.every((l) => (l.statuses[429] ?? 0) > 0), 15000, 20);
  await Promise.all(loops.map((l) => l.stop()));
  assert.equal(await oldExit, 0);

  const admitted = admittedSoFar();
  for (const l of loops) {
    assert.deepEqual(l.errors, []);
    assert.deepEqual(Object.keys(l.statuses).sort(), ['200', '429']);
  }
  assert.ok(admitted <= N, `admitted ${admitted} of a budget of ${N}`);
  assert.equal(admitted, N, 'the budget is used up exactly, by both processes together');
  const calls = await eventually(async () => {
    const rows = (await admin('GET', 'calls?limit=1000')).body.data.filter((r) => r.status === 200);
    return rows.length >= admitted ? rows : null;
  }, 15000);  // the old process's rows come with its drain: slow under a sanitizer and load
  assert.ok(calls, 'every admitted request has its call-log row');
  assert.equal(calls.length, admitted, 'charged rows = admitted');
  const micros = (usd) => Math.round(usd * 1e6);
  assert.equal(calls.reduce((sum, r) => sum + micros(r.cost_usd), 0), admitted * 16000);
  const spend = (await admin('GET', 'spend?tenant=t1')).body.data.find((s) => s.scope === 'tenant');
  assert.equal(micros(spend.spent_usd), admitted * 16000);
  assert.equal(spend.reserved_usd, 0);
  // The successor counts in the table it inherited: the tenant's slot and the key's, no other.
  const m = await metricsOf(gw);
  assert.equal(m.turnpike_counter_table_slots_occupied, 2, JSON.stringify(m));
  assert.equal(m.turnpike_counter_table_slots_reused_total, 0);
  process.kill(successor, 'SIGTERM');
  await eventually(() => !alive(successor), 5000);
});

test('a successor that cannot start leaves the old process serving; the next SIGUSR2 succeeds', async () => {
  const mock = await startMock(['--tokens', '4']);
  const good = gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } });
  const gw = await startGateway(good);
  const file = gw.spawnargs.at(-1);
  writeFileSync(file, 'server: [this is not a config\n');
  process.kill(gw.pid, 'SIGUSR2');
  const failed = await eventually(() => /restart failed: process \d+ exited with status 1; still serving/.test(gw.errors()), 10000);
  assert.ok(failed, gw.errors());
  assert.match(gw.errors(), /config error/);
  const ready = await fetch(`${gw.url}/readyz`);
  assert.equal(ready.status, 200, 'the old process is not draining');
  const chat = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });
  assert.equal(chat.status, 200);
  await chat.text();

  writeFileSync(file, good);
  const oldExit = exited(gw);
  process.kill(gw.pid, 'SIGUSR2');
  const successor = await successorOf(gw);
  assert.equal(await oldExit, 0);
  const served = await fetch(`${gw.url}/readyz`);
  assert.equal(served.status, 200);
  process.kill(successor, 'SIGTERM');
  await eventually(() => !alive(successor), 5000);
});

test('systemd socket activation: the gateway serves on the descriptor it is given, and a SIGUSR2 hands it on', async () => {
  const mock = await startMock(['--tokens', '4']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-activate-'));
  const file = path.join(dir, 'turnpike.yaml');
  // server.listen names another port: the inherited socket wins.
  writeFileSync(file, gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const port = probe.address().port;
  await new Promise((r) => probe.close(r));
  // systemd-socket-activate listens, then (at the first connection) execs the command in its own
  // process with LISTEN_FDS=1 and LISTEN_PID set to it.
  const proc = spawn('systemd-socket-activate', ['-l', `127.0.0.1:${port}`, BIN, 'serve', '--config', file],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  successors.add(proc.pid);
  const url = `http://127.0.0.1:${port}`;
  const first = await eventually(async () => { try { return await fetch(`${url}/readyz`); } catch { return null; } }, 10000, 50);
  assert.equal(first?.status, 200, err);
  // The log line is written before the first accept, but its pipe may be read after the answer.
  const tookOver = new RegExp(`process ${proc.pid} took over 1 listening sockets \\(systemd\\)`);
  await eventually(() => tookOver.test(err), 5000);
  assert.match(err, tookOver);

  const oldExit = new Promise((r) => proc.once('exit', r));
  process.kill(proc.pid, 'SIGUSR2');
  const successor = await eventually(() => {
    const m = /process (\d+) took over \d+ listening sockets \(restart\)/.exec(err);
    return m && Number(m[1]);
  }, 10000);
  assert.ok(successor, err);
  successors.add(successor);
  assert.equal(await oldExit, 0);
  const chat = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });
  assert.equal(chat.status, 200);
  await chat.text();
  process.kill(successor, 'SIGTERM');
  await eventually(() => !alive(successor), 5000);
});
