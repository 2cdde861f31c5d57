// Upstream faults beyond faults.test.mjs (resets, 5xx, 429, slow headers, a head that never
// ends on the OpenAI door): a black-holed upstream (its accept queue full, so SYNs go
// unanswered: the connect timeout), a stream that stalls between chunks (the idle timeout; the
// call log records it), garbage instead of a response or inside a stream's framing, and a head
// that never ends on the Anthropic door (its own error shape). Each fault is a small fake
// upstream in this process; timeouts are short so that the file runs in a few seconds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { startMock, startGovernedGateway, stopAll, chatBody, readSse, sleep } from './lib/harness.mjs';

const servers = [];
const children = [];
after(async () => {
  for (const s of servers) {
    for (const sock of s.sockets) sock.destroy();
    s.server.close();
  }
  for (const c of children) c.kill('SIGKILL');
  await stopAll();
});

const post = (gw, body, headers = {}) =>
  fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

// A fake upstream: `onRequest(sock)` runs once the first bytes of a request arrive.
async function fakeUpstream(onRequest) {
  const sockets = new Set();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.on('close', () => sockets.delete(sock));
    sock.once('data', () => onRequest(sock));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  servers.push({ server, sockets });
  return { port: server.address().port, sockets };
}

// A listener that never accepts: a child node process listens with a backlog of 1 and then
// blocks its event loop for good. Once its accept queue is full the kernel drops further SYNs,
// so a connect neither succeeds nor is refused (a black hole, without a network namespace).
async function blackHole() {
  const child = spawn(process.execPath, ['-e', `
    const net = require('node:net');
    const fs = require('node:fs');
    const server = net.createServer();
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      fs.writeSync(1, server.address().port + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    });`], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', () => reject(new Error('the black hole exited')));
  });
  // Fill the accept queue: connections complete until it is full; then one stays pending.
  const fillers = [];
  for (let i = 0; i < 8; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    fillers.push(s);
    const connected = await Promise.race([
      new Promise((r) => s.once('connect', () => r(true))),
      sleep(300).then(() => false),
    ]);
    if (!connected) return { port, fillers };
  }
  throw new Error('the black hole accepted every connection');
}

// An SSE head and two chunks of an OpenAI stream, then silence with the connection open.
function stallAfterTwoChunks(sock) {
  const chunk = (text) => {
    const event = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'stalled', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
    return `${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`;
  };
  sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
  sock.write(chunk('tok1 '));
  sock.write(chunk('tok2 '));
}

// One governed gateway (so that the call log can be read) in front of every fake, one model
// each; 'hole-or-mock' prefers the black hole and fails over to the mock provider.
let gw;
let key;
let calls;
const fakes = {};
before(async () => {
  fakes.hole = await blackHole();
  fakes.stalled = await fakeUpstream(stallAfterTwoChunks);
  fakes.garbage = await fakeUpstream((sock) => {
    fakes.garbage.requests++;
    sock.write(Buffer.from('\x16\x03\x01\x02\x00garbage \xff\xfe not http\r\n\r\n', 'latin1'));
  });
  fakes.garbage.requests = 0;
  fakes.broken = await fakeUpstream((sock) => {
    stallAfterTwoChunks(sock);
    sock.write('zz-not-a-chunk-size\r\n\x00\x01\x02\r\n');
  });
  const field = 'X-Endless: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'.repeat(24);
  fakes.endless = await fakeUpstream((sock) => {
    sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n');
    const timer = setInterval(() => { if (!sock.destroyed) sock.write(field); }, 2);
    sock.on('close', () => clearInterval(timer));
  });
  const mock = await startMock(['--tokens', '2']);
  const at = (port) => `http://127.0.0.1:${port}/v1`;
  const models = {
    hole: [at(fakes.hole.port)],
    'hole-or-mock': [{ base_url: at(fakes.hole.port), weight: 1000 }, at(mock.port)],
    stalled: [at(fakes.stalled.port)],
    garbage: [at(fakes.garbage.port)],
    broken: [at(fakes.broken.port)],
    endless: [at(fakes.endless.port)],
  };
  const prices = {};
  for (const name of Object.keys(models)) prices[name] = { input: 1, output: 2, max_output_tokens: 1000 };
  ({ gw, key, calls } = await startGovernedGateway({
    name: 'upstream-faults',
    models,
    prices,
    sections: {
      // A first-byte timeout well above the others: each fault must end at its own bound.
      upstream: { timeouts: '{connect: 300ms, first_byte: 5s, idle: 300ms}' },
      routing: { max_attempts: 2, backoff_base: '1ms', backoff_max: '5ms' },
    },
  }));
});

const chat = (model, extra = {}) => post(gw, chatBody({ model, ...extra }), { authorization: `Bearer ${key}` });

test('a black-holed upstream: the connect timeout answers 504 in OpenAI shape, and a live deployment takes over', async () => {
  const r = await chat('hole');
  const body = await r.json();
  assert.equal(r.status, 504, JSON.stringify(body));
  assert.equal(body.error.code, 'upstream_timeout');
  assert.equal(body.error.type, 'server_error');
  assert.match(body.error.message, /connect/, 'the connect timeout, not the first-byte one');

  const ok = await chat('hole-or-mock');
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).usage.completion_tokens, 2);
});

test('an upstream that stalls mid-stream: the idle timeout ends the stream with an error event, and the call log records it', async () => {
  const r = await chat('stalled', { stream: true });
  assert.equal(r.status, 200);
  const { data } = await readSse(r);
  assert.equal(data.filter((d) => d.includes('tok')).length, 2, 'the chunks before the stall were delivered');
  const last = JSON.parse(data.at(-1));
  assert.equal(last.error.code, 'upstream_timeout');
  assert.ok(!data.includes('[DONE]'));
  // The gateway hung up on the stalled upstream (no connection kept for reuse).
  await waitFor(() => fakes.stalled.sockets.size === 0);
  let row;
  await waitFor(async () => { row = (await calls()).find((c) => c.model === 'stalled'); return row !== undefined; });
  // The client saw a 200 head; the row keeps that status and names the error.
  assert.equal(row.status, 200, JSON.stringify(row));
  assert.equal(row.error, 'upstream_timeout', JSON.stringify(row));
  assert.ok(row.completion_tokens > 0, JSON.stringify(row));
});

test('garbage instead of a response: 502 in OpenAI shape, and the connection is not reused', async () => {
  for (let i = 0; i < 2; i++) {
    const r = await chat('garbage');
    const body = await r.json();
    assert.equal(r.status, 502, JSON.stringify(body));
    assert.equal(body.error.type, 'server_error');
    assert.equal(typeof body.error.message, 'string');
  }
  assert.equal(fakes.garbage.requests, 4, 'two attempts per request, each on a new connection');
  await waitFor(() => fakes.garbage.sockets.size === 0);
});

test('garbage in the chunked framing mid-stream: an in-stream error event, then the stream ends', async () => {
  const r = await chat('broken', { stream: true });
  assert.equal(r.status, 200);
  const { data } = await readSse(r);
  assert.equal(data.filter((d) => d.includes('tok')).length, 2);
  const last = JSON.parse(data.at(-1));
  assert.equal(typeof last.error.message, 'string');
  assert.notEqual(last.error.code, 'upstream_timeout', 'ended at the garbage, not by the idle timeout');
  assert.ok(!data.includes('[DONE]'));
  await waitFor(() => fakes.broken.sockets.size === 0);
});

test("a response head that never ends, on the Anthropic door: a bounded 502 in Anthropic's error shape", async () => {
  const r = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': key },
    body: JSON.stringify({ model: 'endless', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  const body = await r.json();
  assert.equal(r.status, 502, JSON.stringify(body));
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'api_error');
  assert.match(body.error.message, /malformed|header/i);
  await waitFor(() => fakes.endless.sockets.size === 0);
});

async function waitFor(fn, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
