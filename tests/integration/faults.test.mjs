// Upstream failures: failover before the first byte, Retry-After, timeouts, connect errors, and
// in-stream errors once bytes reached the client. Each mock injects one fault on every request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, readSse, mockStats } from './lib/harness.mjs';

after(stopAll);

const post = (gw, body) =>
  fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

// A port nothing listens on: bind, note the port, close.
async function closedPort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

const fastRetry = { max_attempts: 3, backoff_base: '1ms', backoff_max: '5ms' };

test('a failing deployment (500) fails over to a healthy one', async () => {
  const bad = await startMock(['--fail-rate', '1']);
  const good = await startMock(['--tokens', '3']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [{ base_url: `http://127.0.0.1:${bad.port}/v1`, weight: 1000 }, `http://127.0.0.1:${good.port}/v1`] },
    routing: fastRetry,
  }));
  for (let i = 0; i < 5; i++) {
    const r = await post(gw, chatBody());
    assert.equal(r.status, 200);
    assert.equal((await r.json()).usage.completion_tokens, 3);
  }
  assert.ok((await mockStats(bad)).requests >= 4, 'the heavy-weighted bad deployment was tried first');
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(metrics, /turnpike_upstream_retries_total [1-9]/);
});

test('every attempt 500: the last upstream error is passed on with its status', async () => {
  const bad = await startMock(['--fail-rate', '1']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${bad.port}/v1`] }, routing: fastRetry }));
  const r = await post(gw, chatBody());
  assert.equal(r.status, 500);
  assert.equal(typeof (await r.json()).error.message, 'string');
  assert.equal((await mockStats(bad)).requests, 3, 'bounded attempts: max_attempts = 3');
});

test('429 with Retry-After: waits, retries, and passes the 429 on when it persists', async () => {
  const limited = await startMock(['--rate-limit-rate', '1', '--retry-after', '1']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${limited.port}/v1`] },
    routing: { ...fastRetry, max_attempts: 2, max_retry_after: '2s' },
  }));
  const t0 = Date.now();
  const r = await post(gw, chatBody());
  const elapsed = Date.now() - t0;
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), '1');
  assert.equal((await r.json()).error.type !== undefined, true);
  assert.equal((await mockStats(limited)).requests, 2);
  assert.ok(elapsed >= 900, `honoured Retry-After: 1 between attempts (elapsed ${elapsed} ms)`);
});

test('a Retry-After above routing.max_retry_after is not waited for on the same deployment', async () => {
  const limited = await startMock(['--rate-limit-rate', '1', '--retry-after', '60']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${limited.port}/v1`] },
    routing: { ...fastRetry, max_retry_after: '1s' },
  }));
  const r = await post(gw, chatBody());
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), '60');
  assert.equal((await mockStats(limited)).requests, 1);
});

test('connection refused on every deployment -> 502 in OpenAI shape', async () => {
  const port = await closedPort();
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${port}/v1`] }, routing: fastRetry }));
  const r = await post(gw, chatBody());
  assert.equal(r.status, 502);
  const body = await r.json();
  assert.equal(body.error.code, 'upstream_unavailable');
  assert.equal(body.error.type, 'server_error');
});

test('connection refused fails over to a live deployment', async () => {
  const port = await closedPort();
  const good = await startMock(['--tokens', '2']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [{ base_url: `http://127.0.0.1:${port}/v1`, weight: 1000 }, `http://127.0.0.1:${good.port}/v1`] },
    routing: fastRetry,
  }));
  const r = await post(gw, chatBody());
  assert.equal(r.status, 200);
});

test('slow upstream headers past the first-byte timeout -> 504', async () => {
  const slow = await startMock(['--slow-headers', '3s']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${slow.port}/v1`] },
    upstream: { timeouts: '{connect: 1s, first_byte: 200ms, idle: 1s}' },
    routing: { ...fastRetry, max_attempts: 1 },
  }));
  const r = await post(gw, chatBody());
  assert.equal(r.status, 504);
  assert.equal((await r.json()).error.code, 'upstream_timeout');
});

test('an upstream reset mid-stream becomes an in-stream error event, then the stream ends', async () => {
  const resetting = await startMock(['--reset-rate', '1', '--tokens', '10']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${resetting.port}/v1`] }, routing: fastRetry }));
  const r = await post(gw, chatBody({ stream: true }));
  assert.equal(r.status, 200);
  const { data } = await readSse(r);
  const last = JSON.parse(data.at(-1));
  assert.equal(typeof last.error.message, 'string');
  assert.ok(data.length >= 2, 'tokens before the reset were delivered');
  assert.ok(!data.includes('[DONE]'));
  assert.equal((await mockStats(resetting)).requests, 1, 'no retry once bytes reached the client');
});

test('a stream idle past upstream.timeouts.idle ends with an in-stream timeout error', async () => {
  const slow = await startMock(['--tokens', '3', '--inter-token', '2s']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${slow.port}/v1`] },
    upstream: { timeouts: '{connect: 1s, first_byte: 1s, idle: 300ms}' },
  }));
  const r = await post(gw, chatBody({ stream: true }));
  const { data } = await readSse(r);
  assert.equal(JSON.parse(data.at(-1)).error.code, 'upstream_timeout');
});

test('SSE keep-alive comments while the upstream is silent', async () => {
  const slow = await startMock(['--tokens', '2', '--inter-token', '700ms']);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${slow.port}/v1`] },
    server: { sse_keepalive: '200ms' },
  }));
  const r = await post(gw, chatBody({ stream: true }));
  const { data, comments } = await readSse(r);
  assert.equal(data.at(-1), '[DONE]');
  assert.ok(comments.length >= 2, `expected keep-alive comments, got ${comments.length}`);
});

test("an upstream whose response head never ends: a 502 at the head's bound, not a wait for the first-byte timeout", async () => {
  // Answers every request with a status line, then header fields forever (until the gateway
  // hangs up), ~1 KiB every 2 ms.
  const sockets = new Set();
  const field = 'X-Endless: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'.repeat(24);
  const endless = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.once('data', () => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n');
      const timer = setInterval(() => { if (!sock.destroyed) sock.write(field); }, 2);
      sock.on('close', () => clearInterval(timer));
    });
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise((r) => endless.listen(0, '127.0.0.1', r));
  try {
    const gw = await startGateway(gatewayConfig({
      models: { 'mock-model': [`http://127.0.0.1:${endless.address().port}/v1`] },
      upstream: { timeouts: '{connect: 5s, first_byte: 60s, idle: 60s}' },
      routing: { max_attempts: 1 },
    }));
    const started = Date.now();
    const r = await post(gw, chatBody());
    assert.equal(r.status, 502);
    assert.match((await r.json()).error.message, /malformed|header/i);
    assert.ok(Date.now() - started < 20000, 'answered long before the first-byte timeout');
    await new Promise((resolve) => {
      const check = () => (sockets.size === 0 ? resolve() : setTimeout(check, 20));
      check();
    });
  } finally {
    for (const s of sockets) s.destroy();
    endless.close();
  }
});
