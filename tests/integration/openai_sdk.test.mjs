// The official `openai` npm package against Turnpike.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock, startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

let client;
before(async () => {
  const mock = await startMock(['--tokens', '8']);
  const gw = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(stopAll);

test('a completion', async () => {
  const c = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.equal(c.choices[0].message.content.split(' ').filter(Boolean).length, 8);
  assert.equal(c.usage.completion_tokens, 8);
});

test('a streamed completion with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta?.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  assert.equal(text.split(' ').filter(Boolean).length, 8);
  assert.equal(finish, 'stop');
  assert.equal(usage.completion_tokens, 8);
});

test('an unknown model maps to the SDK NotFoundError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found',
  );
});

test('a bad request maps to the SDK BadRequestError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'mock-model', messages: 'not-an-array' }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'messages',
  );
});
