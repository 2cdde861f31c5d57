// Token counts, the calls agent tools make before every turn:
//   `@anthropic-ai/sdk` messages.countTokens -> POST /v1/messages/count_tokens
//   `@google/genai` models.countTokens       -> POST /v1beta/models/{model}:countTokens
// A model with a deployment of the client's dialect forwards the call there (the mock counts
// body bytes / 4); any other model is answered from the gateway's estimate (ceil(body bytes /
// 3)), marked `x-turnpike-token-count: estimate`. Governed: the key is checked, the call counts
// for RPM and writes a call-log row, and costs nothing.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, ApiError } from '@google/genai';
import { startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually, mockStats } from './lib/harness.mjs';
import { DIALECTS } from './lib/dialects.mjs';

const MOCK_BYTES_PER_TOKEN = 4;
const ESTIMATE_BYTES_PER_TOKEN = 3;
let gw;
let mock;
before(async () => {
  mock = await startMock(['--tokens', '3']);
  gw = await startGateway(gatewayConfig({
    models: {
      claude: [DIALECTS.anthropic(mock)],
      gem: [DIALECTS.gemini(mock)],
      gpt: [DIALECTS.openai(mock)],
      // Only the Anthropic deployment can count for an Anthropic client, wherever it is listed.
      mixed: [DIALECTS.openai(mock), DIALECTS.anthropic(mock)],
      ...Object.fromEntries(Object.entries(DIALECTS).map(([d, make]) => [`m-${d}`, [make(mock)]])),
    },
  }));
});
after(stopAll);

async function post(path, body, headers = {}) {
  const text = JSON.stringify(body);
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
  return { status: r.status, header: r.headers.get('x-turnpike-token-count'), body: await r.json(), bytes: Buffer.byteLength(text) };
}

describe('Anthropic count_tokens', () => {
  const client = () => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const request = { model: 'claude', messages: [{ role: 'user', content: 'How many tokens is this?' }] };

  test('forwarded to an Anthropic deployment (the SDK reads the answer)', async () => {
    const { data, response } = await client().messages.countTokens(request).withResponse();
    assert.ok(data.input_tokens > 0);
    assert.equal(response.headers.get('x-turnpike-token-count'), 'upstream');
    const before = (await mockStats(mock)).requests;
    const raw = await post('/v1/messages/count_tokens', { ...request, model: 'mixed' });
    assert.equal(raw.status, 200);
    assert.equal(raw.header, 'upstream');
    assert.equal((await mockStats(mock)).requests, before + 1);
  });

  test('answered from the estimate for a model with no Anthropic deployment', async () => {
    const { data, response } = await client().messages.countTokens({ ...request, model: 'gpt' }).withResponse();
    assert.equal(response.headers.get('x-turnpike-token-count'), 'estimate');
    assert.ok(data.input_tokens > 0);
    const before = (await mockStats(mock)).requests;
    const raw = await post('/v1/messages/count_tokens', { ...request, model: 'gpt' });
    assert.equal(raw.body.input_tokens, Math.ceil(raw.bytes / ESTIMATE_BYTES_PER_TOKEN));
    assert.equal((await mockStats(mock)).requests, before, 'no upstream call');
  });

  test('bad input and unknown models in Anthropic\'s error shape', async () => {
    await assert.rejects(client().messages.countTokens({ ...request, model: 'nope' }),
      (e) => e instanceof Anthropic.NotFoundError);
    const bad = await post('/v1/messages/count_tokens', { model: 'claude', messages: 'x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.type, 'error');
  });
});

describe('Gemini countTokens', () => {
  const client = () => new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: gw.url } });
  const contents = [{ role: 'user', parts: [{ text: 'How many tokens is this?' }] }];

  test('forwarded to a Gemini deployment', async () => {
    const r = await client().models.countTokens({ model: 'gem', contents });
    assert.ok(r.totalTokens > 0);
    const raw = await post('/v1beta/models/gem:countTokens', { contents });
    assert.equal(raw.header, 'upstream');
    assert.equal(raw.body.totalTokens, Math.floor(raw.bytes / MOCK_BYTES_PER_TOKEN));
  });

  test('answered from the estimate for a model with no Gemini deployment', async () => {
    const r = await client().models.countTokens({ model: 'claude', contents });
    assert.ok(r.totalTokens > 0);
    const raw = await post('/v1beta/models/claude:countTokens', { contents });
    assert.equal(raw.header, 'estimate');
    assert.equal(raw.body.totalTokens, Math.ceil(raw.bytes / ESTIMATE_BYTES_PER_TOKEN));
  });

  test('errors are ApiErrors in Gemini\'s shape', async () => {
    await assert.rejects(client().models.countTokens({ model: 'nope', contents }),
      (e) => e instanceof ApiError && e.status === 404);
    const r = await fetch(`${gw.url}/v1beta/models/gem:countTokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error.status, 'INVALID_ARGUMENT');
  });
});

describe('both SDKs against a deployment of every dialect', () => {
  test('forwarded only to the client\'s own dialect, estimated for the others', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const genai = new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: gw.url } });
    for (const dialect of Object.keys(DIALECTS)) {
      const { data, response } = await anthropic.messages.countTokens({
        model: `m-${dialect}`, messages: [{ role: 'user', content: 'Hi' }],
      }).withResponse();
      assert.ok(data.input_tokens > 0, dialect);
      assert.equal(response.headers.get('x-turnpike-token-count'), dialect === 'anthropic' ? 'upstream' : 'estimate');
      const r = await genai.models.countTokens({ model: `m-${dialect}`, contents: 'Hi' });
      assert.ok(r.totalTokens > 0, dialect);
      const raw = await post(`/v1beta/models/m-${dialect}:countTokens`, { contents: [{ parts: [{ text: 'Hi' }] }] });
      assert.equal(raw.header, dialect === 'gemini' ? 'upstream' : 'estimate', dialect);
    }
  });
});

describe('count calls under governance', () => {
  test('the key is checked; the call counts for RPM, is logged, and costs nothing', async () => {
    const m = await startMock(['--tokens', '3']);
    const { gw: governed, key, admin, calls } = await startGovernedGateway({
      name: 'count-tokens',
      models: { claude: [DIALECTS.anthropic(m)], gpt: [DIALECTS.openai(m)] },
      prices: { 'claude-up': { input: 1000, output: 1000, max_output_tokens: 1000 }, 'gpt-up': { input: 1000, output: 1000, max_output_tokens: 1000 } },
    });
    const r = await admin('PUT', 'plans/p1', { rpm: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const count = (model, k = key) => fetch(`${governed.url}/v1/messages/count_tokens`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': k },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal((await count('claude', 'tp-wrong')).status, 401);
    assert.equal((await count('claude')).status, 200);  // forwarded
    assert.equal((await count('gpt')).status, 200);     // estimated
    const gemini = await fetch(`${governed.url}/v1beta/models/gpt:countTokens?key=${key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(gemini.status, 200);
    assert.equal((await count('claude')).status, 429, 'the fourth call in the minute is over rpm 3');
    const rows = await eventually(async () => {
      const x = (await calls()).filter((c) => c.status === 200);
      return x.length === 3 ? x : null;
    }, 5000);
    assert.ok(rows, 'three call-log rows');
    for (const row of rows) assert.equal(row.cost_usd, 0, JSON.stringify(row));
  });
});
