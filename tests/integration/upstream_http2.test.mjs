// Upstream HTTP/2 (a deployment with `http2: true`) to the mock provider, which serves h2 by
// prior knowledge beside HTTP/1.1: plain and streamed answers come through; 100 concurrent
// requests ride at most two upstream connections (one per gateway worker: the gateway's
// connect metric and the mock's own HTTP/2 connection count agree); and a client that goes
// away mid-stream makes the gateway reset its upstream stream (the mock sees a RST_STREAM).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import {
  startMock, startGateway, gatewayConfig, stopAll, chatBody, metricsOf, mockStats, eventually,
} from './lib/harness.mjs';

after(stopAll);

const agent = new Agent({ connections: 128, keepAliveTimeout: 60_000 });
after(() => agent.close());

async function gatewayToMock(mockFlags, workers = 2) {
  const mock = await startMock(mockFlags);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [{ base_url: `http://127.0.0.1:${mock.port}/v1`, http2: true }] },
    server: { workers },
  }));
  return { mock, gw };
}

function chat(gw, extra = {}, signal = undefined) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(extra),
    dispatcher: agent, signal,
  });
}

test('plain and streamed answers over upstream HTTP/2; 100 concurrent on <= 2 connections', async () => {
  const { mock, gw } = await gatewayToMock(['--tokens', '5', '--first-token-delay', '300ms']);
  const plain = await chat(gw);
  assert.equal(plain.status, 200);
  const body = await plain.json();
  assert.equal(body.choices[0].message.content, 'tok0 tok1 tok2 tok3 tok4 ');

  const streamed = await chat(gw, { stream: true });
  assert.equal(streamed.status, 200);
  const text = await streamed.text();
  assert.match(text, /tok4/);
  assert.match(text, /data: \[DONE\]/);

  // Each answer waits 300 ms at the mock, so all 100 are in flight together.
  const statuses = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
    const r = await chat(gw, i % 2 ? { stream: true } : {});
    await r.arrayBuffer();
    return r.status;
  }));
  assert.deepEqual(statuses.filter((s) => s !== 200), []);
  const m = await metricsOf(gw);
  assert.ok(m.turnpike_upstream_connects_total <= 2, `${m.turnpike_upstream_connects_total} connects`);
  const stats = await mockStats(mock);
  assert.ok(stats.http2.connections >= 1 && stats.http2.connections <= 2, JSON.stringify(stats.http2));
  assert.equal(stats.http2.streams, 102);
  assert.equal(stats.requests, 102);
});

test('a client that goes away resets its upstream stream', async () => {
  // One worker: its pool holds the origin's one connection, which the next request must reuse.
  const { mock, gw } = await gatewayToMock(['--tokens', '1000', '--inter-token', '20ms'], 1);
  const controller = new AbortController();
  const r = await chat(gw, { stream: true }, controller.signal);
  assert.equal(r.status, 200);
  const reader = r.body.getReader();
  const first = await reader.read();
  assert.ok(first.value.length > 0);
  controller.abort();
  const seen = await eventually(async () => {
    const s = await mockStats(mock);
    return s.http2.resets === 1 && s.client_disconnects === 1 ? s : null;
  }, 5000);
  assert.ok(seen, JSON.stringify(await mockStats(mock)));
  assert.equal(seen.streams_completed, 0);
  // The connection stays: the next request rides it.
  const next = await chat(gw, { max_tokens: 2 });
  assert.equal(next.status, 200);
  await next.arrayBuffer();
  const after = await mockStats(mock);
  assert.equal(after.http2.connections, seen.http2.connections);
});
