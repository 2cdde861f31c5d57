// TLS upstreams: certificate and host-name verification are on by default. nginx terminates
// TLS in front of the mock with a certificate from a throwaway CA made here with openssl.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll, chatBody, eventually } from './lib/harness.mjs';

let dir;
let tlsPort;
let nginx;

async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

function openssl(...args) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-tls-'));
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=Turnpike Test CA',
    '-keyout', 'ca.key', '-out', 'ca.pem');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-days', '1', '-extfile', 'san.ext', '-out', 'server.pem');
  const mock = await startMock(['--tokens', '2']);
  tlsPort = await freePort();
  writeFileSync(path.join(dir, "nginx.conf"), `daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid;
error_log ${dir}/error.log; events {}
http { access_log off;
  server { listen 127.0.0.1:${tlsPort} ssl; ssl_certificate ${dir}/server.pem; ssl_certificate_key ${dir}/server.key;
    location / { proxy_pass http://127.0.0.1:${mock.port}; proxy_http_version 1.1; proxy_buffering off; } } }
`);
  nginx = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const up = await eventually(() => new Promise((r) => {
    const s = net.connect(tlsPort, '127.0.0.1', () => { s.destroy(); r(true); });
    s.on('error', () => r(false));
  }), 5000);
  assert.ok(up, 'nginx TLS front is listening');
});
after(async () => {
  if (nginx) nginx.kill('SIGKILL');
  await stopAll();
});

const ask = (gw) => fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });

test('an https deployment signed by the configured CA works', async () => {
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`https://localhost:${tlsPort}/v1`] },
    upstream: { ca_file: path.join(dir, 'ca.pem') },
  }));
  const r = await ask(gw);
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal((await r.json()).object, 'chat.completion');
});

test('a stream from an https deployment is relayed in full', async () => {
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`https://localhost:${tlsPort}/v1`] },
    upstream: { ca_file: path.join(dir, 'ca.pem') },
  }));
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody({ stream: true }),
  });
  assert.equal(r.status, 200);
  const body = await r.text();
  assert.equal(body.split('"content":"tok').length - 1, 2, body);
  assert.ok(body.endsWith('data: [DONE]\n\n'), body);
});

test('an untrusted certificate is refused by default (502, no retry into success)', async () => {
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`https://localhost:${tlsPort}/v1`] },
    routing: { max_attempts: 1 },
  }));
  const r = await ask(gw);
  assert.equal(r.status, 502);
  assert.match((await r.json()).error.message, /TLS handshake/);
});

test('a certificate for another host name is refused', async () => {
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`https://127.0.0.1:${tlsPort}/v1`] },
    upstream: { ca_file: path.join(dir, 'ca.pem') },
    routing: { max_attempts: 1 },
  }));
  const r = await ask(gw);
  assert.equal(r.status, 502);
});

test('tls_verify: false accepts it (an explicit opt-out)', async () => {
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [{ base_url: `https://localhost:${tlsPort}/v1`, tls_verify: 'false' }] },
  }));
  const r = await ask(gw);
  assert.equal(r.status, 200);
});
