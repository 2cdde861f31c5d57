// The OpenAI chat route end to end: gateway -> mock provider, stream and non-stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, readSse } from './lib/harness.mjs';

let mock;
let gw;
before(async () => {
  mock = await startMock(['--tokens', '5']);
  gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
});
after(stopAll);

const post = (body, headers = {}) =>
  fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

test('non-stream completion passes through with usage and a request id', async () => {
  const r = await post(chatBody(), { 'x-request-id': 'req-abc-123' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-request-id'), 'req-abc-123');
  const body = await r.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, 'mock-model');
  assert.equal(body.choices[0].message.role, 'assistant');
  assert.equal(body.choices[0].message.content, 'tok0 tok1 tok2 tok3 tok4 ');
  assert.equal(body.usage.completion_tokens, 5);
});

test('a request id is generated when the client sends none', async () => {
  const r = await post(chatBody());
  assert.match(r.headers.get('x-request-id'), /^[0-9a-f]{24}$/);
  await r.text();
});

test('stream without include_usage: role first, every token, finish, [DONE], no usage chunk', async () => {
  const r = await post(chatBody({ stream: true }));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const { data } = await readSse(r);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, 'tok0 tok1 tok2 tok3 tok4 ');
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  assert.ok(chunks.every((c) => c.choices.length > 0), 'the usage-only chunk the gateway asked for must not reach the client');
});

test('stream with include_usage: the usage chunk reaches the client', async () => {
  const r = await post(chatBody({ stream: true, stream_options: { include_usage: true } }));
  const { data } = await readSse(r);
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  const usage = chunks.filter((c) => c.choices.length === 0 && c.usage);
  assert.equal(usage.length, 1);
  assert.equal(usage[0].usage.completion_tokens, 5);
});

test('GET /v1/models lists the configured models', async () => {
  const r = await fetch(`${gw.url}/v1/models`);
  const body = await r.json();
  assert.equal(body.object, 'list');
  assert.deepEqual(body.data.map((m) => m.id), ['mock-model']);
});

test('health, readiness and metrics', async () => {
  assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  assert.equal((await fetch(`${gw.url}/readyz`)).status, 200);
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const m = /turnpike_requests_total\{route="chat_completions",model="mock-model",status="200"\} (\d+)/.exec(text);
  assert.ok(m, text.slice(0, 500));
  assert.ok(Number(m[1]) >= 4);
  assert.match(text, /turnpike_requests_in_flight 1\n/);  // this very scrape
  assert.match(text, /turnpike_ttft_seconds_count [1-9]/);
  assert.match(text, /turnpike_upstream_reuses_total [1-9]/);
});

test('Server-Timing: absent by default, the gateway phases when server.server_timing is on', async () => {
  const plain = await post(chatBody());
  assert.equal(plain.headers.get('server-timing'), null);
  await plain.text();
  const timed = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    server: { server_timing: 'true' },
  }));
  const phases = (h) => Object.fromEntries(h.split(', ').map((p) => { const [n, d] = p.split(';dur='); return [n, Number(d)]; }));
  for (const stream of [false, true]) {
    const r = await fetch(`${timed.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody({ stream }),
    });
    await r.text();
    const p = phases(r.headers.get('server-timing'));
    for (const name of ['parse', 'route', 'upstream_ttfb', 'to_client']) {
      assert.ok(Number.isFinite(p[name]) && p[name] >= 0, `${name} in ${r.headers.get('server-timing')}`);
    }
  }
  const metrics = await (await fetch(`${timed.url}/metrics`)).text();
  assert.match(metrics, /turnpike_phase_seconds_count\{phase="upstream_ttfb"\} 2/);
  assert.match(metrics, /turnpike_phase_seconds_count\{phase="parse"\} 2/);
});
