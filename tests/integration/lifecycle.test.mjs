// Client disconnects, slow clients and graceful drain.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, startProcess, metricsOf, startMock, startGateway, gatewayConfig, stopAll, chatBody, mockStats, eventually, sleep, waitExit, readSse, rawRequest, assertHeldBack, assertPausedStreamArrivesWhole, HELD_BACK_TOKENS } from './lib/harness.mjs';

after(stopAll);

function rawChat(port, body) {
  const sock = net.connect(port, '127.0.0.1');
  sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return sock;
}

test('a client that disconnects mid-stream cancels the upstream request at once', async () => {
  const mock = await startMock(['--tokens', '100', '--inter-token', '100ms']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  const sock = rawChat(gw.port, chatBody({ stream: true }));
  await new Promise((r) => sock.once('data', r));
  sock.destroy();
  const stats = await eventually(async () => { const s = await mockStats(mock); return s.client_disconnects >= 1 && s; }, 2000);
  assert.equal(stats.client_disconnects, 1, 'the mock saw the upstream connection close');
  assert.equal(stats.streams_completed, 0);
});

test('a client that disconnects before the first byte cancels the upstream request too', async () => {
  const mock = await startMock(['--slow-headers', '5s']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  const sock = rawChat(gw.port, chatBody({ stream: true }));
  await eventually(async () => (await mockStats(mock)).requests >= 1, 2000);
  sock.destroy();
  const stats = await eventually(async () => { const s = await mockStats(mock); return s.client_disconnects >= 1 && s; }, 2000);
  assert.equal(stats.client_disconnects, 1);
});

// Connections the client closed but the gateway still holds open (TCP CLOSE-WAIT).
function closeWaitCount(port) {
  const out = execFileSync('ss', ['-Htn', 'state', 'close-wait', `( sport = :${port} )`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim()).length;
}

test('a client that closes after a watched stream is let go at once (no CLOSE-WAIT)', async () => {
  const mock = await startMock(['--tokens', '3', '--inter-token', '50ms']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: chatBody({ stream: true }),
    });
    await r.text();
  }
  const sock = rawChat(gw.port, chatBody({ stream: true }));
  let got = '';
  sock.on('data', (d) => { got += d; });
  await eventually(() => got.endsWith('0\r\n\r\n'), 3000);
  sock.end();
  const settled = await eventually(() => closeWaitCount(gw.port) === 0 && closeWaitCount(mock.port) === 0, 2000);
  assert.ok(settled, `CLOSE-WAIT sockets left: gateway ${closeWaitCount(gw.port)}, mock ${closeWaitCount(mock.port)}`);
});

test('a slow client slows the upstream read instead of filling memory', async () => {
  const held = await startMock(['--tokens', String(HELD_BACK_TOKENS)]);
  const gh = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${held.port}/v1`] } }));
  await assertHeldBack({ gw: gh, mock: held, open: () => rawChat(gh.port, chatBody({ stream: true })) });

  // A stream paused and resumed arrives whole.
  const tokens = 200000;  // ~30 MB of SSE
  const mock = await startMock(['--tokens', String(tokens)]);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  await assertPausedStreamArrivesWhole({ open: () => rawChat(gw.port, chatBody({ stream: true })), tokens, timeoutMs: 30000 });
});

test('SIGTERM drains: open streams finish in full, /readyz turns 503, exit 0', async () => {
  const mock = await startMock(['--tokens', '20', '--inter-token', '50ms']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] }, server: { timeouts: '{drain: 10s}' } }));
  // A keep-alive connection opened before the drain, to ask /readyz during it.
  const probe = net.connect(gw.port, '127.0.0.1');
  await new Promise((r) => probe.once('connect', r));
  const streams = [0, 1, 2].map(() =>
    fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody({ stream: true }) }));
  const responses = await Promise.all(streams);
  await sleep(100);
  gw.kill('SIGTERM');
  await sleep(100);
  probe.write('GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n');
  const ready = await new Promise((r) => probe.once('data', (d) => r(d.toString())));
  assert.match(ready, /^HTTP\/1\.1 503/);
  assert.match(ready, /Connection: close/i);
  const bodies = await Promise.all(responses.map((r) => readSse(r)));
  for (const { data } of bodies) {
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(data.filter((d) => d.includes('"content":"tok')).length, 20, 'no stream was cut');
  }
  assert.equal(await waitExit(gw), 0);
  await assert.rejects(rawRequest(gw.port, 'GET /healthz HTTP/1.1\r\n\r\n', { timeoutMs: 500 }).then((r) => { if (r.status === 0) throw new Error('closed'); return r; }));
});

test('a port already in use is a clear start-up error', async () => {
  const mock = await startMock();
  const cfg = gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }).replace('127.0.0.1:0', `127.0.0.1:${mock.port}`);
  await assert.rejects(startGateway(cfg), /cannot listen on 127\.0\.0\.1:\d+: Address already in use/);
});

test('out of file descriptors: accept backs off, a metric and one log line say so, and it recovers by itself', async (t) => {
  const mock = await startMock(['--tokens', '2']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-emfile-'));
  const file = path.join(dir, 'turnpike.yaml');
  writeFileSync(file, gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    server: { workers: 1 },
  }).replace('  workers: 2\n', ''));
  // prlimit (util-linux): the gateway with 64 descriptors, a few more than it starts with.
  const gw = await startProcess(['--nofile=64:64', BIN, 'serve', '--config', file], { bin: 'prlimit' });
  const url = `http://127.0.0.1:${gw.port}`;
  gw.url = url;
  // A sanitizer build (it counts no allocations) cannot run out of descriptors: UBSan's vptr
  // check opens a pipe to test that memory is readable, and without one it reports every
  // object it checks as invalid.
  if (!/^turnpike_allocations_total /m.test(await (await fetch(`${url}/metrics`)).text())) {
    gw.kill();
    t.skip('a sanitizer build: UBSan itself needs file descriptors');
    return;
  }
  const sockets = [];
  for (let i = 0; i < 100; i++) {
    const s = net.connect(gw.port, '127.0.0.1');
    s.on('error', () => {});
    sockets.push(s);
  }
  await eventually(() => gw.errors().includes('cannot accept connections'), 5000);
  // Held out of descriptors for 2 s: the retries back off (10 ms doubling up to 1 s), about ten
  // attempts; a spin would make thousands, a fixed 50 ms pause forty.
  await sleep(2000);
  for (const s of sockets) s.destroy();
  await eventually(async () => {
    try { return (await fetch(`${url}/healthz`)).status === 200; } catch { return false; }
  }, 10000);
  // The held connections still drain from the listen queue for a while (each accepted, then
  // closed): a request may meet the limit again until they are gone.
  const metrics = await eventually(async () => {
    try { return await metricsOf(gw); } catch { return false; }
  }, 10000);
  const failed = metrics['turnpike_accept_errors_total{reason="emfile"}'];
  assert.ok(failed > 0, JSON.stringify(metrics));
  // The attempts of the held streak plus the few of the drain's churn (each a new streak).
  assert.ok(failed <= 30, `${failed} failed accepts: the accept loop does not back off`);
  assert.equal(metrics['turnpike_accept_errors_total{reason="other"}'], 0);
  await eventually(() => gw.errors().includes('accepts connections again'), 5000);
  // One line when a streak of failures begins and one when it ends, and at most one start
  // line per 10 s however often the drain's churn begins a new streak.
  const begun = gw.errors().split('cannot accept connections').length - 1;
  const ended = gw.errors().split('accepts connections again').length - 1;
  assert.equal(begun, 1, gw.errors());
  assert.equal(ended, 1, gw.errors());
  const served = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });
  assert.equal(served.status, 200);
  assert.equal((await served.json()).usage.completion_tokens, 2);
  gw.kill();
});

test('after a burst, the heap\'s free pages go back to the OS, then in a few follow-ups while idle, and again after the next burst', async () => {
  // The first burst's requests stay open 1.5 s (the mock's first token), each holding its
  // 200 KB body; the second's are answered at once (a burst shorter than the trimmer's tick
  // counts by the exchanges begun in it).
  const mock = await startMock(['--first-token-delay', '1500ms', '--tokens', '5']);
  const fast = await startMock(['--tokens', '5']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`], 'fast-model': [`http://127.0.0.1:${fast.port}/v1`] },
    server: { memory_trim: '1s' },
  }));
  const sanitizer = !/^turnpike_allocations_total /m.test(await (await fetch(`${gw.url}/metrics`)).text());
  const big = 'x'.repeat(200 * 1024);
  const burst = (n, model = 'mock-model') => Promise.all(Array.from({ length: n }, () => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: chatBody({ model, messages: [{ role: 'user', content: big }] }),
  }).then((r) => r.status)));
  const trims = async () => (await metricsOf(gw)).turnpike_memory_trims_total;
  assert.equal(await trims(), 0, 'nothing served yet: nothing to give back');

  const statuses = await burst(200);
  assert.deepEqual([...new Set(statuses)], [200]);
  assert.equal(await eventually(async () => (await trims()) === 1, 10_000, 100), true, 'one trim after the burst');
  const released = (await metricsOf(gw)).turnpike_memory_trim_released_bytes_total;
  // A sanitizer's allocator is not glibc's: malloc_trim has nothing of it to give back.
  if (!sanitizer) assert.ok(released >= 8 * 1024 * 1024, `released ${released} bytes`);
  await sleep(1500);
  // (The polls above are exchanges too: under TrimPolicy::kMinBurst a second, no burst.)
  assert.equal(await trims(), 1, 'idle after the trim: not trimmed again before its follow-up');

  assert.deepEqual([...new Set(await burst(60, 'fast-model'))], [200]);
  assert.equal(await eventually(async () => (await trims()) === 2, 10_000, 100), true, 'one trim after the next burst');
  // Its first follow-up, 3 x memory_trim later while idle.
  assert.equal(await eventually(async () => (await trims()) === 3, 10_000, 200), true, 'a follow-up trim');
});
