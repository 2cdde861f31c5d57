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

describe('a tool loop through an agent', () => {
  test('the call streams as argument deltas; its output on the next turn reaches the model after it', async () => {
    const g = await agentGateway('agent-tool-loop', {
      mockFlags: ['--tool-calls-until-result', '--reply', 'describe'],
      agent: {
        tools: [{
          type: 'function', name: 'get_weather', description: 'The weather in a city.',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        }],
      },
    });
    const conv = await g.client.conversations.create({});
    const model = `agent:${g.agent.id}`;

    const first = await g.client.responses.create({ model, conversation: conv.id, input: 'Weather in Paris?', stream: true });
    const types = [];
    let argumentsText = '';
    let done = null;
    for await (const event of first) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.delta') argumentsText += event.delta;
      if (event.type === 'response.completed') done = event.response;
    }
    assert.ok(types.filter((t) => t === 'response.function_call_arguments.delta').length > 1, types.join(' '));
    assert.ok(types.indexOf('response.function_call_arguments.done') > types.lastIndexOf('response.function_call_arguments.delta'));
    assert.equal(argumentsText, '{"location":"Paris"}');
    assert.ok(done, types.join(' '));
    const calls = done.output.filter((item) => item.type === 'function_call');
    assert.equal(calls.length, 1, JSON.stringify(done.output));
    assert.equal(calls[0].name, 'get_weather');
    assert.equal(calls[0].arguments, '{"location":"Paris"}');

    // The tool's result, sent as the next turn's input in the same conversation.
    const second = await g.client.responses.create({
      model, conversation: conv.id, stream: true,
      input: [{ type: 'function_call_output', call_id: calls[0].call_id, output: 'sunny, 21 C' }],
    });
    let text = '';
    let status = null;
    for await (const event of second) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') status = event.response.status;
    }
    assert.equal(status, 'completed');
    assert.equal(text, 'system: Be brief. | user: Weather in Paris? | '
      + 'assistant: call get_weather({"location":"Paris"}) | tool: sunny, 21 C');

    // The conversation holds the four items in order.
    const items = await g.client.conversations.items.list(conv.id, { order: 'asc' });
    assert.deepEqual(items.data.map((i) => i.type), ['message', 'function_call', 'function_call_output', 'message']);
  });
});
