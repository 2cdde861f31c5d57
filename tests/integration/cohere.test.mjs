// The Cohere v2 Chat upstream dialect through the real gateway, with the official clients:
//   the `openai` SDK -> Turnpike /v1/chat/completions -> a `provider: cohere` deployment
//   the `@anthropic-ai/sdk` -> Turnpike /v1/messages -> a `provider: cohere` deployment
// The mock provider answers Cohere's POST /v2/chat; it is the only stand-in.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually } from './lib/harness.mjs';

const TOKENS = 6;
const CACHED = 4;
const TOOL_FRAGMENTS_MIN = 2;
const expectedText = Array.from({ length: TOKENS }, (_, i) => `tok${i} `).join('');
const words = (text) => text.split(' ').filter(Boolean);
const openaiTools = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
}];
const anthropicTools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }];

let mock;       // plain answers
let toolMock;   // answers every request that offers tools with a call to the first one
let failMock;   // 500 to everything
let limitMock;  // 429 to everything
let cacheMock;  // reports prompt-cache reads
let gw;
const cohere = (m) => [{ provider: 'cohere', base_url: `http://127.0.0.1:${m.port}`, api_key: 'co-test', model: 'command-upstream' }];

before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  failMock = await startMock(['--fail-rate', '1']);
  limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  cacheMock = await startMock(['--tokens', String(TOKENS), '--cached-tokens', String(CACHED)]);
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      command: cohere(mock),
      'command-tools': cohere(toolMock),
      'command-failing': cohere(failMock),
      'command-limited': cohere(limitMock),
    },
  }));
});
after(stopAll);

describe('openai SDK -> cohere deployment', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a completion', async () => {
    const c = await client.chat.completions.create({ model: 'command', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'command-upstream', 'Cohere names no model: the deployment\'s is used');
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(c.choices[0].message.content, expectedText);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.completion_tokens, TOKENS);
    assert.ok(c.usage.prompt_tokens > 0);
  });

  test('max_tokens cuts the answer: MAX_TOKENS is finish_reason length', async () => {
    const c = await client.chat.completions.create({ model: 'command', max_completion_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(c.choices[0].message.content).length, 2);
    assert.equal(c.choices[0].finish_reason, 'length');
  });

  test('a stream: text in order, one chunk per content-delta, usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'command', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    let finish = null;
    let contentChunks = 0;
    let role = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, 'command-upstream');
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        role = choice.delta?.role ?? role;
        if (choice.delta?.content) contentChunks += 1;
        text += choice.delta?.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(role, 'assistant');
    assert.equal(text, expectedText);
    assert.equal(contentChunks, TOKENS);
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, TOKENS);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('a streamed tool call: index, id, name and arguments reassembled by the SDK; no tool plan text', async () => {
    const indexes = new Set();
    let argumentChunks = 0;
    const stream = client.chat.completions.stream({
      model: 'command-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }],
    });
    stream.on('chunk', (chunk) => {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
        indexes.add(call.index);
        if (call.function?.arguments) argumentChunks += 1;
      }
    });
    const completion = await stream.finalChatCompletion();
    assert.deepEqual([...indexes], [0]);
    assert.ok(argumentChunks >= TOOL_FRAGMENTS_MIN, `arguments arrived in ${argumentChunks} chunks`);
    const choice = completion.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.ok(!choice.message.content, `the tool plan is not content: ${choice.message.content}`);
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.ok(call.id.length > 0);
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
  });

  test('a non-stream tool call, then the tool result sent back', async () => {
    const c = await client.chat.completions.create({ model: 'command-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }] });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    const call = c.choices[0].message.tool_calls[0];
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
    // The history with the assistant's call and the tool's result translates (plain mock: text).
    const next = await client.chat.completions.create({
      model: 'command',
      tools: openaiTools,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '18 degrees' },
      ],
    });
    assert.equal(next.choices[0].message.content, expectedText);
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model, extra = {}) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await assert.rejects(create('command-limited'), (e) => e instanceof OpenAI.RateLimitError && e.status === 429
      && /Rate limit/.test(e.message));
    await assert.rejects(create('command-limited', { stream: true }), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    await assert.rejects(create('command-failing'), (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
  });

  test('what Cohere cannot express is a 400 naming the field', async () => {
    const create = (extra) => client.chat.completions.create({ model: 'command', messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await assert.rejects(
      create({ tools: openaiTools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'tool_choice',
    );
    await assert.rejects(create({ n: 2 }), (e) => e instanceof OpenAI.BadRequestError && e.param === 'n');
    await assert.rejects(create({ logprobs: true }), (e) => e instanceof OpenAI.BadRequestError && e.param === 'logprobs');
  });
});

describe('anthropic SDK -> cohere deployment', () => {
  let client;
  before(() => { client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 }); });

  test('a message', async () => {
    const message = await client.messages.create({ model: 'command', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.type, 'message');
    assert.equal(message.model, 'command-upstream');
    assert.equal(message.role, 'assistant');
    assert.equal(message.content.length, 1);
    assert.equal(message.content[0].text, expectedText);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
    assert.ok(message.usage.input_tokens > 0);
  });

  test('a stream', async () => {
    const stream = client.messages.stream({ model: 'command', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const types = [];
    let text = '';
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (delta) => { text += delta; });
    const message = await stream.finalMessage();
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.equal(types.filter((t) => t === 'content_block_delta').length, TOKENS);
    assert.equal(text, expectedText);
    assert.equal(message.model, 'command-upstream');
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
  });

  test('a streamed tool call is parsed into its input', async () => {
    const stream = client.messages.stream({ model: 'command-tools', max_tokens: 100, tools: anthropicTools, messages: [{ role: 'user', content: 'Weather?' }] });
    let partial = 0;
    stream.on('inputJson', () => { partial += 1; });
    const message = await stream.finalMessage();
    assert.ok(partial >= TOOL_FRAGMENTS_MIN, `input arrived in ${partial} fragments`);
    assert.equal(message.stop_reason, 'tool_use');
    const uses = message.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1);
    assert.equal(uses[0].name, 'get_weather');
    assert.deepEqual(uses[0].input, { location: 'Paris' });
    assert.equal(message.content.filter((b) => b.type === 'text').length, 0, 'the tool plan is not a text block');
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model) => client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    await assert.rejects(create('command-limited'), (e) => e instanceof Anthropic.RateLimitError && e.status === 429);
    await assert.rejects(create('command-failing'), (e) => e instanceof Anthropic.InternalServerError && e.status >= 500);
  });
});

// Governed: the call log's tokens and cost for Cohere answers.
describe('governed cohere deployment', () => {
  // Cache reads at a tenth of the input price: visible in the cost.
  const PRICES = { 'command-upstream': { input: 1, output: 1000, cached_input: 0.1, max_output_tokens: 100000 } };
  let ggw;
  let secret;
  let admin;
  let calls;

  before(async () => {
    ({ gw: ggw, key: secret, admin, calls } = await startGovernedGateway({
      name: 'cohere',
      models: { 'command-cached': cohere(cacheMock) },
      prices: PRICES,
    }));
  });

  test('streamed and whole answers are logged with billed tokens, cached tokens and a cost', async () => {
    const openai = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'command-cached', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }],
    });
    let usage = null;
    let text = '';
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, expectedText);
    assert.equal(usage.prompt_tokens_details.cached_tokens, CACHED);
    assert.ok(usage.prompt_tokens > CACHED);
    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: secret, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'command-cached', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.usage.cache_read_input_tokens, CACHED);

    const rows = await eventually(async () => { const x = await calls(); return x.length === 2 ? x : null; }, 5000);
    assert.ok(rows, 'two call-log rows');
    assert.ok(rows.some((r) => r.prompt_tokens === usage.prompt_tokens), JSON.stringify(rows));
    assert.ok(rows.some((r) => r.prompt_tokens === message.usage.input_tokens + CACHED), JSON.stringify(rows));
    for (const row of rows) {
      assert.equal(row.status, 200);
      assert.equal(row.model, 'command-cached');
      assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
      assert.equal(row.cached_tokens, CACHED, JSON.stringify(row));
      assert.equal(row.estimated, false);
      // Uncached input at 1, cache reads at 0.1, output at 1000 USD per million tokens
      // (= micro-USD per token), rounded up.
      const micros = Math.ceil((row.prompt_tokens - CACHED) * 1 + CACHED * 0.1 + TOKENS * 1000);
      assert.equal(Math.round(row.cost_usd * 1e6), micros, JSON.stringify(row));
    }
  });
});
