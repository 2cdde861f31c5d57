// `turnpike validate`, start-up config errors, and the admin CLI's retries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, gatewayConfig } from './lib/harness.mjs';

function writeConfig(text) {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'turnpike-cli-')), 'turnpike.yaml');
  writeFileSync(file, text);
  return file;
}

test('validate accepts a good config and describes it without secrets', () => {
  const file = writeConfig(gatewayConfig({ models: { m: [{ base_url: 'http://127.0.0.1:9/v1', api_key: '${TP_TEST_KEY}' }] } }));
  const r = spawnSync(BIN, ['validate', '--config', file], { encoding: 'utf8', env: { ...process.env, TP_TEST_KEY: 'sk-secret-123' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /config OK/);
  assert.doesNotMatch(r.stdout + r.stderr, /sk-secret-123/);
});

for (const [name, text, key] of [
  ['a typo in a key', 'server:\n  listn: 127.0.0.1:1\nmodels: [{name: m, deployments: [{provider: openai, base_url: "http://h/v1"}]}]\n', 'server.listn'],
  ['an unset variable', 'models: [{name: m, deployments: [{provider: openai, base_url: "http://h/v1", api_key: "${TP_SURELY_UNSET_VAR}"}]}]\n', 'models[0].deployments[0].api_key'],
  ['a bad base URL', 'models: [{name: m, deployments: [{provider: openai, base_url: "ftp://h"}]}]\n', 'models[0].deployments[0].base_url'],
  ['no models', 'server: {workers: 1}\n', 'models'],
]) {
  test(`validate and serve reject ${name}, naming ${key}`, () => {
    const file = writeConfig(text);
    for (const cmd of ['validate', 'serve']) {
      const r = spawnSync(BIN, [cmd, '--config', file], { encoding: 'utf8', timeout: 5000 });
      assert.equal(r.status, 1, `${cmd}: ${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.includes(key), `${cmd} should name ${key}: ${r.stderr}`);
    }
  });
}

test('admin keys create: after a 503 the CLI sends the same Idempotency-Key again, Retry-After apart', async () => {
  // A stand-in for a gateway whose store is down for `failures` attempts (the real 503 and its
  // retry against PostgreSQL: fleet_outages.test.mjs); node's own server, so the CLI runs async.
  const seen = [];
  let failures = 2;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ path: req.url, key: req.headers['idempotency-key'], body: JSON.parse(body), at: Date.now() });
      if (failures-- > 0) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: { type: 'unavailable', message: 'The store did not answer in time.' } }));
      } else {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'abcdefghij27', tenant: 'acme', key: 'tp-abcdefghij27-secret' }));
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  const run = (args) => new Promise((resolve) => {
    execFile(BIN, ['admin', '--url', url, '--json', ...args], { env: { ...process.env, TURNPIKE_ADMIN_TOKEN: 't' } },
      (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stdout, stderr }));
  });
  try {
    const r = await run(['keys', 'create', '--tenant', 'acme', '--name', 'ci']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).id, 'abcdefghij27');
    assert.equal(seen.length, 3);
    assert.match(seen[0].key, /^[0-9a-f]{32}$/, 'a random Idempotency-Key when none is given');
    assert.equal(new Set(seen.map((s) => s.key)).size, 1, 'the same key on every attempt');
    assert.deepEqual(seen.map((s) => s.body), Array(3).fill({ tenant: 'acme', name: 'ci' }));
    assert.ok(seen[1].at - seen[0].at >= 900 && seen[2].at - seen[1].at >= 900, 'Retry-After apart');
    assert.equal((r.stderr.match(/HTTP 503; again in 1 s with Idempotency-Key/g) ?? []).length, 2, r.stderr);

    // Given one, it is sent as is; a 503 on all four attempts: the CLI gives up with the last.
    seen.length = 0;
    failures = 1;
    const mine = await run(['admin-tokens', 'create', '--tenant', 'acme', '--idempotency-key', 'deploy-7']);
    assert.equal(mine.code, 0, mine.stderr);
    assert.deepEqual(seen.map((s) => [s.path, s.key]), Array(2).fill(['/admin/v1/tenants/acme/admin-tokens', 'deploy-7']));
    seen.length = 0;
    failures = 10;
    const gaveUp = await run(['keys', 'create', '--tenant', 'acme']);
    assert.equal(gaveUp.code, 1);
    assert.equal(seen.length, 4);
    assert.match(gaveUp.stderr, /The store did not answer in time/);
  } finally {
    await new Promise((r) => server.close(r));
  }
  // Nothing listening (the server closed above): a lost connection is retried the same way.
  const unreachable = await run(['keys', 'create', '--tenant', 'acme']);
  assert.equal(unreachable.code, 2);
  assert.equal((unreachable.stderr.match(/cannot reach .*; again in 1 s with Idempotency-Key/g) ?? []).length, 3, unreachable.stderr);
});
