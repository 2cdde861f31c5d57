// OpenTelemetry traces (telemetry.otlp): a collector in the test (a node HTTP server on
// loopback) receives the gateway's OTLP/HTTP exports (protobuf, the default, read by the
// OpenTelemetry SDK's decoder; and JSON) and the test checks the spans: the
// server span with GenAI attributes and its child spans, the client's traceparent kept, the
// upstream (a node server standing in for an OpenAI-compatible provider) given a traceparent of
// the same trace, a search request's own span kind, and a collector that does not answer
// failing no request while the failed-export and dropped counters move.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  esRequest, eventually, gatewayConfig, metricsOf, startGateway, startGovernedGateway,
  stopAll,
} from './lib/harness.mjs';
import { decodeTraces } from './lib/otlp.mjs';

const servers = [];
after(async () => {
  await stopAll();
  for (const s of servers) s.closeAllConnections?.(), s.close();
});

function listen(server) {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// The collector: every export's spans, flattened. `protocol` is the encoding it expects.
async function startCollector(protocol = 'http/protobuf') {
  const spans = [];
  const contentType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => { chunks.push(d); });
    req.on('end', () => {
      assert.equal(req.url, '/v1/traces');
      assert.equal(req.headers['content-type'], contentType);
      const doc = decodeTraces(contentType, Buffer.concat(chunks));
      for (const rs of doc.resourceSpans) {
        assert.equal(rs.resource.attributes[0].key, 'service.name');
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await listen(server);
  return { port, spans };
}

// An OpenAI-compatible upstream that records each request's traceparent.
async function startUpstream() {
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push(req.headers.traceparent ?? null);
      const { stream, model } = JSON.parse(body);
      const usage = { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          id: 'c1', object: 'chat.completion', created: 1, model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
          usage,
        }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta, finish = null, extra = {}) => `data: ${JSON.stringify({
        id: 'c1', object: 'chat.completion.chunk', created: 1, model,
        choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
      res.write(chunk({ role: 'assistant', content: 'Hi' }));
      res.write(chunk({ content: ' there' }));
      res.write(chunk({}, 'stop', { usage }));
      res.end('data: [DONE]\n\n');
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/v1`, seen };
}

const otlp = (port, extra = '') =>
  `{endpoint: "http://127.0.0.1:${port}/v1/traces", export_interval: 100ms${extra}}`;
const attrs = (span) => Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
const chat = (gw, body, headers = {}) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hello' }], ...body }),
});

for (const protocol of ['http/protobuf', 'http/json']) {
test(`otel (${protocol}): chat and streamed calls make a server span with GenAI attributes, phases and an attempt; traceparent in and out`, async () => {
  const collector = await startCollector(protocol);
  const upstream = await startUpstream();
  const gw = await startGateway(gatewayConfig({
    models: { m: [upstream.url] },
    sections: { telemetry: { otlp: otlp(collector.port, `, protocol: ${protocol}`) } },
  }));
  const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const clientSpan = '00f067aa0ba902b7';
  const r = await chat(gw, {}, { traceparent: `00-${clientTrace}-${clientSpan}-01`, tracestate: 'k=v' });
  assert.equal(r.status, 200);
  await r.json();

  const server = await eventually(() => collector.spans.find((s) => s.traceId === clientTrace && s.kind === 2));
  assert.ok(server, 'a server span of the client\'s trace');
  assert.equal(server.name, 'chat m');
  assert.equal(server.parentSpanId, clientSpan);
  assert.equal(server.traceState, 'k=v');
  const a = attrs(server);
  assert.equal(a['gen_ai.operation.name'], 'chat');
  assert.equal(a['gen_ai.provider.name'], 'openai');
  assert.equal(a['gen_ai.request.model'], 'm');
  assert.equal(a['gen_ai.response.model'], 'm');
  assert.equal(a['gen_ai.usage.input_tokens'], '7');
  assert.equal(a['gen_ai.usage.output_tokens'], '2');
  // An identity whole answer is scanned for its usage only (model_call.cc): no finish reason.
  assert.equal(a['http.request.method'], 'POST');
  assert.equal(a['http.response.status_code'], '200');
  assert.equal(a['url.path'], '/v1/chat/completions');
  assert.ok(BigInt(server.endTimeUnixNano) > BigInt(server.startTimeUnixNano));
  // Unix nanoseconds of this run: within a minute of the test's clock.
  const skewMs = BigInt(server.startTimeUnixNano) / 1000000n - BigInt(Date.now());
  assert.ok(skewMs < 60000n && skewMs > -60000n, `start ${server.startTimeUnixNano}`);

  const children = collector.spans.filter((s) => s.traceId === clientTrace && s.parentSpanId === server.spanId);
  const names = children.map((s) => s.name);
  for (const phase of ['gateway.parse', 'upstream.first_byte', 'response.write']) assert.ok(names.includes(phase), names.join());
  const attempts = children.filter((s) => s.kind === 3);
  assert.equal(attempts.length, 1);
  assert.equal(attempts[0].name, 'chat m');
  assert.equal(attrs(attempts[0])['server.address'], '127.0.0.1');
  // The upstream got the same trace, with the attempt's span as its parent.
  assert.equal(upstream.seen.length, 1);
  assert.equal(upstream.seen[0], `00-${clientTrace}-${attempts[0].spanId}-01`);

  // Streamed, without a client traceparent: a new trace.
  const s = await chat(gw, { stream: true });
  assert.equal(s.status, 200);
  assert.match(await s.text(), /\[DONE\]/);
  assert.equal(upstream.seen.length, 2);
  const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(upstream.seen[1]);
  assert.notEqual(traceId, clientTrace);
  const streamed = await eventually(() => collector.spans.find((x) => x.traceId === traceId && x.kind === 2));
  assert.ok(streamed, 'a server span of the streamed call\'s trace');
  assert.equal(streamed.parentSpanId, undefined);
  assert.equal(attrs(streamed)['turnpike.stream'], true);
  assert.equal(attrs(streamed)['gen_ai.usage.output_tokens'], '2');
  assert.equal(streamed.events[0].name, 'gen_ai.first_token');
  assert.deepEqual(attrs(streamed)['gen_ai.response.finish_reasons'], { values: [{ stringValue: 'stop' }] });
  const streamChildren = collector.spans.filter((x) => x.traceId === traceId && x.parentSpanId === streamed.spanId);
  assert.ok(streamChildren.some((x) => x.name === 'response.stream'));
  assert.ok(streamChildren.some((x) => x.kind === 3 && x.spanId === spanId));

  const m = await eventually(async () => {
    const now = await metricsOf(gw);
    return now.turnpike_otel_spans_exported_total >= 2 ? now : null;
  });
  assert.ok(m, 'the collector\'s two accepted exports are counted');
  assert.equal(m.turnpike_otel_spans_dropped_total, 0);
  assert.equal(m.turnpike_otel_exports_failed_total, 0);
});
}

test('otel: a search request is a span of its own kind', async () => {
  const collector = await startCollector();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-otel-'));
  const { gw, key } = await startGovernedGateway({
    name: 'otel',
    models: { m: ['http://127.0.0.1:9/v1'] },
    sections: { search: { path: path.join(dir, 'search.db') }, telemetry: { otlp: otlp(collector.port) } },
  });
  assert.equal((await esRequest(gw, key, 'PUT', 'docs', { mappings: { properties: { t: { type: 'text' } } } })).status, 200);
  const r = await esRequest(gw, key, 'POST', 'docs/_search', { query: { match_all: {} } });
  assert.equal(r.status, 200);
  const span = await eventually(() => collector.spans.find((s) => s.name === 'search docs' && attrs(s)['db.operation.name'] === 'search'));
  assert.ok(span, `a search span among ${collector.spans.map((s) => s.name).join()}`);
  assert.equal(span.kind, 2);
  const a = attrs(span);
  assert.equal(a['db.system.name'], 'elasticsearch');
  assert.equal(a['db.namespace'], 'docs');
  assert.equal(a['turnpike.tenant.id'], 't1');
  assert.equal(a['url.path'], '/es/docs/_search');
  assert.equal(a['gen_ai.operation.name'], undefined);
});

test('otel: a collector that does not answer fails no request; failed exports and drops are counted', async () => {
  // Accepts connections, reads, and never answers: an export waits for its timeout.
  let received = 0;
  const hung = net.createServer((socket) => { socket.on('data', (d) => { received += d.length; }); });
  servers.push(hung);
  const port = await new Promise((resolve) => hung.listen(0, '127.0.0.1', () => resolve(hung.address().port)));
  const upstream = await startUpstream();
  const gw = await startGateway(gatewayConfig({
    models: { m: [upstream.url] },
    sections: { telemetry: { otlp: otlp(port, ', queue_size: 1, timeout: 2s') } },
  }));
  const first = await chat(gw, {});
  assert.equal(first.status, 200);
  await first.json();
  // The exporter took it (its request reached the collector) and waits on the answer now.
  assert.ok(await eventually(() => received > 0, 5000), 'the first export reached the collector');
  for (let i = 0; i < 3; ++i) {
    const r = await chat(gw, {});
    assert.equal(r.status, 200);
    await r.json();
  }
  // The queue holds one: of the three, one waits and two were dropped.
  assert.equal((await metricsOf(gw)).turnpike_otel_spans_dropped_total, 2);
  const m = await eventually(async () => {
    const now = await metricsOf(gw);
    return now.turnpike_otel_exports_failed_total >= 1 ? now : null;
  }, 5000);
  assert.ok(m, 'a failed export is counted');
  assert.equal(m.turnpike_otel_spans_exported_total, 0);
});
