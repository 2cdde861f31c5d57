// Reasoning into the Gemini and Cohere client APIs, with their official SDKs:
//   `@google/genai` with thinkingConfig {includeThoughts} -> a `provider: anthropic` deployment
//     and a `provider: openai` (OpenAI-compatible reasoning_content) deployment
//   `cohere-ai` with thinking {type: enabled} -> the same two deployments
//   `openai` Responses and `@google/genai` two-turn tool loops with thinking -> an Anthropic
//     deployment: the signature goes out as encrypted_content / a tagged thoughtSignature and
//     comes back as the tool turn's signed thinking block (the mock checks it, as Anthropic does)
// The mock provider reasons (3 tokens, "think0 think1 think2 ") when the request asks for it,
// in each wire's form; its Anthropic thinking blocks are signed.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError } from '@google/genai';
import { CohereClientV2, CohereError } from 'cohere-ai';
import OpenAI from 'openai';
import { startMock, startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

const TOKENS = 5;
const REASONING = 'think0 think1 think2 ';
const REASONING_TOKENS = 3;
const words = (text) => text.split(' ').filter(Boolean);

let gw;
before(async () => {
  const mock = await startMock(['--tokens', String(TOKENS)]);
  const toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  const base = `http://127.0.0.1:${mock.port}`;
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      reasoner: [{ provider: 'openai', base_url: `${base}/v1`, model: 'deepseek-reasoner' }],
      claude: [{ provider: 'anthropic', base_url: base, api_key: 'sk-ant-test', model: 'claude-upstream' }],
      'claude-tools': [{ provider: 'anthropic', base_url: `http://127.0.0.1:${toolMock.port}`, api_key: 'sk-ant-test', model: 'claude-upstream' }],
    },
  }));
});
after(stopAll);

const thoughtText = (parts) => parts.filter((p) => p.thought).map((p) => p.text ?? '').join('');

describe('@google/genai thinkingConfig', () => {
  const genai = () => new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: gw.url } });
  const config = { thinkingConfig: { thinkingBudget: 2000, includeThoughts: true } };

  for (const model of ['claude', 'reasoner']) {
    test(`${model}: streamed thought parts before the text`, async () => {
      const stream = await genai().models.generateContentStream({ model, contents: 'Is 21 prime?', config });
      const parts = [];
      let text = '';
      let last;
      for await (const chunk of stream) {
        parts.push(...chunk.candidates[0].content.parts);
        text += chunk.text ?? '';
        last = chunk;
      }
      assert.equal(thoughtText(parts), REASONING);
      assert.ok(parts.findIndex((p) => p.thought) < parts.findIndex((p) => !p.thought && p.text));
      assert.equal(words(text).length, TOKENS, 'the SDK\'s text leaves thoughts out');
      if (model === 'reasoner') {
        assert.equal(last.usageMetadata.thoughtsTokenCount, REASONING_TOKENS);
        assert.equal(last.usageMetadata.candidatesTokenCount, TOKENS);
      } else {
        assert.equal(last.usageMetadata.candidatesTokenCount, TOKENS + REASONING_TOKENS);
        const signed = parts.find((p) => p.thoughtSignature);
        assert.match(signed.thoughtSignature, /^anthropic:/, 'the Anthropic signature, tagged');
      }
    });

    test(`${model}: whole, then the next turn with the model's parts sent back`, async () => {
      const first = await genai().models.generateContent({ model, contents: 'Is 21 prime?', config });
      const parts = first.candidates[0].content.parts;
      assert.equal(parts[0].thought, true);
      assert.equal(parts[0].text, REASONING);
      assert.equal(words(first.text).length, TOKENS);
      const next = await genai().models.generateContent({
        model, config,
        contents: [
          { role: 'user', parts: [{ text: 'Is 21 prime?' }] },
          { role: 'model', parts },
          { role: 'user', parts: [{ text: 'And 23?' }] },
        ],
      });
      assert.equal(next.candidates[0].content.parts[0].text, REASONING);
    });
  }

  test('includeThoughts off: thinking happens, no thought part is shown', async () => {
    const r = await genai().models.generateContent({
      model: 'reasoner', contents: 'Is 21 prime?', config: { thinkingConfig: { thinkingBudget: 2000 } },
    });
    assert.equal(r.candidates[0].content.parts.some((p) => p.thought), false);
    assert.equal(r.usageMetadata.thoughtsTokenCount, REASONING_TOKENS);
  });

  test('thinkingBudget 0: no reasoning', async () => {
    const r = await genai().models.generateContent({
      model: 'claude', contents: 'Is 21 prime?',
      config: { thinkingConfig: { thinkingBudget: 0, includeThoughts: true } },
    });
    assert.equal(r.candidates[0].content.parts.some((p) => p.thought), false);
  });

  test('a bad thinkingBudget is an ApiError naming it', async () => {
    await assert.rejects(
      genai().models.generateContent({
        model: 'claude', contents: 'Hi', config: { thinkingConfig: { thinkingBudget: -7 } },
      }),
      (e) => e instanceof ApiError && e.status === 400 && /thinkingBudget/.test(e.message),
    );
  });
});

describe('cohere-ai thinking', () => {
  const cohere = () => new CohereClientV2({ token: 'unused', environment: gw.url, maxRetries: 0 });
  const request = (model) => ({
    model, thinking: { type: 'enabled', tokenBudget: 2000 },
    messages: [{ role: 'user', content: 'Is 21 prime?' }],
  });

  for (const model of ['claude', 'reasoner']) {
    test(`${model}: streamed thinking content before the text`, async () => {
      const stream = await cohere().chatStream(request(model));
      const starts = [];
      let thinking = '';
      let text = '';
      for await (const event of stream) {
        if (event.type === 'content-start') starts.push(event.delta.message.content.type);
        if (event.type === 'content-delta') {
          thinking += event.delta.message.content.thinking ?? '';
          text += event.delta.message.content.text ?? '';
        }
      }
      assert.deepEqual(starts, ['thinking', 'text']);
      assert.equal(thinking, REASONING);
      assert.equal(words(text).length, TOKENS);
    });

    test(`${model}: whole, then the next turn with the thinking sent back`, async () => {
      const first = await cohere().chat(request(model));
      const content = first.message.content;
      assert.deepEqual(content.map((c) => c.type), ['thinking', 'text']);
      assert.equal(content[0].thinking, REASONING);
      assert.equal(first.usage.tokens.outputTokens, TOKENS + REASONING_TOKENS, 'reasoning is output');
      const next = await cohere().chat({
        ...request(model),
        messages: [...request(model).messages, { role: 'assistant', content },
          { role: 'user', content: 'And 23?' }],
      });
      assert.equal(next.message.content[0].thinking, REASONING);
    });
  }

  test('thinking disabled: no reasoning', async () => {
    const r = await cohere().chat({ ...request('claude'), thinking: { type: 'disabled' } });
    assert.deepEqual(r.message.content.map((c) => c.type), ['text']);
  });

  test('a bad token_budget is a CohereError naming it', async () => {
    await assert.rejects(
      cohere().chat({ ...request('claude'), thinking: { type: 'enabled', tokenBudget: -1 } }),
      (e) => e instanceof CohereError && e.statusCode === 400 && /token_budget/.test(JSON.stringify(e.body)),
    );
  });
});

describe('two-turn tool loops with thinking -> Anthropic deployment', () => {
  test('openai Responses: the reasoning item\'s encrypted_content signs the tool turn', async () => {
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const tools = [{
      type: 'function', name: 'factor', strict: false,
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
    }];
    const input = [{ role: 'user', content: 'Is 21 prime?' }];
    const request = {
      model: 'claude-tools', tools, reasoning: { effort: 'low' }, max_output_tokens: 4000,
      store: false, include: ['reasoning.encrypted_content'],
    };
    const first = await openai.responses.create({ ...request, input });
    assert.deepEqual(first.output.map((item) => item.type), ['reasoning', 'function_call']);
    assert.match(first.output[0].encrypted_content, /^anthropic:/);
    const call = first.output[1];
    const result = { type: 'function_call_output', call_id: call.call_id, output: '[3,7]' };
    const next = await openai.responses.create({ ...request, input: [...input, ...first.output, result] });
    assert.equal(next.output[0].type, 'reasoning');
    // The control: without the reasoning item the turn is unsigned, and Anthropic refuses it.
    await assert.rejects(
      openai.responses.create({ ...request, input: [...input, call, result] }),
      (e) => e instanceof OpenAI.BadRequestError && /thinking/.test(e.message),
    );
  });

  test('@google/genai: the tagged thoughtSignature signs the tool turn', async () => {
    const genai = new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: gw.url } });
    const config = {
      thinkingConfig: { thinkingBudget: 2000, includeThoughts: true },
      tools: [{ functionDeclarations: [{ name: 'factor', parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER' } } } }] }],
    };
    const user = { role: 'user', parts: [{ text: 'Is 21 prime?' }] };
    const first = await genai.models.generateContent({ model: 'claude-tools', contents: [user], config });
    const parts = first.candidates[0].content.parts;
    assert.equal(parts[0].thought, true);
    assert.match(parts[0].thoughtSignature, /^anthropic:/);
    const call = parts.find((p) => p.functionCall).functionCall;
    const answer = { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { factors: [3, 7] } } }] };
    const next = await genai.models.generateContent({
      model: 'claude-tools', config, contents: [user, { role: 'model', parts }, answer],
    });
    assert.equal(next.candidates[0].content.parts[0].thought, true);
    await assert.rejects(
      genai.models.generateContent({
        model: 'claude-tools', config,
        contents: [user, { role: 'model', parts: parts.filter((p) => !p.thought) }, answer],
      }),
      (e) => e instanceof ApiError && e.status === 400 && /thinking/.test(e.message),
    );
  });
});
