// The Gemini upstream dialect through the real gateway, with the official clients:
//   the `openai` SDK -> Turnpike /v1/chat/completions -> a `provider: gemini` deployment
//   the `@anthropic-ai/sdk` -> Turnpike /v1/messages -> a `provider: gemini` deployment
// The mock provider answers Gemini's generateContent and streamGenerateContent?alt=sse. A tiny
// stub server stands in only for Gemini error shapes the mock does not produce (a 400
// INVALID_ARGUMENT, a bad key, an error object in a 200 body).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually,
} from './lib/harness.mjs';

const TOKENS = 6;
const CACHED = 4;
const UPSTREAM = 'gemini-upstream';
const words = (text) => text.split(' ').filter(Boolean);
const expectedText = Array.from({ length: TOKENS }, (_, i) => `tok${i} `).join('');
const openaiTools = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, additionalProperties: false } },
}];
const anthropicTools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }];

// Answers every request with one fixed Gemini error, and remembers the last request seen.
function startStub(status, body) {
  const stub = { requests: [] };
  stub.server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      stub.requests.push({ url: req.url, headers: req.headers, body: data });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  return new Promise((resolve) => stub.server.listen(0, '127.0.0.1', () => {
    stub.port = stub.server.address().port;
    resolve(stub);
  }));
}

let mock;
let toolMock;
let failMock;
let limitMock;
let cacheMock;
let badRequestStub;
let badKeyStub;
let errorIn200Stub;
let gw;
const gemini = (port, extra = {}) => [{ provider: 'gemini', base_url: `http://127.0.0.1:${port}`, api_key: 'test-gemini-key', model: UPSTREAM, ...extra }];

before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  failMock = await startMock(['--fail-rate', '1']);
  limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  cacheMock = await startMock(['--tokens', String(TOKENS), '--cached-tokens', String(CACHED)]);
  badRequestStub = await startStub(400, { error: { code: 400, message: '* GenerateContentRequest.contents: contents is not specified', status: 'INVALID_ARGUMENT' } });
  badKeyStub = await startStub(400, { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT',
    details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }] } });
  errorIn200Stub = await startStub(200, { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } });
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      gemini: gemini(mock.port),
      'gemini-keyless': [{ provider: 'gemini', base_url: `http://127.0.0.1:${mock.port}`, model: `models/${UPSTREAM}` }],
      'gemini-tools': gemini(toolMock.port),
      'gemini-failing': gemini(failMock.port),
      'gemini-limited': gemini(limitMock.port),
      'gemini-bad-request': gemini(badRequestStub.port),
      'gemini-bad-key': gemini(badKeyStub.port),
      'gemini-error-in-200': gemini(errorIn200Stub.port),
    },
  }));
});
after(async () => {
  for (const stub of [badRequestStub, badKeyStub, errorIn200Stub]) stub?.server.close();
  await stopAll();
});

describe('openai SDK -> gemini deployment', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a completion', async () => {
    const c = await client.chat.completions.create({ model: 'gemini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.model, UPSTREAM);
    assert.match(c.id, /^mock-/);
    assert.equal(c.choices[0].message.role, 'assistant');
    assert.equal(c.choices[0].message.content, expectedText);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.completion_tokens, TOKENS);
    assert.ok(c.usage.prompt_tokens > 0);
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + TOKENS);
  });

  test('a keyless deployment with a models/ model name works too', async () => {
    const c = await client.chat.completions.create({ model: 'gemini-keyless', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(c.choices[0].message.content, expectedText);
  });

  test('max_tokens cuts the answer: MAX_TOKENS is finish_reason length', async () => {
    const c = await client.chat.completions.create({ model: 'gemini', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(c.choices[0].message.content).length, 2);
    assert.equal(c.choices[0].finish_reason, 'length');
  });

  test('a stream: text in order, one chunk per Gemini chunk, then the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    let finish = null;
    let contentChunks = 0;
    let role = null;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, UPSTREAM);
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

  test('a streamed tool call: whole arguments in one delta, reassembled by the SDK', async () => {
    let argumentChunks = 0;
    const stream = client.chat.completions.stream({
      model: 'gemini-tools', tools: openaiTools, tool_choice: 'required', messages: [{ role: 'user', content: 'Weather?' }],
    });
    stream.on('chunk', (chunk) => {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
        assert.equal(call.index, 0);
        if (call.function?.arguments) argumentChunks += 1;
      }
    });
    const completion = await stream.finalChatCompletion();
    assert.equal(argumentChunks, 1);
    const choice = completion.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.match(call.id, /^call_mock-.+_0_ts_[A-Za-z0-9_-]+$/);
    assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });

    // The result goes back as a functionResponse named after the call.
    const next = await client.chat.completions.create({
      model: 'gemini', tools: openaiTools, messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }] },
        { role: 'tool', tool_call_id: call.id, content: '15 degrees' },
      ],
    });
    assert.equal(next.choices[0].message.content, expectedText);
  });

  test('a two-turn tool call: the thought signature rides in the call id and goes back', async () => {
    // Turn 1: the mock (as Gemini 3) signs its functionCall part.
    const messages = [{ role: 'user', content: 'Weather?' }];
    const first = await client.chat.completions.create({ model: 'gemini-tools', tools: openaiTools, messages });
    const assistant = first.choices[0].message;
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = assistant.tool_calls[0];
    assert.match(call.id, /^call_mock-[A-Za-z0-9-]+_0_ts_[A-Za-z0-9_-]+$/);
    // Turn 2: the assistant message as the SDK returned it, then the result. The mock answers
    // 400 unless the functionCall part carries the signature it gave.
    const toolResult = { role: 'tool', tool_call_id: call.id, content: '15 degrees' };
    const second = await client.chat.completions.create({
      model: 'gemini-tools', tools: openaiTools, messages: [...messages, assistant, toolResult],
    });
    assert.equal(second.choices[0].finish_reason, 'tool_calls');
    // The same turn with the signature cut off the id: Gemini 3 refuses it.
    const plain = call.id.slice(0, call.id.indexOf('_ts_'));
    const stripped = { ...assistant, tool_calls: [{ ...call, id: plain }] };
    await assert.rejects(
      client.chat.completions.create({
        model: 'gemini-tools', tools: openaiTools, messages: [...messages, stripped, { ...toolResult, tool_call_id: plain }],
      }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /thought_signature/.test(e.message),
    );
    // A signature segment that is not base64url is refused by the gateway, naming the field.
    await assert.rejects(
      client.chat.completions.create({
        model: 'gemini-tools', tools: openaiTools,
        messages: [...messages, { ...assistant, tool_calls: [{ ...call, id: `${plain}_ts_a.b` }] }, toolResult],
      }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages[1].tool_calls[0].id',
    );
  });

  test('a two-turn streamed tool call: the assembled message goes back as is', async () => {
    const messages = [{ role: 'user', content: 'Weather?' }];
    const first = await client.chat.completions.stream({ model: 'gemini-tools', tools: openaiTools, messages }).finalChatCompletion();
    const { role, content, tool_calls: toolCalls } = first.choices[0].message;
    assert.match(toolCalls[0].id, /_ts_/);
    const second = await client.chat.completions.stream({
      model: 'gemini-tools', tools: openaiTools, messages: [
        ...messages,
        { role, content, tool_calls: toolCalls.map(({ id, type, function: f }) => ({ id, type, function: { name: f.name, arguments: f.arguments } })) },
        { role: 'tool', tool_call_id: toolCalls[0].id, content: '15 degrees' },
      ],
    }).finalChatCompletion();
    assert.equal(second.choices[0].finish_reason, 'tool_calls');
  });

  test('a non-stream tool call', async () => {
    const c = await client.chat.completions.create({ model: 'gemini-tools', tools: openaiTools, messages: [{ role: 'user', content: 'Weather?' }] });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    assert.equal(c.choices[0].message.content, null);
    assert.deepEqual(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments), { location: 'Paris' });
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model, extra = {}) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await assert.rejects(create('gemini-limited'), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    await assert.rejects(create('gemini-limited', { stream: true }), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    await assert.rejects(create('gemini-failing'), (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
    await assert.rejects(create('gemini-bad-request'), (e) => e instanceof OpenAI.BadRequestError && e.status === 400
      && /contents is not specified/.test(e.message));
    await assert.rejects(create('gemini-bad-key'), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
    await assert.rejects(create('gemini-error-in-200'), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
  });

  test('what Gemini cannot express is a 400 naming the field', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'gemini', logprobs: true, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'logprobs',
    );
    await assert.rejects(
      client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: [{ type: 'text', text: 'What?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages[0].content[1].image_url',
    );
  });

  test('the upstream request: model and stream in the URL, key in x-goog-api-key, Gemini body', async () => {
    await assert.rejects(client.chat.completions.create({
      model: 'gemini-bad-request', stream: true, temperature: 0.3, max_tokens: 9,
      messages: [{ role: 'system', content: 'S' }, { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
    }));
    const seen = badRequestStub.requests.at(-1);
    assert.equal(seen.url, `/v1beta/models/${UPSTREAM}:streamGenerateContent?alt=sse`);
    assert.equal(seen.headers['x-goog-api-key'], 'test-gemini-key');
    assert.equal(seen.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(seen.body), {
      systemInstruction: { parts: [{ text: 'S' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hi' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
      generationConfig: { temperature: 0.3, maxOutputTokens: 9 },
    });
  });
});

describe('anthropic SDK -> gemini deployment', () => {
  let client;
  before(() => { client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 }); });

  test('a message', async () => {
    const message = await client.messages.create({ model: 'gemini', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.type, 'message');
    assert.equal(message.model, UPSTREAM);
    assert.equal(message.content.length, 1);
    assert.equal(message.content[0].text, expectedText);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
    assert.ok(message.usage.input_tokens > 0);
  });

  test('a stream', async () => {
    const stream = client.messages.stream({ model: 'gemini', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const types = [];
    let text = '';
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (delta) => { text += delta; });
    const message = await stream.finalMessage();
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.equal(types.filter((t) => t === 'content_block_delta').length, TOKENS);
    assert.equal(text, expectedText);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
  });

  test('a streamed tool call is parsed into its input', async () => {
    const stream = client.messages.stream({ model: 'gemini-tools', max_tokens: 100, tools: anthropicTools, messages: [{ role: 'user', content: 'Weather?' }] });
    let partial = 0;
    stream.on('inputJson', () => { partial += 1; });
    const message = await stream.finalMessage();
    assert.equal(partial, 1);
    assert.equal(message.stop_reason, 'tool_use');
    const block = message.content.find((b) => b.type === 'tool_use');
    assert.equal(block.name, 'get_weather');
    assert.ok(block.id.length > 0);
    assert.deepEqual(block.input, { location: 'Paris' });
  });

  test('a two-turn tool use: the thought signature rides in the tool_use id and goes back', async () => {
    const messages = [{ role: 'user', content: 'Weather?' }];
    const first = await client.messages.create({ model: 'gemini-tools', max_tokens: 100, tools: anthropicTools, messages });
    assert.equal(first.stop_reason, 'tool_use');
    const block = first.content.find((b) => b.type === 'tool_use');
    assert.match(block.id, /_ts_[A-Za-z0-9_-]+$/);
    const result = (id) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '15 degrees' }] });
    // Turn 2: the assistant content as the SDK returned it, then the result.
    const second = await client.messages.create({
      model: 'gemini-tools', max_tokens: 100, tools: anthropicTools,
      messages: [...messages, { role: 'assistant', content: first.content }, result(block.id)],
    });
    assert.equal(second.stop_reason, 'tool_use');
    // Streamed turn 2 as well.
    const streamed = await client.messages.stream({
      model: 'gemini-tools', max_tokens: 100, tools: anthropicTools,
      messages: [...messages, { role: 'assistant', content: first.content }, result(block.id)],
    }).finalMessage();
    assert.equal(streamed.stop_reason, 'tool_use');
    // Without the signature, Gemini 3 refuses the turn.
    const plain = block.id.slice(0, block.id.indexOf('_ts_'));
    await assert.rejects(
      client.messages.create({
        model: 'gemini-tools', max_tokens: 100, tools: anthropicTools,
        messages: [...messages, { role: 'assistant', content: [{ ...block, id: plain }] }, result(plain)],
      }),
      (e) => e instanceof Anthropic.BadRequestError && e.status === 400 && /thought_signature/.test(e.message),
    );
  });

  test('upstream errors become the SDK error classes', async () => {
    const create = (model) => client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    await assert.rejects(create('gemini-limited'), (e) => e instanceof Anthropic.RateLimitError && e.status === 429);
    await assert.rejects(create('gemini-bad-request'), (e) => e instanceof Anthropic.BadRequestError && e.status === 400);
    await assert.rejects(create('gemini-failing'), (e) => e instanceof Anthropic.InternalServerError);
  });
});

describe('governed gemini', () => {
  // Output at 1000 USD per million tokens, cached input at a tenth of the input price.
  const PRICES = { [UPSTREAM]: { input: 1, output: 1000, cached_input: 0.1, max_output_tokens: 100000 } };
  let ggw;
  let secret;
  let admin;
  let calls;

  before(async () => {
    ({ gw: ggw, key: secret, admin, calls } = await startGovernedGateway({
      name: 'gemini',
      models: { 'gemini-cached': gemini(cacheMock.port) },
      prices: PRICES,
    }));
  });

  test('streams are priced from Gemini usage, cached prompt tokens included', async () => {
    const openai = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'gemini-cached', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }],
    });
    let usage = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    assert.equal(usage.prompt_tokens_details.cached_tokens, CACHED);
    assert.equal(usage.completion_tokens, TOKENS);
    const anthropic = new Anthropic({ baseURL: ggw.url, apiKey: secret, maxRetries: 0 });
    const message = await anthropic.messages.stream({ model: 'gemini-cached', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(message.usage.cache_read_input_tokens, CACHED);

    const rows = await eventually(async () => {
      const x = (await admin('GET', 'calls?limit=100')).body.data;
      return x.length === 2 ? x : null;
    }, 5000);
    assert.ok(rows, 'two call-log rows');
    for (const row of rows) {
      assert.equal(row.status, 200);
      assert.equal(row.model, 'gemini-cached');
      assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
      assert.equal(row.cached_tokens, CACHED, JSON.stringify(row));
      assert.equal(row.estimated, false);
      const micros = Math.ceil((row.prompt_tokens - CACHED) * 1 + CACHED * 0.1 + TOKENS * 1000);
      assert.equal(Math.round(row.cost_usd * 1e6), micros, JSON.stringify(row));
    }
    assert.ok(rows.some((r) => r.prompt_tokens === usage.prompt_tokens), JSON.stringify(rows));
  });
});
