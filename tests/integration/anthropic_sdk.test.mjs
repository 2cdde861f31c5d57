// The official `@anthropic-ai/sdk` npm package against the mock provider's Anthropic route
// (POST /v1/messages), driven directly (no gateway): replies, streams, tool use and faults
// must be what the real SDK parses and maps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, mockStats, stopAll } from './lib/harness.mjs';

const TOKENS = 6;
let mock;
let client;
before(async () => {
  mock = await startMock(['--tokens', String(TOKENS), '--retry-after', '0']);
  client = new Anthropic({ baseURL: `http://127.0.0.1:${mock.port}`, apiKey: 'unused', maxRetries: 0 });
});
after(stopAll);

const words = (text) => text.split(' ').filter(Boolean);
const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }];

test('a message', async () => {
  const message = await client.messages.create({
    model: 'mock-claude', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, 'mock-claude');
  assert.equal(message.content[0].type, 'text');
  assert.equal(words(message.content[0].text).length, TOKENS);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.usage.output_tokens, TOKENS);
  assert.ok(message.usage.input_tokens > 0);
});

test('max_tokens cuts the answer', async () => {
  const message = await client.messages.create({
    model: 'mock-claude', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }],
  });
  assert.equal(words(message.content[0].text).length, 2);
  assert.equal(message.stop_reason, 'max_tokens');
});

test('a stream, read event by event and accumulated by the SDK', async () => {
  const stream = client.messages.stream({
    model: 'mock-claude', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }],
  });
  const types = [];
  let text = '';
  stream.on('streamEvent', (event) => types.push(event.type));
  stream.on('text', (delta) => { text += delta; });
  const message = await stream.finalMessage();
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.equal(words(text).length, TOKENS);
  assert.equal(message.content[0].text, text);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.usage.output_tokens, TOKENS);
});

test('a streamed tool call is parsed into its input', async () => {
  const stream = client.messages.stream(
    { model: 'mock-claude', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather?' }] },
    { headers: { 'x-mock-tool-call': '1' } },
  );
  let partial = 0;
  stream.on('inputJson', () => { partial += 1; });
  const message = await stream.finalMessage();
  assert.ok(partial > 1, 'the input arrives in several input_json_delta events');
  assert.equal(message.stop_reason, 'tool_use');
  const block = message.content[0];
  assert.equal(block.type, 'tool_use');
  assert.equal(block.name, 'get_weather');
  assert.deepEqual(block.input, { location: 'Paris' });
});

test('a non-stream tool call', async () => {
  const message = await client.messages.create(
    { model: 'mock-claude', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather?' }] },
    { headers: { 'x-mock-tool-call': '1' } },
  );
  assert.equal(message.content[0].type, 'tool_use');
  assert.deepEqual(message.content[0].input, { location: 'Paris' });
});

test('faults map to the SDK error classes', async () => {
  const create = (fault) => client.messages.create(
    { model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
    { headers: { 'x-mock-fault': fault } },
  );
  await assert.rejects(create('429'), (e) => e instanceof Anthropic.RateLimitError && e.status === 429
    && e.error?.error?.type === 'rate_limit_error');
  await assert.rejects(create('500'), (e) => e instanceof Anthropic.InternalServerError && e.status === 500
    && e.error?.error?.type === 'api_error');
  await assert.rejects(create('503'), (e) => e instanceof Anthropic.APIError && e.status === 529
    && e.error?.error?.type === 'overloaded_error');
});

test('a missing max_tokens is a BadRequestError', async () => {
  await assert.rejects(
    client.messages.create({ model: 'mock-claude', messages: [{ role: 'user', content: 'Hi' }] }),
    (e) => e instanceof Anthropic.BadRequestError && e.status === 400 && e.error?.error?.type === 'invalid_request_error',
  );
});

test('a stream cut without message_stop is an error for the SDK', async () => {
  const stream = client.messages.stream(
    { model: 'mock-claude', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] },
    { headers: { 'x-mock-fault': 'reset' } },
  );
  await assert.rejects(stream.finalMessage());
});

test('the mock counted the completed streams', async () => {
  const stats = await mockStats(mock);
  assert.ok(stats.streams_completed >= 2);
});
