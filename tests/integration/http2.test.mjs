// Inbound HTTP/2 (server.http2): over TLS by ALPN "h2", in cleartext by prior knowledge, with
// HTTP/1.1 still served on the same port. A throwaway certificate made here with openssl.
// Checked: curl --http2 and --http2-prior-knowledge; the official openai SDK over undici's h2
// fetch (allowH2), whole and streamed, the server's h2 stream metric proving the protocol;
// 100 concurrent streams on one node:http2 connection; a client RST_STREAM cancels the upstream
// call and leaves the connection serving; a stalled stream leaves another on the same
// connection flowing; a stream whose client takes nothing is reset after the idle timeout (its
// upstream cut), and an idle connection ends with GOAWAY; with http2 off a preface is refused
// as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, mockStats, metricsOf, eventually } from './lib/harness.mjs';

let dir;
let mock;
let slowMock;
let tlsGw;
let plainGw;
const file = (name) => path.join(dir, name);

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-http2-'));
  writeFileSync(file('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', file('server.key'), '-out', file('server.pem')], { stdio: 'ignore' });
  mock = await startMock(['--tokens', '3']);
  slowMock = await startMock(['--tokens', '40', '--inter-token', '50ms']);
  const models = {
    'mock-model': [`http://127.0.0.1:${mock.port}/v1`],
    'slow-model': [`http://127.0.0.1:${slowMock.port}/v1`],
  };
  tlsGw = await startGateway(gatewayConfig({
    models, server: { http2: true, tls: `{cert_file: ${file('server.pem')}, key_file: ${file('server.key')}}` },
  }));
  tlsGw.url = `https://localhost:${tlsGw.port}`;
  plainGw = await startGateway(gatewayConfig({ models, server: { http2: true } }));
});
after(stopAll);

const curl = (...args) => promisify(execFile)('curl', ['-sS', '-v', ...args]);

// One request on an open node:http2 session: { status, body }.
function h2Request(session, { method = 'GET', path: p, body, onResponse } = {}) {
  return new Promise((resolve, reject) => {
    const headers = { ':method': method, ':path': p };
    if (body) headers['content-type'] = 'application/json';
    const req = session.request(headers);
    let status = 0;
    let text = '';
    req.on('response', (h) => { status = h[':status']; onResponse?.(req); });
    req.setEncoding('utf8');
    req.on('data', (d) => { text += d; });
    req.on('end', () => resolve({ status, body: text }));
    req.on('error', reject);
    req.end(body);
  });
}

// The gateway's h2 stream count, read over HTTP/1.1 (so the read itself is not one).
async function h2Streams(gw) {
  if (!gw.url.startsWith('https:')) return (await metricsOf(gw))['turnpike_http2_streams_total'] ?? 0;
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  const text = await (await undiciFetch(`${gw.url}/metrics`, { dispatcher })).text();
  await dispatcher.close();
  const m = /^turnpike_http2_streams_total ([0-9.e+]+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

test('curl --http2 over TLS negotiates h2 by ALPN; --http2-prior-knowledge in cleartext; HTTP/1.1 on the same port', async () => {
  const overTls = await curl('--http2', '-k', '-H', 'content-type: application/json', '-d', chatBody(),
    `${tlsGw.url}/v1/chat/completions`);
  assert.equal(JSON.parse(overTls.stdout).object, 'chat.completion');
  assert.match(overTls.stderr, /ALPN.*h2/);
  assert.match(overTls.stderr, /< HTTP\/2 200/);

  const cleartext = await curl('--http2-prior-knowledge', '-H', 'content-type: application/json', '-d', chatBody(),
    `${plainGw.url}/v1/chat/completions`);
  assert.equal(JSON.parse(cleartext.stdout).object, 'chat.completion');
  assert.match(cleartext.stderr, /< HTTP\/2 200/);

  const http1 = await curl('--http1.1', `${plainGw.url}/healthz`);
  assert.match(http1.stderr, /< HTTP\/1\.1 200/);
  const http1Tls = await curl('--http1.1', '-k', `${tlsGw.url}/healthz`);
  assert.match(http1Tls.stderr, /< HTTP\/1\.1 200/);
});

test('the openai SDK over undici h2 (allowH2): whole and streamed, served as HTTP/2 streams', async () => {
  const before = await h2Streams(tlsGw);
  const dispatcher = new Agent({ allowH2: true, connect: { rejectUnauthorized: false } });
  const client = new OpenAI({ baseURL: `${tlsGw.url}/v1`, apiKey: 'unused', fetch: undiciFetch, fetchOptions: { dispatcher }, maxRetries: 0 });
  const whole = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.content.split('tok').length - 1, 3);
  const stream = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(text.split('tok').length - 1, 3, text);
  await dispatcher.close();
  assert.equal(await h2Streams(tlsGw) - before, 2, 'both calls were HTTP/2 streams');
});

test('100 concurrent streams on one connection are all answered', async () => {
  const session = http2.connect(plainGw.url);
  const results = await Promise.all(Array.from({ length: 100 }, () =>
    h2Request(session, { method: 'POST', path: '/v1/chat/completions', body: chatBody() })));
  session.close();
  assert.equal(results.filter((r) => r.status === 200 && JSON.parse(r.body).object === 'chat.completion').length, 100);
});

test('a client RST_STREAM cancels the upstream call; the connection keeps serving', async () => {
  const base = await mockStats(slowMock);
  const session = http2.connect(plainGw.url);
  await new Promise((resolve) => {
    const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });
    req.once('data', () => { req.close(http2.constants.NGHTTP2_CANCEL); resolve(); });
    req.on('error', () => {});
    req.end(chatBody({ model: 'slow-model', stream: true }));
  });
  const stats = await eventually(async () => {
    const s = await mockStats(slowMock);
    return s.client_disconnects > base.client_disconnects && s;
  }, 3000);
  assert.equal(stats.client_disconnects - base.client_disconnects, 1, 'the mock saw the upstream call cut');
  assert.equal(stats.streams_completed - base.streams_completed, 0);
  const after = await h2Request(session, { path: '/healthz' });
  assert.equal(after.status, 200);
  session.close();
  const m = await metricsOf(plainGw);
  assert.ok((m['turnpike_http2_client_resets_total'] ?? 0) >= 1);
});

test('a stalled stream leaves another stream on the same connection flowing', async () => {
  const session = http2.connect(plainGw.url);
  // Stream A: a long stream the client stops reading after its first bytes.
  let stalledBytes = 0;
  const stalled = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });
  stalled.end(chatBody({ model: 'slow-model', stream: true }));
  await new Promise((resolve) => stalled.once('data', (d) => { stalledBytes += d.length; stalled.pause(); resolve(); }));
  // Stream B on the same connection runs to its end meanwhile.
  const flowing = await h2Request(session, { method: 'POST', path: '/v1/chat/completions', body: chatBody({ stream: true }) });
  assert.equal(flowing.status, 200);
  assert.match(flowing.body, /data: \[DONE\]/);
  assert.equal(flowing.body.split('tok').length - 1, 3);
  // A then resumes and completes: nothing was lost while it waited.
  const rest = await new Promise((resolve, reject) => {
    let text = '';
    stalled.setEncoding('utf8');
    stalled.on('data', (d) => { text += d; });
    stalled.on('end', () => resolve(text));
    stalled.on('error', reject);
    stalled.resume();
  });
  assert.match(rest, /data: \[DONE\]/);
  assert.ok(stalledBytes > 0);
  session.close();
});

test('with http2 off (the default) the preface is refused as HTTP/1.1 did before', async () => {
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  const reply = await new Promise((resolve) => {
    const sock = net.connect(gw.port, '127.0.0.1');
    let data = '';
    sock.on('data', (d) => { data += d.toString('latin1'); });
    sock.on('close', () => resolve(data));
    sock.on('error', () => resolve(data));
    sock.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  });
  assert.match(reply, /^HTTP\/1\.1 400/);
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_http2_streams_total'] ?? 0, 0);
});

// A gateway whose idle timeout (also the per-stream write timeout) is 1 s.
async function shortIdleGateway(models) {
  return startGateway(gatewayConfig({ models, server: { http2: true, timeouts: '{idle: 1s}' } }));
}

test('a stream whose client keeps its window shut is reset after the idle timeout; its upstream is cut', async () => {
  const bigMock = await startMock(['--tokens', '200000']);  // more than any socket buffer holds
  const gw = await shortIdleGateway({ 'big-model': [`http://127.0.0.1:${bigMock.port}/v1`] });
  // A window of 0: the client takes nothing, so the stream's queue fills and stays full.
  const session = http2.connect(gw.url, { settings: { initialWindowSize: 0 } });
  session.on('error', () => {});
  const rstCode = await new Promise((resolve) => {
    const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });
    req.on('error', () => {});
    req.on('close', () => resolve(req.rstCode));
    req.end(chatBody({ model: 'big-model', stream: true }));
  });
  assert.equal(rstCode, http2.constants.NGHTTP2_CANCEL);
  const stats = await eventually(async () => {
    const s = await mockStats(bigMock);
    return s.client_disconnects > 0 && s;
  }, 3000);
  assert.equal(stats.client_disconnects, 1, 'the upstream call was cut');
  assert.equal(stats.streams_completed, 0);
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_http2_stream_timeouts_total'], 1);
  session.destroy();
});

test('an idle HTTP/2 connection ends with GOAWAY NO_ERROR, not a bare close', async () => {
  const gw = await shortIdleGateway({ 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] });
  const session = http2.connect(gw.url);
  const goaway = new Promise((resolve) => session.once('goaway', (code) => resolve(code)));
  session.on('error', () => {});
  const r = await h2Request(session, { method: 'POST', path: '/v1/chat/completions', body: chatBody() });
  assert.equal(r.status, 200);
  assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
  const m = await metricsOf(gw);
  assert.equal(m['turnpike_http2_goaways_total'], 1);
  session.destroy();
});
