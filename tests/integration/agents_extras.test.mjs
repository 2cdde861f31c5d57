// Agent turns (src/doors/agents/) beyond agents.test.mjs: `turnpike bench --agent` against a
// gateway and the mock provider; a tool loop through an agent with the official openai client;
// a background turn streamed at its creation, left, and resumed.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { BIN, startMock, startGovernedGateway, stopAll, eventually } from './lib/harness.mjs';

after(stopAll);

const PRICES = { chat: { input: 1, output: 2, max_output_tokens: 1000 } };

async function agentGateway(name, { mockFlags = [], agent = {} } = {}) {
  const mock = await startMock([...(mockFlags.includes('--tokens') ? [] : ['--tokens', '5']), ...mockFlags]);
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
    // The response echoes the agent's tools (from the text the agent keeps).
    assert.deepEqual(done.tools, g.agent.tools);

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

describe('an agent\'s tools, all or a subset', () => {
  test('the model is offered the agent\'s tools, or the subset a request names; the response echoes what was offered', async () => {
    const weather = {
      type: 'function', name: 'get_weather', description: 'The weather in a city.',
      parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    };
    const time = {
      type: 'function', name: 'get_time', description: 'The time in a zone.',
      parameters: { type: 'object', properties: { zone: { type: 'string' } } },
    };
    // The mock calls the first tool it is offered.
    const g = await agentGateway('agent-tool-subset', {
      mockFlags: ['--tool-calls-until-result'], agent: { tools: [weather, time] },
    });
    const model = `agent:${g.agent.id}`;
    const all = await g.client.responses.create({ model, input: 'Weather?', store: false });
    assert.deepEqual(all.output.filter((i) => i.type === 'function_call').map((i) => i.name), ['get_weather']);
    assert.deepEqual(all.tools, g.agent.tools);
    const subset = await g.client.responses.create({ model, input: 'Time?', store: false, tools: [time] });
    assert.deepEqual(subset.output.filter((i) => i.type === 'function_call').map((i) => i.name), ['get_time']);
    assert.deepEqual(subset.tools, [g.agent.tools[1]]);
  });
});

describe('background + stream at creation', () => {
  const TERMINAL = ['response.completed', 'response.failed', 'response.incomplete', 'response.cancelled'];
  const collect = async (stream) => {
    const events = [];
    for await (const event of stream) events.push(event);
    return events;
  };

  test('the creating request streams the turn; leaving it does not cancel; resume gives the rest', async () => {
    const g = await agentGateway('agent-bg-stream', { mockFlags: ['--tokens', '40', '--inter-token', '10ms'] });
    const model = `agent:${g.agent.id}`;

    // Read to the end: the whole stream, the same bytes the store keeps for a resume.
    const whole = await collect(await g.client.responses.create({ model, input: 'Hi', background: true, stream: true }));
    assert.equal(whole[0].type, 'response.created');
    assert.equal(whole[0].response.background, true);
    assert.equal(whole.at(-1).type, 'response.completed');
    assert.deepEqual(whole.map((e) => e.sequence_number), whole.map((_, i) => i));
    const id = whole[0].response.id;
    assert.deepEqual(await collect(await g.client.responses.retrieve(id, { stream: true })), whole);

    // Leave after the first text delta: the turn runs on; a resume from the last event seen
    // gets the rest, through response.completed.
    const conv = await g.client.conversations.create({});
    const stream = await g.client.responses.create({ model, conversation: conv.id, input: 'Hello', background: true, stream: true });
    const seen = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'response.output_text.delta') break;  // the client closes its socket
    }
    const left = seen.at(-1).sequence_number;
    const leftId = seen[0].response.id;
    assert.ok(!seen.some((e) => TERMINAL.includes(e.type)));
    const rest = await collect(await g.client.responses.retrieve(leftId, { stream: true, starting_after: left }));
    assert.equal(rest[0].sequence_number, left + 1);
    assert.deepEqual(rest.map((e) => e.sequence_number), rest.map((_, i) => left + 1 + i));
    assert.equal(rest.at(-1).type, 'response.completed');
    assert.equal(rest.filter((e) => TERMINAL.includes(e.type)).length, 1);
    const text = [...seen, ...rest].filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    const done = await g.client.responses.retrieve(leftId);
    assert.equal(done.status, 'completed');
    assert.equal(done.output_text, text);
    // The turn's items are in the conversation; the call log has it once, as a 200.
    const items = await g.client.conversations.items.list(conv.id, { order: 'asc' });
    assert.deepEqual(items.data.map((i) => i.role), ['user', 'assistant']);
    await eventually(async () => (await g.calls()).some((c) => c.response_id === leftId));
    const rows = (await g.calls()).filter((c) => c.response_id === leftId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 200);
  });
});
