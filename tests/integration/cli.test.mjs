// `turnpike validate` and start-up config errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
