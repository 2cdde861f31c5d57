// Starts the real turnpike binary (gateway and mock provider) on port 0 and talks to it over
// loopback. Every process a test starts is stopped by the test's `after` hook (stopAll).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.TURNPIKE_BIN ?? path.resolve(here, '../../../build/src/app/turnpike');
// The binary with the test-only probe door (tests/doors/probe/), built beside turnpike.
export const PROBE_BIN = process.env.TURNPIKE_PROBE_BIN ??
  path.resolve(path.dirname(BIN), '../../tests/doors/probe/turnpike-probe');
// TURNPIKE_STARTUP_TIMEOUT_MS: longer for a binary under valgrind (bench/agent-turn-callgrind.mjs).
const STARTUP_TIMEOUT_MS = Number(process.env.TURNPIKE_STARTUP_TIMEOUT_MS ?? 10_000);
const started = new Set();

// Spawns `turnpike <args>` (or `bin <args>`) and resolves once it prints "listening on HOST:PORT"
// (within `timeoutMs`: longer for a start that is meant to wait, e.g. for a dependency).
export function startProcess(args, { env = {}, bin = BIN, timeoutMs = STARTUP_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    started.add(proc);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no "listening" line from ${args.join(' ')}: ${err}`)), timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on ([0-9.]+):(\d+)/.exec(out);
      if (m && !proc.port) {
        proc.port = Number(m[2]);
        clearTimeout(timer);
        resolve(proc);
      }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => { proc.exitCode_ = code; });
    // 'close' comes after stdout and stderr are drained; 'exit' may come before the last of
    // stderr is read, which would lose the message a failed start-up printed.
    proc.drained = new Promise((r) => proc.once('close', r));
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!proc.port) reject(new Error(`${args.join(' ')} exited ${code ?? signal}: ${err}`));
    });
    proc.output = () => out;
    proc.errors = () => err;
  });
}

export async function startMock(flags = []) {
  return startProcess(['mock-provider', '--listen', '127.0.0.1:0', ...flags]);
}

// `models` maps public model name -> list of base URLs (or {provider, base_url, weight, model};
// provider defaults to openai).
// Governance is off unless `governance` says otherwise (most tests exercise the open gateway);
// `store`, `call_log` add those sections, `prices` maps model -> {input, output, ...};
// `sections` adds flat sections by name (e.g. { llm_cache: { enabled: true }, redis: { url } }).
export function gatewayConfig({
  models, server = {}, upstream = {}, routing = {}, governance = { enabled: false }, store = {},
  call_log = {}, prices = {}, hotpath = {}, sections = {},
}) {
  const lines = ['server:', '  listen: 127.0.0.1:0', `  workers: ${server.workers ?? 2}`, '  access_log: ""'];
  for (const [k, v] of Object.entries(server)) if (k !== 'workers') lines.push(`  ${k}: ${v}`);
  if (Object.keys(upstream).length) {
    lines.push('upstream:');
    for (const [k, v] of Object.entries(upstream)) lines.push(`  ${k}: ${v}`);
  }
  if (Object.keys(routing).length) {
    lines.push('routing:');
    for (const [k, v] of Object.entries(routing)) lines.push(`  ${k}: ${v}`);
  }
  for (const [section, values] of [['governance', governance], ['hotpath', hotpath], ['store', store], ['call_log', call_log], ...Object.entries(sections)]) {
    if (!Object.keys(values).length) continue;
    lines.push(`${section}:`);
    for (const [k, v] of Object.entries(values)) lines.push(`  ${k}: ${v}`);
  }
  if (Object.keys(prices).length) {
    lines.push('prices:');
    for (const [model, p] of Object.entries(prices)) lines.push(`  ${model}: ${JSON.stringify(p)}`);
  }
  lines.push('models:');
  for (const [name, deps] of Object.entries(models)) {
    lines.push(`  - name: ${name}`, '    deployments:');
    for (const d of deps) {
      const { provider = 'openai', ...dep } = typeof d === 'string' ? { base_url: d } : d;
      lines.push(`      - provider: ${provider}`);
      for (const [k, v] of Object.entries(dep)) lines.push(`        ${k}: ${v}`);
    }
  }
  return lines.join('\n') + '\n';
}

export async function startGateway(configText, opts = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-test-'));
  const file = path.join(dir, 'turnpike.yaml');
  writeFileSync(file, configText);
  const proc = await startProcess(['serve', '--config', file], opts);
  proc.url = `http://127.0.0.1:${proc.port}`;
  return proc;
}

// A gateway with governance on (SQLite in a fresh directory, reconcile off, the call log
// flushed every 50 ms) serving `models` at `prices`, with a plan, a tenant on it and one key.
// Returns the gateway, the key, `admin(method, route, body)` -> {status, body} for the admin
// API, and `calls()`: the call log's newest 100 rows.
// `store`: more of the store section (e.g. { engine: 'postgres', url }); default the SQLite file.
// `bin`: another binary than turnpike (PROBE_BIN).
export async function startGovernedGateway({ name, models, prices, store = {}, bin = BIN, sections = {} }) {
  const token = 'test-admin-token';
  const dir = mkdtempSync(path.join(os.tmpdir(), `turnpike-${name}-`));
  const gw = await startGateway(gatewayConfig({
    models,
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db'), ...store },
    call_log: { flush_interval: '50ms' },
    prices,
    sections,
  }), { env: { TURNPIKE_ADMIN_TOKEN: token }, bin });
  const admin = async (method, route, body) => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
  const expect = async (status, call) => {
    const r = await call;
    if (r.status !== status) throw new Error(`admin: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await expect(200, admin('PUT', 'plans/p1', {}));
  await expect(201, admin('POST', 'tenants', { id: 't1', plan: 'p1' }));
  const created = await expect(201, admin('POST', 'keys', { tenant: 't1', name }));
  const calls = async () => (await admin('GET', 'calls?limit=100')).body.data;
  return { gw, key: created.key, admin, calls };
}

// The admin API of `gw` as a function: admin(route, body, method = 'POST') -> the JSON answer;
// asserts a 2xx status.
export function adminOf(gw, token) {
  return async (route, body, method = 'POST') => {
    const r = await fetch(`${gw.url}/admin/v1/${route}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(r.status < 300);
    return r.json();
  };
}

// One request to `gw`'s Elasticsearch door (/es) with `key` (ApiKey): { status, cache
// (X-Cache), timing (Server-Timing, '' when absent), body (the JSON answer, null when empty) };
// with `ndjson` the body is sent as is, as NDJSON. An answer that is not JSON throws, with it.
export async function esRequest(gw, key, method, route, body, ndjson = false) {
  const r = await fetch(`${gw.url}/es/${route}`, {
    method,
    headers: {
      authorization: `ApiKey ${key}`,
      'content-type': ndjson ? 'application/x-ndjson' : 'application/json',
    },
    body: body === undefined ? undefined : ndjson ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new Error(`${method} ${route}: ${r.status} ${text}`);
  }
  return {
    status: r.status,
    cache: r.headers.get('x-cache'),
    timing: r.headers.get('server-timing') ?? '',
    retryAfter: r.headers.get('retry-after'),
    body: parsed,
  };
}

// Every series of `gw`'s /metrics as { 'name{labels}': value }.
export async function metricsOf(gw) {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const out = {};
  for (const line of text.split('\n')) {
    const m = /^(turnpike_[a-z0-9_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m) out[m[1] + (m[2] ?? '')] = Number(m[3]);
  }
  return out;
}

export async function stopAll() {
  const waits = [];
  for (const proc of started) {
    if (proc.exitCode === null && proc.signalCode === null) {
      waits.push(new Promise((r) => proc.once('exit', r)));
      proc.kill('SIGKILL');
    }
  }
  started.clear();
  await Promise.all(waits);
}

// Resolves with the exit code once the process has exited and, for a process from
// startProcess, once its output is drained, so errors() holds everything it printed.
export async function waitExit(proc) {
  if (proc.exitCode === null && proc.signalCode === null) {
    await new Promise((r) => proc.once('exit', r));
  }
  if (proc.drained) await proc.drained;
  return proc.exitCode;
}

export function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn() until it returns truthy or the time runs out; returns the last value.
export async function eventually(fn, timeoutMs = 3000, stepMs = 25) {
  const deadline = Date.now() + timeoutMs;
  let v;
  while (Date.now() < deadline) {
    v = await fn();
    if (v) return v;
    await sleep(stepMs);
  }
  return v;
}

export async function mockStats(mock) {
  const r = await fetch(`http://127.0.0.1:${mock.port}/mock/stats`);
  return r.json();
}

// A client that stops reading mid-stream (hot-path rule 5: a slow client slows the upstream
// read, not memory). `open()` starts a stream on a raw socket; after its first bytes the
// client stops reading for 1.5 s. Meanwhile the stream must not finish at `mock`, and the
// gateway's RSS must not grow by 20 MiB (40 under a sanitizer, below). Then the stream is
// dropped.
//
// Loopback autotunes each receive buffer up to net.ipv4.tcp_rmem's maximum: 32 MiB on the CI
// machine, on both hops, plus the send buffers. A stream shorter than all of them together
// can finish into the buffers whatever the gateway does. So the stream must be HELD_BACK_TOKENS
// long: over 100 MB of events, more than twice what the buffers can hold.
export const HELD_BACK_TOKENS = 1_000_000;
//
// The mock's count is the check that holds on every build: a gateway that buffers lets the mock
// finish its stream during the pause. Under a sanitizer build (its /metrics has no allocation
// count), ASan's quarantine keeps freed blocks resident (up to 256 MB), so the RSS follows what
// was streamed before the pause, not what is held: 8.5-21.7 MiB measured there (2026-12-07, 15 runs),
// against 0.3-0.4 MiB for the release build. Its RSS bound is 40 MiB.
export async function assertHeldBack({ gw, mock, open }) {
  const sanitized = !('turnpike_allocations_total' in await metricsOf(gw));
  const rssLimitKiB = (sanitized ? 40 : 20) * 1024;
  const rssBefore = rssKiB(gw.pid);
  const sock = open();
  let received = 0;
  sock.on('data', (d) => { received += d.length; });
  await eventually(() => received > 0, 3000);
  sock.pause();
  await sleep(1500);
  const paused = await mockStats(mock);
  const rssPaused = rssKiB(gw.pid);
  sock.destroy();
  assert.equal(paused.streams_completed, 0, 'the mock is held back while the client does not read');
  assert.ok(rssPaused - rssBefore < rssLimitKiB, `gateway RSS grew ${rssPaused - rssBefore} KiB while the client was paused`);
}

// The other half of a slow client: `open()` starts a stream of `tokens` OpenAI-chat tokens on a
// raw socket; the client stops reading after the first bytes, then reads again. Every token
// must arrive, and the stream must end with [DONE].
export async function assertPausedStreamArrivesWhole({ open, tokens, timeoutMs = 60000 }) {
  const sock = open();
  let received = '';
  sock.setEncoding('latin1');
  sock.on('data', (d) => { received += d; });
  await eventually(() => received.length > 0, 3000);
  sock.pause();
  await sleep(500);
  sock.resume();
  await eventually(() => received.endsWith('0\r\n\r\n'), timeoutMs, 50);
  sock.destroy();
  const body = dechunk(received.slice(received.indexOf('\r\n\r\n') + 4));
  assert.ok(body.endsWith('data: [DONE]\n\n'));
  assert.equal(body.split('"content":"tok').length - 1, tokens, 'every token arrived once the client read again');
}

export function chatBody(extra = {}) {
  return JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello' }], ...extra });
}

// Sends raw bytes (a string, Buffer, or array of [bytes, delayMs] steps) and reads the first
// HTTP response. Resolves {status, headers, body, closed} — closed: the server closed the
// connection. Rejects only on timeout.
export function rawRequest(port, steps, { timeoutMs = 5000 } = {}) {
  if (!Array.isArray(steps)) steps = [[steps, 0]];
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (closed) => {
      if (done) return;
      const parsed = parseResponse(buf);
      if (!parsed && !closed) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(parsed ? { ...parsed, closed } : { status: 0, headers: {}, body: '', closed, raw: buf.toString() });
    };
    const timer = setTimeout(() => { if (!done) { done = true; sock.destroy(); reject(new Error('timeout; got: ' + buf.toString().slice(0, 200))); } }, timeoutMs);
    sock.on('data', (d) => { buf = Buffer.concat([buf, d]); finish(false); });
    sock.on('end', () => finish(true));
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    sock.on('connect', async () => {
      for (const [bytes, delay] of steps) {
        if (delay) await sleep(delay);
        if (sock.destroyed) return;
        sock.write(bytes);
      }
    });
  });
}

// Parses one complete HTTP/1.1 response with Content-Length (or no body); null if incomplete.
export function parseResponse(buf) {
  const text = buf.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = text.slice(0, end).split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  if (status === 100) return parseResponse(buf.subarray(end + 4));
  const len = Number(headers['content-length'] ?? 0);
  if (buf.length < end + 4 + len) return null;
  return { status, headers, body: buf.subarray(end + 4, end + 4 + len).toString('utf8') };
}

// Reads an SSE response body from a fetch Response; returns the list of data payloads and comments.
export async function readSse(response) {
  const text = await response.text();
  const events = text.split('\n\n').filter((b) => b.length > 0);
  return {
    data: events.flatMap((e) => e.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6))),
    comments: events.filter((e) => e.startsWith(':')),
    text,
  };
}

// Decodes an HTTP/1.1 chunked body (the bytes after the response head).
export function dechunk(text) {
  let out = '';
  let i = 0;
  for (;;) {
    const eol = text.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(text.slice(i, eol), 16);
    if (!size) break;
    out += text.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
  return out;
}
