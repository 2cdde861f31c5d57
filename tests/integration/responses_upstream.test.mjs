// The Responses API as an upstream dialect (`provider: openai` with `api: responses`), through the
// real gateway, with the official clients:
//   the `openai` SDK -> /v1/chat/completions -> a Responses deployment (translated)
//   the `@anthropic-ai/sdk` -> /v1/messages -> a Responses deployment (translated)
//   the `openai` SDK -> /v1/responses -> a Responses deployment (identity: bytes forwarded)
// The mock provider answers POST /v1/responses; it refuses a body without store:false, so a
// request that would let the upstream store the response fails here.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually } from './lib/harness.mjs';

const TOKENS = 5;
const EXPECTED_TEXT = Array.from({ length: TOKENS }, (_, i) => `tok${i} `).join('');
const tools = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
}];

let mock;
let toolMock;
let limitMock;
let gw;
const responses = (m, model = 'gpt-up') => [{ provider: 'openai', api: 'responses', base_url: `http://127.0.0.1:${m.port}/v1`, model }];

before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      resp: responses(mock),
      'resp-tools': responses(toolMock),
      'resp-limited': responses(limitMock),
    },
  }));
});
after(stopAll);

describe('openai SDK chat completions -> responses deployment', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a whole completion', async () => {
    const c = await client.chat.completions.create({ model: 'resp', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 50 });
    assert.equal(c.object, 'chat.completion');
    // The mock's Responses id is resp_<its id>: the answer came through the Responses API.
    assert.match(c.id, /^resp_chatcmpl-mock-/);
    assert.equal(c.model, 'gpt-up');
    assert.equal(c.choices[0].message.content, EXPECTED_TEXT);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.usage.completion_tokens, TOKENS);
    assert.ok(c.usage.prompt_tokens > 0);
  });

  test('a streamed completion with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'resp', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish = null;
    let usage = null;
    for await (const chunk of stream) {
      assert.match(chunk.id, /^resp_chatcmpl-mock-/);
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, EXPECTED_TEXT);
    assert.equal(finish, 'stop');
    assert.equal(usage.completion_tokens, TOKENS);
  });

  test('a tool call with streamed arguments', async () => {
    const stream = await client.chat.completions.create({
      model: 'resp-tools', messages: [{ role: 'user', content: 'Weather?' }], tools, stream: true,
    });
    const calls = [];
    let finish = null;
    let argumentChunks = 0;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        for (const call of choice.delta.tool_calls ?? []) {
          calls[call.index] ??= { id: '', name: '', arguments: '' };
          if (call.id) calls[call.index].id = call.id;
          if (call.function?.name) calls[call.index].name = call.function.name;
          if (call.function?.arguments) {
            calls[call.index].arguments += call.function.arguments;
            argumentChunks++;
          }
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(calls.length, 1);
    assert.match(calls[0].id, /^call_mock_/);
    assert.equal(calls[0].name, 'get_weather');
    assert.deepEqual(JSON.parse(calls[0].arguments), { location: 'Paris' });
    assert.ok(argumentChunks > 1, 'the arguments arrive in several deltas');
    assert.equal(finish, 'tool_calls');
  });

  test('a whole tool call', async () => {
    const c = await client.chat.completions.create({ model: 'resp-tools', messages: [{ role: 'user', content: 'Weather?' }], tools });
    assert.equal(c.choices[0].finish_reason, 'tool_calls');
    assert.equal(c.choices[0].message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments), { location: 'Paris' });
  });

  test('an upstream 429 surfaces as the SDK\'s RateLimitError', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'resp-limited', messages: [{ role: 'user', content: 'Hi' }] }),
      (err) => err instanceof OpenAI.RateLimitError && err.status === 429,
    );
  });

  test('a field the Responses API cannot express is a 400 naming it', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'resp', messages: [{ role: 'user', content: 'Hi' }], stop: ['x'] }),
      (err) => err instanceof OpenAI.BadRequestError && err.param === 'stop',
    );
  });
});

describe('anthropic SDK -> responses deployment', () => {
  test('a streamed message', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'resp', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const message = await stream.finalMessage();
    assert.equal(message.content[0].text, EXPECTED_TEXT);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.output_tokens, TOKENS);
  });
});

describe('openai SDK /v1/responses -> responses deployment (identity)', () => {
  let client;
  before(() => { client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 }); });

  test('a whole response is forwarded untouched (store:false spliced in)', async () => {
    const r = await client.responses.create({ model: 'resp', input: 'Hi', instructions: 'Be brief.' });
    // Translated, the id would be resp_resp_...: identity keeps the upstream's own.
    assert.match(r.id, /^resp_chatcmpl-mock-/);
    assert.equal(r.model, 'gpt-up');
    assert.equal(r.output_text, EXPECTED_TEXT);
    assert.equal(r.store, false);
    assert.equal(r.instructions, 'Be brief.');
    assert.equal(r.usage.output_tokens, TOKENS);
  });

  test('a streamed response', async () => {
    const stream = client.responses.stream({ model: 'resp', input: 'Hi' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => { deltas += e.delta; });
    const final = await stream.finalResponse();
    assert.match(final.id, /^resp_chatcmpl-mock-/);
    assert.equal(deltas, EXPECTED_TEXT);
    // (The SDK's finalResponse() has no output_text convenience: the message item's text.)
    assert.equal(final.status, 'completed');
    assert.equal(final.output[0].content[0].text, EXPECTED_TEXT);
    assert.equal(final.store, false);
    assert.equal(final.usage.output_tokens, TOKENS);
  });

  test('store:true and previous_response_id are refused before forwarding', async () => {
    await assert.rejects(
      client.responses.create({ model: 'resp', input: 'Hi', store: true }),
      (err) => err instanceof OpenAI.BadRequestError && err.param === 'store',
    );
    await assert.rejects(
      client.responses.create({ model: 'resp', input: 'Hi', previous_response_id: 'resp_1' }),
      (err) => err instanceof OpenAI.BadRequestError && err.param === 'previous_response_id',
    );
  });
});

// Governed: what reached a Responses deployment is priced from the Responses API's usage,
// whether the client spoke it too (identity: the bytes are forwarded, the decoder only reads
// them) or spoke chat completions (translated), streamed or not.
describe('governed responses deployment', () => {
  const PRICES = { 'gpt-up': { input: 1, output: 1000, max_output_tokens: 100000 } };
  let ggw;
  let secret;
  let admin;
  let calls;
  let client;

  before(async () => {
    ({ gw: ggw, key: secret, admin, calls } = await startGovernedGateway({
      name: 'responses',
      models: { resp: responses(mock) },
      prices: PRICES,
    }));
    client = new OpenAI({ baseURL: `${ggw.url}/v1`, apiKey: secret, maxRetries: 0 });
  });

  test('identity and translated calls, whole and streamed, are logged with their tokens and a cost', async () => {
    const whole = await client.responses.create({ model: 'resp', input: 'Hi' });
    const stream = client.responses.stream({ model: 'resp', input: 'Hi there' });
    const streamed = await stream.finalResponse();
    const chat = await client.chat.completions.create({ model: 'resp', messages: [{ role: 'user', content: 'Hello' }] });
    const chunks = await client.chat.completions.create({
      model: 'resp', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hey' }],
    });
    let chatStreamUsage = null;
    for await (const chunk of chunks) if (chunk.usage) chatStreamUsage = chunk.usage;

    const expected = [whole.usage.input_tokens, streamed.usage.input_tokens, chat.usage.prompt_tokens,
      chatStreamUsage.prompt_tokens].sort((a, b) => a - b);
    const rows = await eventually(async () => {
      const r = (await admin('GET', 'calls?limit=100')).body.data;
      return r.length === 4 ? r : null;
    }, 5000);
    assert.ok(rows, 'four call-log rows');
    assert.deepEqual(rows.map((r) => r.prompt_tokens).sort((a, b) => a - b), expected, JSON.stringify(rows));
    for (const row of rows) {
      assert.equal(row.status, 200, JSON.stringify(row));
      assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
      assert.equal(row.estimated, false, JSON.stringify(row));
      assert.equal(row.unpriced, false, JSON.stringify(row));
      // 1 and 1000 USD per million tokens = micro-USD per token.
      assert.equal(Math.round(row.cost_usd * 1e6), row.prompt_tokens + TOKENS * 1000, JSON.stringify(row));
    }
  });
});
