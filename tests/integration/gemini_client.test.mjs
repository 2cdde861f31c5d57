// Gemini as a client API: the official `@google/genai` SDK (2.x, the newest major that runs on
// Node 20) -> Turnpike /v1beta/models/{model}:generateContent / :streamGenerateContent ->
// deployments of every upstream dialect (the mock provider speaks them all): plain, streamed,
// tools, and errors as the SDK's own ApiError. The key travels as x-goog-api-key.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError } from '@google/genai';
import {
  startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually,
} from './lib/harness.mjs';
import { DIALECTS } from './lib/dialects.mjs';

const TOKENS = 6;
const words = (text) => text.split(' ').filter(Boolean);
const tools = [{
  functionDeclarations: [{
    name: 'get_weather', description: 'Weather',
    parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } } },
  }],
}];


let gw;
let client;
before(async () => {
  const mock = await startMock(['--tokens', String(TOKENS)]);
  const toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  const failMock = await startMock(['--fail-rate', '1']);
  const models = {};
  for (const [dialect, make] of Object.entries(DIALECTS)) {
    models[`m-${dialect}`] = [make(mock)];
    models[`tools-${dialect}`] = [make(toolMock)];
    models[`failing-${dialect}`] = [make(failMock)];
  }
  gw = await startGateway(gatewayConfig({ routing: { max_attempts: 1 }, models }));
  client = new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: gw.url } });
});
after(stopAll);

for (const dialect of Object.keys(DIALECTS)) {
  describe(`@google/genai -> ${dialect} deployment`, () => {
    test('generateContent', async () => {
      const r = await client.models.generateContent({
        model: `m-${dialect}`, contents: 'Hi',
        config: { systemInstruction: 'Be brief.', temperature: 0.5, maxOutputTokens: 100 },
      });
      assert.equal(words(r.text).length, TOKENS);
      assert.equal(r.candidates[0].finishReason, 'STOP');
      assert.equal(r.usageMetadata.candidatesTokenCount, TOKENS);
      assert.ok(r.usageMetadata.promptTokenCount > 0);
    });

    test('generateContentStream', async () => {
      const stream = await client.models.generateContentStream({ model: `m-${dialect}`, contents: 'Hi' });
      let text = '';
      let chunks = 0;
      let last;
      for await (const chunk of stream) {
        chunks += 1;
        text += chunk.text ?? '';
        last = chunk;
      }
      assert.ok(chunks > 1, 'the answer arrives in several chunks');
      assert.equal(words(text).length, TOKENS);
      assert.equal(last.candidates[0].finishReason, 'STOP');
      assert.equal(last.usageMetadata.candidatesTokenCount, TOKENS);
    });

    test('a function call, then its response', async () => {
      const r = await client.models.generateContent({
        model: `tools-${dialect}`, contents: 'Weather in Paris?', config: { tools },
      });
      assert.equal(r.functionCalls.length, 1);
      assert.equal(r.functionCalls[0].name, 'get_weather');
      assert.deepEqual(r.functionCalls[0].args, { location: 'Paris' });
      // The model's turn goes back as it came (a Gemini upstream's thought signature with it).
      const next = await client.models.generateContent({
        model: `m-${dialect}`,
        config: { tools },
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          r.candidates[0].content,
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
        ],
      });
      assert.equal(words(next.text).length, TOKENS);
    });

    test('a streamed function call arrives whole', async () => {
      const stream = await client.models.generateContentStream({
        model: `tools-${dialect}`, contents: 'Weather in Paris?', config: { tools },
      });
      const calls = [];
      for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
      assert.equal(calls.length, 1);
      assert.equal(calls[0].name, 'get_weather');
      assert.deepEqual(calls[0].args, { location: 'Paris' });
    });

    test('an upstream failure is an ApiError', async () => {
      await assert.rejects(
        client.models.generateContent({ model: `failing-${dialect}`, contents: 'Hi' }),
        (e) => e instanceof ApiError && e.status >= 500,
      );
    });
  });
}

// Embeddings: the mock's vectors depend only on the text and the size, so every dialect that
// embeds gives the same numbers; Anthropic and the Responses API have no embeddings API (400).
const EMBEDDERS = ['openai', 'gemini', 'ollama', 'cohere'];
describe('@google/genai embedContent -> every dialect', () => {
  const embed = (dialect, contents) => client.models.embedContent({
    model: `m-${dialect}`, contents, config: { outputDimensionality: 8 },
  });
  test('the same vectors from every dialect that embeds (batchEmbedContents)', async () => {
    const reference = await embed('openai', ['hello', 'world']);
    assert.equal(reference.embeddings.length, 2);
    assert.equal(reference.embeddings[0].values.length, 8);
    assert.notDeepEqual(reference.embeddings[0].values, reference.embeddings[1].values);
    for (const dialect of EMBEDDERS) {
      const r = await embed(dialect, ['hello', 'world']);
      assert.deepEqual(r.embeddings.map((e) => e.values.map(Math.fround)),
        reference.embeddings.map((e) => e.values.map(Math.fround)), dialect);
    }
  });
  test(':embedContent (one content) answers one embedding', async () => {
    for (const dialect of EMBEDDERS) {
      const r = await fetch(`${gw.url}/v1beta/models/m-${dialect}:embedContent`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: { parts: [{ text: 'hello' }] }, outputDimensionality: 8 }),
      });
      assert.equal(r.status, 200, dialect);
      assert.equal((await r.json()).embedding.values.length, 8, dialect);
    }
  });
  test('a dialect without embeddings is a 400 ApiError', async () => {
    for (const dialect of ['anthropic', 'responses']) {
      await assert.rejects(embed(dialect, ['hello']), (e) => e instanceof ApiError && e.status === 400, dialect);
    }
  });
});

describe('@google/genai: the gateway\'s own answers', () => {
  test('an unknown model is a 404 ApiError', async () => {
    await assert.rejects(
      client.models.generateContent({ model: 'nope', contents: 'Hi' }),
      (e) => e instanceof ApiError && e.status === 404,
    );
  });

  test('a field no upstream can express is a 400 ApiError naming it', async () => {
    await assert.rejects(
      client.models.generateContent({ model: 'm-openai', contents: 'Hi', config: { topK: 3 } }),
      (e) => e instanceof ApiError && e.status === 400 && /topK/.test(e.message),
    );
  });

  test('bad JSON is a 400 in Gemini\'s error shape', async () => {
    const r = await fetch(`${gw.url}/v1beta/models/m-openai:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{',
    });
    assert.equal(r.status, 400);
    const body = await r.json();
    assert.equal(body.error.code, 400);
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
  });

  test('models.list and models.get', async () => {
    const names = [];
    for await (const model of await client.models.list()) names.push(model.name);
    assert.ok(names.includes('models/m-openai'));
    const one = await client.models.get({ model: 'm-gemini' });
    assert.equal(one.name, 'models/m-gemini');
  });
});

describe('@google/genai with governance', () => {
  test('the virtual key in x-goog-api-key is checked, the call logged under its route', async () => {
    const mock = await startMock(['--tokens', String(TOKENS)]);
    const { gw: governed, key, calls } = await startGovernedGateway({
      name: 'gemini-client',
      models: { m: [DIALECTS.openai(mock)] },
      prices: { 'gpt-up': { input: 1, output: 2, max_output_tokens: 1000 } },
    });
    const good = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: governed.url } });
    const r = await good.models.generateContent({ model: 'm', contents: 'Hi' });
    assert.equal(words(r.text).length, TOKENS);
    const bad = new GoogleGenAI({ apiKey: 'tp-wrong', httpOptions: { baseUrl: governed.url } });
    await assert.rejects(bad.models.generateContent({ model: 'm', contents: 'Hi' }),
      (e) => e instanceof ApiError && e.status === 401);
    // ?key= works too (the form older Gemini clients use).
    const viaQuery = await fetch(`${governed.url}/v1beta/models/m:generateContent?key=${key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(viaQuery.status, 200);
    const rows = await eventually(async () => {
      const x = (await calls()).filter((c) => c.status === 200);
      return x.length === 2 ? x : null;
    }, 5000);
    assert.ok(rows, 'two call-log rows');
    for (const row of rows) {
      assert.equal(row.model, 'm');
      assert.equal(row.completion_tokens, TOKENS);
    }
    const metrics = await (await fetch(`${governed.url}/metrics`)).text();
    assert.match(metrics, /route="gemini_generate_content"/);
  });
});
