// Inbound TLS (server.tls): the gateway terminates TLS itself. A throwaway CA made here with
// openssl signs the server's certificates (localhost, other.test) and a client certificate.
// Checked: the official openai SDK and curl over https; SNI (a known name gets its own
// certificate, an unknown one the default: never refused); SIGHUP swaps the certificate
// under a loop of requests without one failing, and a bad reload keeps the old one; expired
// and mismatched files stop start-up with the file named; client certificates when required.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { startMock, startGateway, startProcess, gatewayConfig, stopAll, chatBody, eventually } from './lib/harness.mjs';

let dir;
let mock;
const file = (name) => path.join(dir, name);

function openssl(...args) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

// A key and a certificate for `cn` with `san`, signed by the CA (or by itself when `self`),
// valid `days` (negative: already expired).
function issue(name, cn, san, { days = 1 } = {}) {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${cn}`,
    '-keyout', `${name}.key`, '-out', `${name}.csr`);
  writeFileSync(file(`${name}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-days', String(days), '-extfile', `${name}.ext`, '-out', `${name}.pem`);
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-tls-inbound-'));
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=Turnpike Test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
  issue('server2', 'localhost', 'DNS:localhost,IP:127.0.0.1');  // the reload's replacement
  issue('other', 'other.test', 'DNS:other.test');
  issue('client', 'client one', 'DNS:client.test');
  issue('expired', 'localhost', 'DNS:localhost', { days: -1 });
  mock = await startMock(['--tokens', '3']);
});
after(async () => {
  await stopAll();
});

const models = () => ({ 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] });
const tlsKeys = (keys) => `{${Object.entries(keys).map(([k, v]) => `${k}: ${v}`).join(', ')}}`;

async function startTlsGateway(keys) {
  const gw = await startGateway(gatewayConfig({ models: models(), server: { tls: tlsKeys(keys) } }));
  gw.url = `https://localhost:${gw.port}`;
  return gw;
}

// The certificate a TLS handshake to `port` is served, given `servername` (SNI).
function servedCertificate(port, servername, options = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...options }, () => {
      const cert = socket.getPeerCertificate();
      const protocol = socket.alpnProtocol;
      socket.end();
      resolve({ cn: cert.subject?.CN, fingerprint: cert.fingerprint256, protocol });
    });
    socket.on('error', reject);
  });
}

const fingerprintOf = (name) => new crypto.X509Certificate(readFileSync(file(name))).fingerprint256;

test('the openai SDK chats over https, whole and streamed, trusting the CA', async () => {
  const gw = await startTlsGateway({ cert_file: file('server.pem'), key_file: file('server.key') });
  const dispatcher = new Agent({ connect: { ca: readFileSync(file('ca.pem')) } });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', fetch: undiciFetch, fetchOptions: { dispatcher }, maxRetries: 0 });
  const whole = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(whole.object, 'chat.completion');
  const stream = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(text.split('tok').length - 1, 3, text);
  // Without the CA the certificate is refused by the client: the server is not trusted blindly.
  const untrusting = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  await assert.rejects(untrusting.models.list());
  await dispatcher.close();
});

test('curl over https: ALPN http/1.1, and keep-alive', async () => {
  const gw = await startTlsGateway({ cert_file: file('server.pem'), key_file: file('server.key') });
  const { stdout, stderr } = await promisify(execFile)('curl', ['-sS', '-v', '--cacert', file('ca.pem'),
    '-H', 'content-type: application/json', '-d', chatBody(), `${gw.url}/v1/chat/completions`]);
  assert.equal(JSON.parse(stdout).object, 'chat.completion');
  assert.match(stderr, /ALPN.*http\/1\.1/);
  // Two requests on one connection: keep-alive works over TLS.
  const twice = await promisify(execFile)('curl', ['-sS', '-v', '--cacert', file('ca.pem'),
    `${gw.url}/healthz`, `${gw.url}/healthz`]);
  assert.match(twice.stderr, /Re-using existing connection/);
});

test('SNI: a known name gets its certificate, an unknown name or none the default', async () => {
  const gw = await startTlsGateway({
    cert_file: file('server.pem'), key_file: file('server.key'),
    certificates: `[{cert_file: ${file('other.pem')}, key_file: ${file('other.key')}}]`,
  });
  assert.equal((await servedCertificate(gw.port, 'other.test')).cn, 'other.test');
  assert.equal((await servedCertificate(gw.port, 'localhost')).cn, 'localhost');
  const unknown = await servedCertificate(gw.port, 'unknown.test');
  assert.equal(unknown.cn, 'localhost');  // the default: served, not refused
  assert.equal(unknown.protocol, false);  // this client offered no ALPN
  // A client that checks the name refuses the default certificate for an unknown name.
  await assert.rejects(servedCertificate(gw.port, 'unknown.test', { rejectUnauthorized: true, ca: readFileSync(file('ca.pem')) }));
});

test('SIGHUP swaps the certificate under load without a failed request; a bad reload keeps it', async () => {
  copyFileSync(file('server.pem'), file('live.pem'));
  copyFileSync(file('server.key'), file('live.key'));
  const gw = await startTlsGateway({ cert_file: file('live.pem'), key_file: file('live.key') });
  assert.equal((await servedCertificate(gw.port, 'localhost')).fingerprint, fingerprintOf('server.pem'));
  const ca = readFileSync(file('ca.pem'));
  const keepAlive = new https.Agent({ keepAlive: true, ca, maxSockets: 4 });
  const fresh = new https.Agent({ keepAlive: false, ca });  // a new handshake per request
  const ask = (agent) => new Promise((resolve) => {
    const req = https.request(`${gw.url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('chat.completion')));
    });
    req.on('error', () => resolve(false));
    req.end(chatBody());
  });
  let running = true;
  const results = [];
  const loop = async (agent) => { while (running) results.push(await ask(agent)); };
  const loops = [loop(keepAlive), loop(keepAlive), loop(fresh), loop(fresh)];
  await eventually(() => results.length >= 40, 10_000);
  copyFileSync(file('server2.pem'), file('live.pem'));
  copyFileSync(file('server2.key'), file('live.key'));
  gw.kill('SIGHUP');
  const swapped = await eventually(async () =>
    (await servedCertificate(gw.port, 'localhost')).fingerprint === fingerprintOf('server2.pem'), 5_000);
  const at = results.length;
  await eventually(() => results.length >= at + 40, 10_000);
  running = false;
  await Promise.all(loops);
  keepAlive.destroy();
  assert.ok(swapped, 'the new certificate is served after SIGHUP');
  assert.equal(results.filter((ok) => !ok).length, 0, `${results.length} requests`);
  assert.ok(results.length >= 80);
  assert.match(gw.errors(), /TLS certificates reloaded \(1\)/);

  // A reload whose key does not match keeps the current certificate, and says why.
  copyFileSync(file('other.key'), file('live.key'));
  gw.kill('SIGHUP');
  assert.ok(await eventually(() => /TLS reload failed, keeping the current certificates: server\.tls: the key file .*live\.key does not match/.test(gw.errors()), 5_000), gw.errors());
  assert.equal((await servedCertificate(gw.port, 'localhost')).fingerprint, fingerprintOf('server2.pem'));
  assert.ok(await ask(fresh));
});

test('min_version "1.3" refuses a TLS 1.2 client; the default takes both', async () => {
  const keys = { cert_file: file('server.pem'), key_file: file('server.key') };
  const strict = await startTlsGateway({ ...keys, min_version: '"1.3"' });
  await assert.rejects(servedCertificate(strict.port, 'localhost', { maxVersion: 'TLSv1.2' }));
  assert.equal((await servedCertificate(strict.port, 'localhost', { minVersion: 'TLSv1.3' })).cn, 'localhost');
  const lenient = await startTlsGateway(keys);
  assert.equal((await servedCertificate(lenient.port, 'localhost', { maxVersion: 'TLSv1.2' })).cn, 'localhost');
});

test('abrupt peers (cut mid-handshake, mid-request, mid-stream) leave the server serving', async () => {
  const gw = await startTlsGateway({ cert_file: file('server.pem'), key_file: file('server.key') });
  const ca = readFileSync(file('ca.pem'));
  // A TCP connection that sends half a ClientHello and resets.
  await new Promise((resolve) => {
    const s = net.connect(gw.port, '127.0.0.1', () => { s.write(Buffer.from([0x16, 0x03, 0x01, 0x02])); s.resetAndDestroy(); resolve(); });
    s.on('error', resolve);
  });
  // A TLS connection that sends half a request head and closes without close_notify.
  await new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port: gw.port, servername: 'localhost', ca }, () => {
      s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"mo');
      setTimeout(() => { s.destroy(); resolve(); }, 50);
    });
    s.on('error', resolve);
  });
  // A stream the client drops after its first bytes.
  await new Promise((resolve) => {
    const req = https.request(`${gw.url}/v1/chat/completions`, { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.once('data', () => { req.destroy(); resolve(); });
    });
    req.on('error', resolve);
    req.end(chatBody({ stream: true }));
  });
  const dispatcher = new Agent({ connect: { ca } });
  const r = await undiciFetch(`${gw.url}/v1/chat/completions`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: chatBody() });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).object, 'chat.completion');
  await dispatcher.close();
});

async function startupError(keys) {
  const text = gatewayConfig({ models: models(), server: { tls: tlsKeys(keys) } });
  const cfg = path.join(mkdtempSync(path.join(os.tmpdir(), 'turnpike-tls-bad-')), 'turnpike.yaml');
  writeFileSync(cfg, text);
  await assert.rejects(startProcess(['serve', '--config', cfg]), (e) => { startupError.last = e.message; return /exited 1/.test(e.message); });
  return startupError.last;
}

test('an expired certificate or a key that does not match stops start-up, naming the file', async () => {
  assert.match(await startupError({ cert_file: file('expired.pem'), key_file: file('expired.key') }),
    /server\.tls: the certificate in .*expired\.pem expired on /);
  assert.match(await startupError({ cert_file: file('server.pem'), key_file: file('other.key') }),
    /server\.tls: the key file .*other\.key does not match the certificate file .*server\.pem/);
  assert.match(await startupError({ cert_file: file('missing.pem'), key_file: file('server.key') }),
    /server\.tls: cannot load the certificate file .*missing\.pem/);
});

test('client certificates: required means no certificate, no handshake; a good one is served', async () => {
  const gw = await startTlsGateway({
    cert_file: file('server.pem'), key_file: file('server.key'),
    client_ca_file: file('ca.pem'), require_client_cert: true,
  });
  const ca = readFileSync(file('ca.pem'));
  const get = (options) => new Promise((resolve) => {
    const req = https.get(`${gw.url}/healthz`, { ca, agent: false, ...options }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (e) => resolve(e.code ?? e.message));
  });
  assert.notEqual(await get({}), 200);
  // A certificate from another issuer is refused as well (self-signed here).
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=stranger', '-keyout', 'stranger.key', '-out', 'stranger.pem');
  assert.notEqual(await get({ cert: readFileSync(file('stranger.pem')), key: readFileSync(file('stranger.key')) }), 200);
  assert.equal(await get({ cert: readFileSync(file('client.pem')), key: readFileSync(file('client.key')) }), 200);
});
