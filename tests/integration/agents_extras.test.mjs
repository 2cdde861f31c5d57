// Agent turns (src/doors/agents/) beyond agents.test.mjs: `turnpike bench --agent` against a
// gateway and the mock provider; a tool loop through an agent with the official openai client;
// a background turn streamed at its creation, left, and resumed.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { BIN, startMock, startGovernedGateway, stopAll } from './lib/harness.mjs';

after(stopAll);

const PRICES = { chat: { input: 1, output: 2, max_output_tokens: 1000 } };

async function agentGateway(name, { mockFlags = [], agent = {} } = {}) {
  const mock = await startMock(['--tokens', '5', ...mockFlags]);
  const g = await startGovernedGateway({
    name,
    models: { chat: [`http://127.0.0.1:${mock.port}/v1`] },
    prices: PRICES,
  });
  const created = await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', instructions: 'Be brief.', ...agent });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const client = new OpenAI({ baseURL: `${g.gw.url}/v1`, apiKey: g.key, maxRetries: 0 });
  return { ...g, mock, agent: created.body, client };
}

describe('turnpike bench --agent', () => {
  test('a conversation per connection, turns on it, streamed and not: no failures', async () => {
    const g = await agentGateway('bench-agent');
    const { stdout } = await promisify(execFile)(BIN, [
      'bench', '--url', g.gw.url, '--agent', g.agent.id, '--turns', '3', '-c', '2', '-d', '1',
      '--stream-every', '2', '-H', `Authorization: Bearer ${g.key}`, '--json', '-', '--quiet',
    ]);
    const report = JSON.parse(stdout);
    assert.equal(report.requests_failed, 0, stdout);
    assert.ok(report.requests_ok > 0, stdout);
    assert.ok(report.streams_ok > 0, stdout);
    assert.ok(report.requests_ok > report.streams_ok, stdout);
    assert.equal(report.agent.id, g.agent.id);
    assert.equal(report.agent.turns, 3);
    assert.ok(report.agent.conversations > 0, stdout);
    // Each conversation carries at most --turns of the measured turns (a connection's first
    // and last conversation may be cut by the window's edges).
    assert.ok(report.requests_ok <= 3 * (report.agent.conversations + 2), stdout);
  });

  test('a wrong key fails every turn (the creation\'s 401), counted by status', async () => {
    const g = await agentGateway('bench-agent-bad');
    const { stdout } = await promisify(execFile)(BIN, [
      'bench', '--url', `${g.gw.url}/v1/responses`, '--agent', g.agent.id, '-c', '1', '--requests', '5',
      '-d', '5', '-H', 'Authorization: Bearer tpk_wrong', '--json', '-', '--quiet',
    ]);
    const report = JSON.parse(stdout);
    assert.equal(report.requests_ok, 0, stdout);
    assert.equal(report.requests_failed, 5, stdout);
    assert.equal(report.failures.by_status['401'], 5, stdout);
    assert.equal(report.agent.conversations, 0, stdout);
  });
});
