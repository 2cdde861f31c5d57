// Translation between API dialects through the real gateway, with the official clients:
//   the `openai` SDK -> Turnpike /v1/chat/completions -> a `provider: anthropic` deployment
//   the `@anthropic-ai/sdk` -> Turnpike /v1/messages -> a `provider: openai` deployment
//   the `@anthropic-ai/sdk` -> Turnpike /v1/messages -> a `provider: anthropic` one (identity)
// The mock provider answers both dialects; it is the only stand-in.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually, mockStats, readSse,
  assertHeldBack, assertPausedStreamArrivesWhole, HELD_BACK_TOKENS,
} from './lib/harness.mjs';

const TOKENS = 6;
const TOOL_FRAGMENTS_MIN = 2;
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
let cacheMock;  // reports prompt-cache reads and writes
let slowMock;   // 50 tokens, 40 ms apart
const SHORT_MAX = 3;  // < TOKENS: the mock stops there and says so
const CACHED = 4;
const CACHE_WRITTEN = 2;
let gw;
before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  failMock = await startMock(['--fail-rate', '1']);
  limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  slowMock = await startMock(['--tokens', '50', '--inter-token', '40ms']);
  cacheMock = await startMock(['--tokens', String(TOKENS), '--cached-tokens', String(CACHED),
    '--cache-write-tokens', String(CACHE_WRITTEN)]);
  const anthropic = (m, model = 'claude-upstream') => [{ provider: 'anthropic', base_url: `http://127.0.0.1:${m.port}`, api_key: 'sk-ant-test', model }];
  const openai = (m) => [{ provider: 'openai', base_url: `http://127.0.0.1:${m.port}/v1`, model: 'gpt-upstream' }];
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    prices: { 'claude-short-upstream': { input: 1, output: 1, max_output_tokens: SHORT_MAX } },
    models: {
      claude: anthropic(mock),
      'claude-short': anthropic(mock, 'claude-short-upstream'),
      'claude-tools': anthropic(toolMock),
      'claude-failing': anthropic(failMock),
      'claude-limited': anthropic(limitMock),
      gpt: openai(mock),
      'gpt-tools': openai(toolMock),
      'gpt-failing': openai(failMock),
      'gpt-limited': openai(limitMock),
    },
  }));
});
after(stopAll);

describe('openai SDK -> anthropic deployment', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a completion (no max_tokens: the gateway supplies the default Anthropic requires)', async () => {
    const c = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, 'claude-upstream');
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(words(c.choices[0].message.content).length, TOKENS);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.completion_tokens, TOKENS);
    assert.ok(c.usage.prompt_tokens > 0);
  });

  test('without max_tokens, the upstream model\'s max_output_tokens from the price table is sent', async () => {
    const c = await client.chat.completions.create({ model: 'claude-short', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(c.choices[0].message.content).length, SHORT_MAX);
    assert.equal(c.choices[0].finish_reason, 'length');
  });

  test('max_tokens cuts the answer: finish_reason length', async () => {
    const c = await client.chat.completions.create({ model: 'claude', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(c.choices[0].message.content).length, 2);
    assert.equal(c.choices[0].finish_reason, 'length');
  });

  test('a stream, chunk by chunk, with the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'claude', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    let finish = null;
    let contentChunks = 0;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta?.content) contentChunks += 1;
        text += choice.delta?.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(words(text).length, TOKENS);
    assert.equal(contentChunks, TOKENS, 'one chunk per upstream text delta');
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, TOKENS);
    assert.ok(usage.prompt_tokens > 0);
  });

  test('a streamed tool call: index and arguments reassembled by the SDK', async () => {
    const indexes = new Set();
    let argumentChunks = 0;
    const stream = client.chat.completions.stream({
      model: 'claude-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }],
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
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.ok(call.id.length > 0);
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
  });

  test('a non-stream tool call', async () => {
    const c = await client.chat.completions.create({ model: 'claude-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }] });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments), { location: 'Paris' });
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model, extra = {}) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await assert.rejects(create('claude-failing'), (e) => e instanceof OpenAI.InternalServerError && e.status === 502
      && e.type === 'server_error');
    await assert.rejects(create('claude-failing', { stream: true }), (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
    await assert.rejects(create('claude-limited'), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
  });

  test('a field Anthropic cannot express is a 400 naming it', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'claude', seed: 1, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'seed',
    );
  });
});

describe('anthropic SDK -> /v1/messages', () => {
  let client;
  before(() => { client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 }); });

  for (const [label, model, upstreamModel] of [['openai deployment (translated)', 'gpt', 'gpt-upstream'], ['anthropic deployment (identity)', 'claude', 'claude-upstream']]) {
    const tools = `${model}-tools`;
    test(`${label}: a message`, async () => {
      const message = await client.messages.create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, upstreamModel);
      assert.equal(message.content.length, 1);
      assert.equal(words(message.content[0].text).length, TOKENS);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.output_tokens, TOKENS);
      assert.ok(message.usage.input_tokens > 0);
    });

    test(`${label}: a stream`, async () => {
      const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
      const types = [];
      let text = '';
      stream.on('streamEvent', (event) => types.push(event.type));
      stream.on('text', (delta) => { text += delta; });
      const message = await stream.finalMessage();
      assert.equal(types[0], 'message_start');
      assert.equal(types.at(-1), 'message_stop');
      assert.equal(types.filter((t) => t === 'content_block_delta').length, TOKENS);
      assert.equal(words(text).length, TOKENS);
      assert.equal(message.content[0].text, text);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.output_tokens, TOKENS);
    });

    test(`${label}: a streamed tool call is parsed into its input`, async () => {
      const stream = client.messages.stream({ model: tools, max_tokens: 100, tools: anthropicTools, messages: [{ role: 'user', content: 'Weather?' }] });
      let partial = 0;
      stream.on('inputJson', () => { partial += 1; });
      const message = await stream.finalMessage();
      assert.ok(partial >= TOOL_FRAGMENTS_MIN, `the input arrived in ${partial} input_json_delta events`);
      assert.equal(message.stop_reason, 'tool_use');
      const blocks = message.content.filter((b) => b.type === 'tool_use');
      assert.equal(blocks.length, 1);
      assert.equal(blocks[0].name, 'get_weather');
      assert.deepEqual(blocks[0].input, { location: 'Paris' });
    });
  }

  test('openai deployment: upstream errors in Anthropic shape and SDK classes', async () => {
    const create = (model) => client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    await assert.rejects(create('gpt-failing'), (e) => e instanceof Anthropic.InternalServerError && e.status === 502
      && e.error?.type === 'error' && e.error?.error?.type === 'api_error');
    await assert.rejects(create('gpt-limited'), (e) => e instanceof Anthropic.RateLimitError && e.status === 429
      && e.error?.error?.type === 'rate_limit_error');
  });

  test('anthropic deployment: the upstream error passes through', async () => {
    await assert.rejects(
      client.messages.create({ model: 'claude-failing', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Anthropic.InternalServerError && e.status === 500 && e.error?.error?.type === 'api_error',
    );
  });

  test('the gateway\'s own errors are in Anthropic shape', async () => {
    await assert.rejects(
      client.messages.create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Anthropic.NotFoundError && e.status === 404 && e.error?.error?.type === 'not_found_error',
    );
    await assert.rejects(
      client.messages.create({ model: 'gpt', max_tokens: 10, top_k: 5, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Anthropic.BadRequestError && e.status === 400 && /top_k/.test(e.error?.error?.message),
    );
    const bad = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' });
    assert.equal(bad.status, 400);
    const badBody = await bad.json();
    assert.equal(badBody.type, 'error');
    assert.equal(badBody.error.type, 'invalid_request_error');
    const get = await fetch(`${gw.url}/v1/messages`);
    assert.equal(get.status, 405);
    assert.equal((await get.json()).type, 'error');
  });
});

// Governed: keys from the admin API, the call log's tokens and cost for translated streams.
describe('governed translation', () => {
  const PRICES = {
    // Cache reads at a tenth of the input price, writes at 100x: each visible in the cost.
    'claude-upstream': { input: 1, output: 1000, cached_input: 0.1, cache_write: 100, max_output_tokens: 100000 },
    'gpt-upstream': { input: 1, output: 1000, max_output_tokens: 100000 },
  };
  let ggw;
  let secret;
  let admin;
  let calls;

  before(async () => {
    ({ gw: ggw, key: secret, admin, calls } = await startGovernedGateway({
      name: 'dialects',
      models: {
        claude: [{ provider: 'anthropic', base_url: `http://127.0.0.1:${mock.port}`, model: 'claude-upstream' }],
        gpt: [{ provider: 'openai', base_url: `http://127.0.0.1:${mock.port}/v1`, model: 'gpt-upstream' }],
        'claude-cached': [{ provider: 'anthropic', base_url: `http://127.0.0.1:${cacheMock.port}`, model: 'claude-upstream' }],
        'gpt-cached': [{ provider: 'openai', base_url: `http://127.0.0.1:${cacheMock.port}/v1`, model: 'gpt-upstream' }],
        'gpt-slow': [{ provider: 'openai', base_url: `http://127.0.0.1:${slowMock.port}/v1`, model: 'gpt-upstream' }],
      },
      prices: PRICES,
    }));
  });

  test('translated streams both ways are logged with their tokens and a cost', async () => {
    const openai = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'claude', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(words(text).length, TOKENS);

    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: secret, maxRetries: 0 });  // x-api-key
    const message = await anthropic.messages.stream({ model: 'gpt', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(message.usage.output_tokens, TOKENS);

    const rows = await eventually(async () => { const x = await calls(); return x.length === 2 ? x : null; }, 5000);
    assert.ok(rows, 'two call-log rows');
    const toOpenAi = rows.find((r) => r.model === 'gpt');
    const toAnthropic = rows.find((r) => r.model === 'claude');
    for (const row of [toOpenAi, toAnthropic]) {
      assert.ok(row, JSON.stringify(rows));
      assert.equal(row.status, 200);
      assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
      assert.ok(row.prompt_tokens > 0, JSON.stringify(row));
      assert.equal(row.estimated, false);
      assert.ok(row.cost_usd > 0, JSON.stringify(row));
      assert.notEqual(row.ttft_ms, null, 'the first token was timed');
    }
    // The output price dominates: TOKENS completion tokens at 1000 USD per million.
    assert.ok(toAnthropic.cost_usd >= TOKENS * 1000 / 1e6);
  });

  test('prompt-cache reads and writes reach the client and the call log, translated or not', async () => {
    const openai = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: secret, maxRetries: 0 });
    // OpenAI client, Anthropic upstream: cache writes count in prompt_tokens, reads as cached.
    const stream = await openai.chat.completions.create({
      model: 'claude-cached', max_tokens: 50, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }],
    });
    let usage = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.equal(usage.prompt_tokens_details.cached_tokens, CACHED);
    assert.ok(usage.prompt_tokens > CACHED + CACHE_WRITTEN);
    // Anthropic client, Anthropic upstream (identity) and OpenAI upstream (translated).
    const identity = await anthropic.messages.stream({ model: 'claude-cached', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(identity.usage.cache_read_input_tokens, CACHED);
    assert.equal(identity.usage.cache_creation_input_tokens, CACHE_WRITTEN);
    const translated = await anthropic.messages.create({ model: 'gpt-cached', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(translated.usage.cache_read_input_tokens, CACHED);

    const cachedRows = await eventually(async () => {
      const x = (await calls()).filter((r) => r.model.endsWith('-cached'));
      return x.length === 3 ? x : null;
    }, 5000);
    assert.ok(cachedRows, 'three call-log rows');
    for (const row of cachedRows) {
      assert.equal(row.cached_tokens, CACHED, JSON.stringify(row));
      assert.equal(row.completion_tokens, TOKENS);
      assert.ok(row.cost_usd > 0);
    }
    const claudeRows = cachedRows.filter((r) => r.model === 'claude-cached');
    assert.equal(claudeRows.length, 2);
    const identityRow = claudeRows.find((r) => r.prompt_tokens === identity.usage.input_tokens + CACHED + CACHE_WRITTEN);
    assert.ok(identityRow, `identity row counts input + cache reads + writes: ${JSON.stringify(claudeRows)}`);
    assert.ok(claudeRows.some((r) => r.prompt_tokens === usage.prompt_tokens), JSON.stringify(claudeRows));
    // Cache writes are logged and priced apart: uncached input at 1, reads at 0.1, writes at
    // 100, output at 1000 USD per million tokens (= micro-USD per token), rounded up.
    for (const row of claudeRows) {
      assert.equal(row.cache_creation_tokens, CACHE_WRITTEN, JSON.stringify(row));
      const uncached = row.prompt_tokens - CACHED - CACHE_WRITTEN;
      const micros = Math.ceil(uncached * 1 + CACHED * 0.1 + CACHE_WRITTEN * 100 + TOKENS * 1000);
      assert.equal(Math.round(row.cost_usd * 1e6), micros, JSON.stringify(row));
    }
  });

  test('a translated stream the client leaves before any usage is settled from an estimate', async () => {
    const r = await fetch(`${ggw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': secret },
      body: JSON.stringify({ model: 'gpt-slow', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const reader = r.body.getReader();
    let text = '';
    while (!text.includes('tok3')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const row = await eventually(async () => (await calls()).find((c) => c.model === 'gpt-slow'), 5000);
    assert.ok(row, 'the stream the client left is logged');
    assert.equal(row.status, 499);
    assert.equal(row.estimated, true);
    assert.ok(row.completion_tokens > 0 && row.cost_usd > 0, JSON.stringify(row));
  });

  test('governance refusals on /v1/messages are in Anthropic shape', async () => {
    const noKey = await fetch(`${ggw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(noKey.status, 401);
    assert.deepEqual(Object.keys(await noKey.json()).sort(), ['error', 'type']);
    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: 'tp-wrong', maxRetries: 0 });
    await assert.rejects(
      anthropic.messages.create({ model: 'gpt', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Anthropic.AuthenticationError && e.error?.error?.type === 'authentication_error',
    );
    // A budget too small for the reservation: 429 (insufficient_quota) as a rate_limit_error.
    assert.equal((await admin('PUT', 'plans/tiny', { monthly_budget_usd: 0.01 })).status, 200);
    assert.equal((await admin('POST', 'tenants', { id: 't2', plan: 'tiny' })).status, 201);
    const poor = (await admin('POST', 'keys', { tenant: 't2', name: 'poor' })).body.key;
    const bearer = await fetch(`${ggw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${poor}` },
      body: JSON.stringify({ model: 'gpt', max_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(bearer.status, 429);
    const body = await bearer.json();
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'rate_limit_error');
  });
});

// The relay's promises on the translated and tapped paths: keep-alive comments, cancellation,
// backpressure, and an upstream cut ending the stream with the client dialect's error.
describe('translated streams behave like relayed ones', () => {
  const claudeOn = (m) => ({ claude: [{ provider: 'anthropic', base_url: `http://127.0.0.1:${m.port}` }] });
  const post = (g, body, path = '/v1/chat/completions', headers = {}) => fetch(`${g.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  const chat = (extra = {}) => ({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }], stream: true, ...extra });
  const rawChat = (port, body) => {
    const sock = net.connect(port, '127.0.0.1');
    const text = JSON.stringify(body);
    sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    return sock;
  };

  test('keep-alive comments while the Anthropic upstream is silent', async () => {
    const slow = await startMock(['--tokens', '2', '--inter-token', '700ms']);
    const g = await startGateway(gatewayConfig({ models: claudeOn(slow), server: { sse_keepalive: '200ms' } }));
    const { data, comments } = await readSse(await post(g, chat()));
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(data.filter((d) => d.includes('"content":"tok')).length, 2);
    assert.ok(comments.length >= 2, `expected keep-alive comments, got ${comments.length}`);
  });

  test('a client that disconnects mid-stream cancels the upstream request', async () => {
    const slow = await startMock(['--tokens', '100', '--inter-token', '100ms']);
    const g = await startGateway(gatewayConfig({ models: claudeOn(slow) }));
    const sock = rawChat(g.port, chat());
    await new Promise((r) => sock.once('data', r));
    sock.destroy();
    const stats = await eventually(async () => { const x = await mockStats(slow); return x.client_disconnects >= 1 && x; }, 2000);
    assert.equal(stats.client_disconnects, 1, 'the mock saw the upstream connection close');
    assert.equal(stats.streams_completed, 0);
  });

  test('a slow client slows the upstream read', async () => {
    const held = await startMock(['--tokens', String(HELD_BACK_TOKENS)]);
    const gh = await startGateway(gatewayConfig({ models: claudeOn(held) }));
    await assertHeldBack({ gw: gh, mock: held, open: () => rawChat(gh.port, chat({ max_tokens: HELD_BACK_TOKENS })) });

    // A stream paused and resumed arrives whole.
    const tokens = 100000;  // ~10 MB of Anthropic events, more as OpenAI chunks
    const big = await startMock(['--tokens', String(tokens)]);
    const g = await startGateway(gatewayConfig({ models: claudeOn(big) }));
    await assertPausedStreamArrivesWhole({ open: () => rawChat(g.port, chat({ max_tokens: tokens })), tokens });
  });

  test('an upstream cut mid-stream ends in the client dialect\'s error, translated or not', async () => {
    const resetting = await startMock(['--reset-rate', '1', '--tokens', '10']);
    const g = await startGateway(gatewayConfig({ models: claudeOn(resetting) }));
    const { data } = await readSse(await post(g, chat()));
    assert.ok(data.some((d) => d.includes('"content":"tok')), 'tokens before the cut reached the client');
    assert.ok(JSON.parse(data.at(-1)).error, `last event: ${data.at(-1)}`);
    assert.ok(!data.includes('[DONE]'));
    // Anthropic to Anthropic: the bytes pass untouched, then an Anthropic error event.
    const r = await post(g, { model: 'claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      '/v1/messages', { 'anthropic-version': '2023-06-01' });
    const text = await r.text();
    assert.match(text, /event: content_block_delta/);
    assert.match(text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    assert.doesNotMatch(text, /message_stop/);
    assert.equal((await mockStats(resetting)).requests, 2, 'no retry once bytes reached the client');
  });
});
