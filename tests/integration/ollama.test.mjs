// The Ollama upstream dialect through the real gateway, with the official clients:
//   the `openai` SDK -> Turnpike /v1/chat/completions -> a `provider: ollama` deployment
//   the `@anthropic-ai/sdk` -> Turnpike /v1/messages -> a `provider: ollama` deployment
// The mock provider answers Ollama's POST /api/chat (NDJSON streams); it is the only stand-in.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually, mockStats,
  assertHeldBack, assertPausedStreamArrivesWhole, HELD_BACK_TOKENS,
} from './lib/harness.mjs';

const TOKENS = 6;
const EXPECTED_TEXT = Array.from({ length: TOKENS }, (_, i) => `tok${i} `).join('');
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
let slowMock;   // 100 tokens, 100 ms apart
let gw;
const ollama = (m, model = 'llama3.2') => [{ provider: 'ollama', base_url: `http://127.0.0.1:${m.port}`, model }];

before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  failMock = await startMock(['--fail-rate', '1']);
  limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  slowMock = await startMock(['--tokens', '100', '--inter-token', '100ms']);
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      local: ollama(mock),
      'local-tools': ollama(toolMock),
      'local-failing': ollama(failMock),
      'local-limited': ollama(limitMock),
      'local-missing': ollama(mock, 'llama9:missing'),
      'local-slow': ollama(slowMock),
    },
  }));
});
after(stopAll);

describe('openai SDK -> ollama deployment', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a completion (stream false is sent explicitly: Ollama streams by default)', async () => {
    const c = await client.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'llama3.2');
    assert.match(c.id, /^ollama-/);
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(c.choices[0].message.content, EXPECTED_TEXT);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.completion_tokens, TOKENS);
    assert.ok(c.usage.prompt_tokens > 0);
  });

  test('a stream: text in order, one chunk per NDJSON line, the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'local', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    let finish = null;
    let contentChunks = 0;
    let role = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        role = choice.delta?.role ?? role;
        if (choice.delta?.content) contentChunks += 1;
        text += choice.delta?.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(role, 'assistant');
    assert.equal(text, EXPECTED_TEXT);
    assert.equal(contentChunks, TOKENS);
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, TOKENS);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('max_tokens becomes num_predict: the answer stops there with finish_reason length', async () => {
    const c = await client.chat.completions.create({ model: 'local', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(c.choices[0].message.content).length, 2);
    assert.equal(c.choices[0].finish_reason, 'length');
    const stream = await client.chat.completions.create({ model: 'local', max_completion_tokens: 3, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(words(text).length, 3);
    assert.equal(finish, 'length');
  });

  test('a streamed tool call: one call, id call_0, arguments whole', async () => {
    const stream = client.chat.completions.stream({
      model: 'local-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }],
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.id, 'call_0');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
  });

  test('a non-stream tool call, then its result sent back (tool_name from the call id)', async () => {
    const c = await client.chat.completions.create({ model: 'local-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }] });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    const call = c.choices[0].message.tool_calls[0];
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
    const next = await client.chat.completions.create({
      model: 'local',
      messages: [{ role: 'user', content: 'Weather?' }, c.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '15 degrees' }],
    });
    assert.equal(next.choices[0].message.content, EXPECTED_TEXT);
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model, extra = {}) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await assert.rejects(create('local-failing'), (e) => e instanceof OpenAI.InternalServerError && e.status === 502
      && e.type === 'server_error');
    await assert.rejects(create('local-failing', { stream: true }), (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
    await assert.rejects(create('local-limited'), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    await assert.rejects(create('local-missing'), (e) => e instanceof OpenAI.NotFoundError && e.status === 404
      && /llama9:missing.*not found/.test(e.message));
    await assert.rejects(create('local-missing', { stream: true }), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  });

  test('what Ollama cannot express is a 400 naming the field', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'local', tools: openaiTools, tool_choice: 'required', messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'tool_choice',
    );
    await assert.rejects(
      client.chat.completions.create({
        model: 'local', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
      }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages[0].content[0].image_url.url',
    );
  });
});

describe('anthropic SDK -> ollama deployment', () => {
  let client;
  before(() => { client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 }); });

  test('a message', async () => {
    const message = await client.messages.create({ model: 'local', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'llama3.2');
    assert.equal(message.content.length, 1);
    assert.equal(message.content[0].text, EXPECTED_TEXT);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
    assert.ok(message.usage.input_tokens > 0);
  });

  test('a stream', async () => {
    const stream = client.messages.stream({ model: 'local', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const types = [];
    let text = '';
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (delta) => { text += delta; });
    const message = await stream.finalMessage();
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.equal(types.filter((t) => t === 'content_block_delta').length, TOKENS);
    assert.equal(text, EXPECTED_TEXT);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
  });

  test('a streamed tool call is parsed into its input', async () => {
    const stream = client.messages.stream({ model: 'local-tools', max_tokens: 100, tools: anthropicTools, messages: [{ role: 'user', content: 'Weather?' }] });
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, 'tool_use');
    const blocks = message.content.filter((b) => b.type === 'tool_use');
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0].name, 'get_weather');
    assert.deepEqual(blocks[0].input, { location: 'Paris' });
  });

  test('upstream errors in Anthropic shape and SDK classes', async () => {
    const create = (model) => client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    await assert.rejects(create('local-failing'), (e) => e instanceof Anthropic.InternalServerError && e.status === 502
      && e.error?.error?.type === 'api_error');
    await assert.rejects(create('local-limited'), (e) => e instanceof Anthropic.RateLimitError && e.status === 429);
    await assert.rejects(create('local-missing'), (e) => e instanceof Anthropic.NotFoundError && e.status === 404
      && e.error?.error?.type === 'not_found_error');
  });
});

describe('stream lifetime', () => {
  const chat = (model, extra = {}) => ({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, ...extra });
  const rawChat = (port, body) => {
    const sock = net.connect(port, '127.0.0.1');
    const text = JSON.stringify(body);
    sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    return sock;
  };

  test('a client that disconnects mid-stream cancels the upstream request', async () => {
    const sock = rawChat(gw.port, chat('local-slow'));
    await new Promise((r) => sock.once('data', r));
    sock.destroy();
    const stats = await eventually(async () => { const x = await mockStats(slowMock); return x.client_disconnects >= 1 && x; }, 2000);
    assert.equal(stats.client_disconnects, 1, 'the mock saw the upstream connection close');
    assert.equal(stats.streams_completed, 0);
  });

  test('a slow client slows the upstream read (NDJSON lines are not buffered ahead)', async () => {
    const held = await startMock(['--tokens', String(HELD_BACK_TOKENS)]);
    const gh = await startGateway(gatewayConfig({ models: { big: ollama(held) } }));
    await assertHeldBack({ gw: gh, mock: held, open: () => rawChat(gh.port, chat('big', { max_tokens: HELD_BACK_TOKENS })) });

    // A stream paused and resumed arrives whole.
    const tokens = 100000;  // ~12 MB of NDJSON lines, more as OpenAI chunks
    const big = await startMock(['--tokens', String(tokens)]);
    const g = await startGateway(gatewayConfig({ models: { big: ollama(big) } }));
    await assertPausedStreamArrivesWhole({ open: () => rawChat(g.port, chat('big', { max_tokens: tokens })), tokens });
  });
});

describe('governed', () => {
  let ggw;
  let secret;
  let admin;
  let calls;

  before(async () => {
    ({ gw: ggw, key: secret, admin, calls } = await startGovernedGateway({
      name: 'ollama',
      models: { local: ollama(mock) },
      prices: { 'llama3.2': { input: 1, output: 1000, max_output_tokens: 100000 } },
    }));
  });

  test('translated streams both ways are logged with the upstream counts and priced', async () => {
    const openai = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'local', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, EXPECTED_TEXT);
    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: secret, maxRetries: 0 });
    const message = await anthropic.messages.stream({ model: 'local', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(message.usage.output_tokens, TOKENS);

    const rows = await eventually(async () => {
      const x = (await admin('GET', 'calls?limit=100')).body.data;
      return x.length === 2 ? x : null;
    }, 5000);
    assert.ok(rows, 'two call-log rows');
    for (const row of rows) {
      assert.equal(row.status, 200, JSON.stringify(row));
      assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
      assert.ok(row.prompt_tokens > 0, JSON.stringify(row));
      assert.equal(row.estimated, false);
      // Output at 1000 USD per million tokens dominates.
      assert.ok(row.cost_usd >= TOKENS * 1000 / 1e6, JSON.stringify(row));
      assert.notEqual(row.ttft_ms, null, 'the first token was timed');
    }
  });
});
