// Reasoning (thinking) across dialects through the real gateway, with the official clients:
//   `@anthropic-ai/sdk` with extended thinking -> /v1/messages -> a `provider: openai`
//     (OpenAI-compatible reasoning server: reasoning_content) deployment, streamed and whole
//   `@anthropic-ai/sdk` with extended thinking -> /v1/messages -> a `provider: gemini` deployment
//   `openai` with reasoning_effort -> /v1/chat/completions -> a `provider: anthropic` deployment
//   `openai` Responses with reasoning -> /v1/responses -> a `provider: anthropic` deployment
//   both SDKs -> a `provider: ollama` deployment (think / message.thinking)
//   both SDKs -> a `provider: cohere` deployment (thinking / thinking content)
// The mock provider reasons (3 tokens, "think0 think1 think2 ") when the request asks for it,
// in each wire's form, and checks Anthropic's thinking bounds as the API does.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

const TOKENS = 5;
const REASONING = 'think0 think1 think2 ';
const REASONING_TOKENS = 3;
const words = (text) => text.split(' ').filter(Boolean);

let mock;
let gw;
before(async () => {
  mock = await startMock(['--tokens', String(TOKENS)]);
  const base = `http://127.0.0.1:${mock.port}`;
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      reasoner: [{ provider: 'openai', base_url: `${base}/v1`, model: 'deepseek-reasoner' }],
      claude: [{ provider: 'anthropic', base_url: base, api_key: 'sk-ant-test', model: 'claude-upstream' }],
      gemini: [{ provider: 'gemini', base_url: base, api_key: 'g-test', model: 'gemini-upstream' }],
      qwen: [{ provider: 'ollama', base_url: base, model: 'qwen3' }],
      command: [{ provider: 'cohere', base_url: base, api_key: 'co-test', model: 'command-a-reasoning' }],
    },
  }));
});
after(async () => { await stopAll(); stopAllPostgres(); });

describe('@anthropic-ai/sdk extended thinking -> OpenAI-compatible reasoning deployment', () => {
  const client = () => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const request = {
    model: 'reasoner', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
    messages: [{ role: 'user', content: 'Is 21 prime?' }],
  };

  test('streamed: thinking_delta events, then the text, accumulated by the SDK', async () => {
    const stream = client().messages.stream(request);
    let thinking = '';
    let text = '';
    const types = [];
    stream.on('thinking', (delta) => { thinking += delta; });
    stream.on('text', (delta) => { text += delta; });
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta') types.push(event.delta.type);
    });
    const message = await stream.finalMessage();
    assert.equal(thinking, REASONING);
    assert.equal(types.filter((t) => t === 'thinking_delta').length, REASONING_TOKENS);
    assert.equal(message.content.length, 2);
    assert.equal(message.content[0].type, 'thinking');
    assert.equal(message.content[0].thinking, REASONING);
    assert.equal(message.content[0].signature, '', 'an OpenAI-compatible server signs nothing');
    assert.equal(message.content[1].type, 'text');
    assert.equal(words(message.content[1].text).length, TOKENS);
    assert.equal(message.content[1].text, text);
    assert.equal(message.usage.output_tokens, TOKENS + REASONING_TOKENS, 'reasoning is output');
    assert.equal(message.stop_reason, 'end_turn');
  });

  test('whole: a thinking block before the text', async () => {
    const message = await client().messages.create(request);
    assert.deepEqual(message.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(message.content[0].thinking, REASONING);
    assert.equal(message.usage.output_tokens, TOKENS + REASONING_TOKENS);
  });

  test('the next turn sends the thinking block back: accepted, not forwarded', async () => {
    const first = await client().messages.create(request);
    const message = await client().messages.create({
      ...request,
      messages: [...request.messages, { role: 'assistant', content: first.content },
        { role: 'user', content: 'And 23?' }],
    });
    assert.equal(message.content[0].thinking, REASONING);
  });

  test('thinking disabled: no reasoning', async () => {
    const message = await client().messages.create({ ...request, thinking: { type: 'disabled' } });
    assert.deepEqual(message.content.map((b) => b.type), ['text']);
  });

  test('a thinking type the pivot cannot carry is a BadRequestError naming it', async () => {
    await assert.rejects(
      client().messages.create({ ...request, thinking: { type: 'adaptive' } }),
      (e) => e instanceof Anthropic.BadRequestError && /thinking\.type/.test(e.message),
    );
  });

});

describe('@anthropic-ai/sdk extended thinking -> Anthropic deployment (same dialect)', () => {
  test('streamed thinking with its signature, and the signed block accepted back', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const request = {
      model: 'claude', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'Is 21 prime?' }],
    };
    const message = await client.messages.stream(request).finalMessage();
    assert.deepEqual(message.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(message.content[0].thinking, REASONING);
    assert.ok(message.content[0].signature.length > 0, 'the upstream\'s signature passes through');
    const next = await client.messages.create({
      ...request,
      messages: [...request.messages, { role: 'assistant', content: message.content },
        { role: 'user', content: 'And 23?' }],
    });
    assert.equal(next.content[0].type, 'thinking');
  });
});

describe('@anthropic-ai/sdk extended thinking -> Gemini deployment', () => {
  const client = () => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const request = {
    model: 'gemini', max_tokens: 16000, thinking: { type: 'enabled', budget_tokens: 10000 },
    messages: [{ role: 'user', content: 'Is 21 prime?' }],
  };

  test('streamed: thought parts become a thinking block before the text', async () => {
    const stream = client().messages.stream(request);
    let thinking = '';
    stream.on('thinking', (delta) => { thinking += delta; });
    const message = await stream.finalMessage();
    assert.equal(thinking, REASONING);
    assert.deepEqual(message.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(message.content[0].thinking, REASONING);
    assert.equal(words(message.content[1].text).length, TOKENS);
    assert.equal(message.usage.output_tokens, TOKENS + REASONING_TOKENS, 'thoughts are output');
  });

  test('whole, and the next turn with the thinking block sent back', async () => {
    const first = await client().messages.create(request);
    assert.deepEqual(first.content.map((b) => b.type), ['thinking', 'text']);
    const next = await client().messages.create({
      ...request,
      messages: [...request.messages, { role: 'assistant', content: first.content },
        { role: 'user', content: 'And 23?' }],
    });
    assert.equal(next.content[0].thinking, REASONING);
  });
});

describe('reasoning from an Ollama deployment (think)', () => {
  test('@anthropic-ai/sdk streamed thinking, openai SDK reasoning_content', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const message = await anthropic.messages.stream({
      model: 'qwen', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'Is 21 prime?' }],
    }).finalMessage();
    assert.deepEqual(message.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(message.content[0].thinking, REASONING);
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'qwen', reasoning_effort: 'medium', messages: [{ role: 'user', content: 'Is 21 prime?' }],
    });
    assert.equal(completion.choices[0].message.reasoning_content, REASONING);
    const plain = await openai.chat.completions.create({
      model: 'qwen', messages: [{ role: 'user', content: 'Is 21 prime?' }],
    });
    assert.equal(plain.choices[0].message.reasoning_content, undefined, 'no think, no thinking');
  });
});

describe('reasoning from a Cohere deployment (thinking)', () => {
  test('@anthropic-ai/sdk streamed thinking, openai SDK reasoning_content', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const message = await anthropic.messages.stream({
      model: 'command', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'Is 21 prime?' }],
    }).finalMessage();
    assert.deepEqual(message.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(message.content[0].thinking, REASONING);
    assert.equal(words(message.content[1].text).length, TOKENS);
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'command', reasoning_effort: 'high', messages: [{ role: 'user', content: 'Is 21 prime?' }],
    });
    assert.equal(completion.choices[0].message.reasoning_content, REASONING);
  });
});

describe('openai SDK reasoning_effort -> Anthropic deployment', () => {
  const client = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const request = {
    model: 'claude', reasoning_effort: 'low', max_completion_tokens: 4000,
    messages: [{ role: 'user', content: 'Is 21 prime?' }],
  };

  test('streamed: delta.reasoning_content chunks before the content', async () => {
    const stream = await client().chat.completions.create({
      ...request, stream: true, stream_options: { include_usage: true },
    });
    let reasoning = '';
    let content = '';
    let usage;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const delta = chunk.choices[0]?.delta ?? {};
      if (delta.reasoning_content) {
        assert.equal(content, '', 'reasoning comes before the answer');
        reasoning += delta.reasoning_content;
      }
      if (delta.content) content += delta.content;
    }
    assert.equal(reasoning, REASONING);
    assert.equal(words(content).length, TOKENS);
    assert.equal(usage.completion_tokens, TOKENS + REASONING_TOKENS);
  });

  test('whole: message.reasoning_content', async () => {
    const completion = await client().chat.completions.create(request);
    const message = completion.choices[0].message;
    assert.equal(message.reasoning_content, REASONING);
    assert.equal(words(message.content).length, TOKENS);
  });

  test('no token limit: the thinking budget is added to the default one', async () => {
    const { max_completion_tokens: _, ...unlimited } = request;
    const completion = await client().chat.completions.create({ ...unlimited, reasoning_effort: 'high' });
    assert.equal(completion.choices[0].message.reasoning_content, REASONING);
  });

  test('a limit below Anthropic\'s smallest thinking budget is a BadRequestError naming reasoning_effort', async () => {
    await assert.rejects(
      client().chat.completions.create({ ...request, max_completion_tokens: 500 }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'reasoning_effort',
    );
  });

  test('an unknown effort is a BadRequestError naming reasoning_effort', async () => {
    await assert.rejects(
      client().chat.completions.create({ ...request, reasoning_effort: 'extreme' }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'reasoning_effort',
    );
  });
});

describe('openai SDK Responses reasoning -> Anthropic deployment', () => {
  const client = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const request = {
    model: 'claude', input: 'Is 21 prime?', reasoning: { effort: 'low' }, max_output_tokens: 4000,
    store: false,
  };

  test('streamed: a reasoning item with its summary, then the message', async () => {
    const stream = client().responses.stream(request);
    let summary = '';
    stream.on('response.reasoning_summary_text.delta', (event) => { summary += event.delta; });
    const response = await stream.finalResponse();
    assert.equal(summary, REASONING);
    assert.deepEqual(response.output.map((item) => item.type), ['reasoning', 'message']);
    assert.equal(response.output[0].summary[0].text, REASONING);
    assert.equal(words(response.output[1].content[0].text).length, TOKENS);
    assert.equal(response.usage.output_tokens, TOKENS + REASONING_TOKENS);
  });

  test('whole: the reasoning item first', async () => {
    const response = await client().responses.create(request);
    assert.deepEqual(response.output.map((item) => item.type), ['reasoning', 'message']);
    assert.equal(response.output[0].summary[0].text, REASONING);
    assert.equal(words(response.output_text).length, TOKENS);
  });
});

// Both engines: the embedded SQLite file and PostgreSQL (a throwaway cluster; skipped where
// its binaries are absent, CI installs them).
const ENGINES = [
  { name: 'sqlite', store: async () => ({}) },
  {
    name: 'postgres',
    skip: needsPostgres(),
    store: async () => ({ engine: 'postgres', url: (await startPostgres()).url }),
  },
];

for (const engine of ENGINES) describe(`reasoning tokens in the call log (${engine.name})`, { skip: engine.skip }, () => {
  test('counted in their own column, priced as output, on the identity and translated paths', async () => {
    const base = `http://127.0.0.1:${mock.port}`;
    const { gw: governed, key, calls } = await startGovernedGateway({
      name: 'reasoning',
      models: { reasoner: [{ provider: 'openai', base_url: `${base}/v1`, model: 'deepseek-reasoner' }] },
      prices: { reasoner: { input: 1, output: 2, max_output_tokens: 8192 } },
      store: await engine.store(),
    });
    const openai = new OpenAI({ baseURL: `${governed.url}/v1`, apiKey: key, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: governed.url, apiKey: key, maxRetries: 0 });
    const messages = [{ role: 'user', content: 'Is 21 prime?' }];
    await openai.chat.completions.create({ model: 'reasoner', reasoning_effort: 'low', messages });
    const stream = await openai.chat.completions.create({ model: 'reasoner', reasoning_effort: 'low', messages, stream: true });
    for await (const _ of stream) { /* drain */ }
    await anthropic.messages.stream({
      model: 'reasoner', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages,
    }).finalMessage();
    await openai.chat.completions.create({ model: 'reasoner', messages });
    const rows = await eventually(async () => {
      const data = await calls();
      return data.length === 4 ? data : null;
    });
    assert.ok(rows, 'the four calls are logged');
    const reasoning = rows.map((r) => r.reasoning_tokens).sort();
    assert.deepEqual(reasoning, [0, REASONING_TOKENS, REASONING_TOKENS, REASONING_TOKENS]);
    for (const row of rows) {
      assert.equal(row.completion_tokens, TOKENS + row.reasoning_tokens, 'reasoning is part of the output');
      // $1 / $2 per million: completion tokens, reasoning included, at the output price.
      const micros = row.prompt_tokens * 1 + row.completion_tokens * 2;
      assert.ok(Math.abs(row.cost_usd - micros / 1e6) < 1e-9, JSON.stringify(row));
    }
  });

  test('at their own price where the price table gives one', async () => {
    const base = `http://127.0.0.1:${mock.port}`;
    const { gw: governed, key, calls } = await startGovernedGateway({
      name: 'reasoning-priced',
      models: { reasoner: [{ provider: 'openai', base_url: `${base}/v1`, model: 'deepseek-reasoner' }] },
      prices: { reasoner: { input: 1, output: 2, reasoning: 12, max_output_tokens: 8192 } },
      store: await engine.store(),
    });
    const openai = new OpenAI({ baseURL: `${governed.url}/v1`, apiKey: key, maxRetries: 0 });
    const messages = [{ role: 'user', content: 'Is 21 prime?' }];
    await openai.chat.completions.create({ model: 'reasoner', reasoning_effort: 'low', messages });
    await openai.chat.completions.create({ model: 'reasoner', messages });
    const rows = await eventually(async () => {
      const data = await calls();
      return data.length === 2 ? data : null;
    });
    assert.ok(rows, 'the two calls are logged');
    assert.deepEqual(rows.map((r) => r.reasoning_tokens).sort(), [0, REASONING_TOKENS]);
    for (const row of rows) {
      // $1 / $2 / $12 per million: the visible output at the output price, reasoning at its own.
      const micros = row.prompt_tokens * 1 + (row.completion_tokens - row.reasoning_tokens) * 2 +
        row.reasoning_tokens * 12;
      assert.ok(Math.abs(row.cost_usd - micros / 1e6) < 1e-9, JSON.stringify(row));
    }
    const thinking = rows.find((r) => r.reasoning_tokens > 0);
    assert.equal(thinking.completion_tokens, TOKENS + REASONING_TOKENS);
    // Not the output-price cost: the reasoning price was used.
    const asOutput = thinking.prompt_tokens * 1 + thinking.completion_tokens * 2;
    assert.ok(Math.abs(thinking.cost_usd - asOutput / 1e6) > 1e-9, JSON.stringify(thinking));
  });
});
