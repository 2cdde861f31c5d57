// POST /v1/embeddings end to end with the official `openai` SDK (6.x):
//   the SDK -> Turnpike /v1/embeddings -> a `provider: openai` deployment (identity: the
//   client's body with the model replaced, the answer untouched) or a `provider: ollama` one
//   (POST /api/embed, translated; base64 rendered by the gateway when the client asked for it).
// The mock provider's vectors are deterministic per input text, so the same text must give the
// same vector through both dialects and both encodings. The SDK asks for base64 when the caller
// names no encoding_format and decodes it (little-endian float32) itself.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import {
  startMock, startGateway, gatewayConfig, stopAll, eventually, mockStats,
} from './lib/harness.mjs';

const TEXT = 'The quick brown fox';
let mock;
let gw;
let client;
const ollama = (m, model = 'nomic-embed-text') => [{ provider: 'ollama', base_url: `http://127.0.0.1:${m.port}`, model }];
const openai = (m, model = 'text-embedding-3-small') => [{ provider: 'openai', base_url: `http://127.0.0.1:${m.port}/v1`, model }];
const cohere = (m, model = 'embed-v4.0') => [{ provider: 'cohere', base_url: `http://127.0.0.1:${m.port}`, api_key: 'co-test', model }];
const gemini = (m, model = 'gemini-embedding-001') => [{ provider: 'gemini', base_url: `http://127.0.0.1:${m.port}`, api_key: 'g-test', model }];
const anthropic = (m) => [{ provider: 'anthropic', base_url: `http://127.0.0.1:${m.port}`, model: 'claude-3-5-haiku-latest' }];

// Raw (no SDK) POST, to see exactly what the gateway answers.
async function post(body, headers = {}, url = gw.url) {
  const r = await fetch(`${url}/v1/embeddings`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

before(async () => {
  mock = await startMock();
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      'emb-openai': openai(mock),
      'emb-ollama': ollama(mock),
      'emb-missing': ollama(mock, 'nomic:missing'),
      'emb-cohere': cohere(mock),
      'emb-gemini': gemini(mock),
      'chat-anthropic': anthropic(mock),
    },
  }));
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(stopAll);

describe('openai deployment (identity)', () => {
  test('float and the SDK default (base64, decoded by the SDK) give the same vector', async () => {
    const floats = await client.embeddings.create({ model: 'emb-openai', input: TEXT, encoding_format: 'float' });
    assert.equal(floats.object, 'list');
    assert.equal(floats.model, 'text-embedding-3-small');
    assert.equal(floats.data.length, 1);
    assert.equal(floats.data[0].index, 0);
    assert.equal(floats.data[0].embedding.length, 1536);
    assert.ok(floats.usage.prompt_tokens > 0);

    const raw = await post({ model: 'emb-openai', input: TEXT, encoding_format: 'base64' });
    assert.equal(typeof raw.body.data[0].embedding, 'string', 'base64 reached the client as a string');

    const byDefault = await client.embeddings.create({ model: 'emb-openai', input: TEXT });
    assert.equal(byDefault.data[0].embedding.length, 1536);
    assert.deepEqual(byDefault.data[0].embedding, floats.data[0].embedding.map(Math.fround));
  });

  test('dimensions pass through', async () => {
    const r = await client.embeddings.create({ model: 'emb-openai', input: TEXT, dimensions: 8, encoding_format: 'float' });
    assert.equal(r.data[0].embedding.length, 8);
  });
});

describe('ollama deployment (/api/embed)', () => {
  test('float: the same vector as the openai deployment, usage from prompt_eval_count', async () => {
    const viaOllama = await client.embeddings.create({ model: 'emb-ollama', input: TEXT, encoding_format: 'float' });
    const viaOpenAi = await client.embeddings.create({ model: 'emb-openai', input: TEXT, encoding_format: 'float' });
    assert.equal(viaOllama.object, 'list');
    assert.equal(viaOllama.model, 'nomic-embed-text');
    assert.equal(viaOllama.data[0].object, 'embedding');
    assert.deepEqual(viaOllama.data[0].embedding, viaOpenAi.data[0].embedding);
    assert.ok(viaOllama.usage.prompt_tokens > 0);
    assert.equal(viaOllama.usage.total_tokens, viaOllama.usage.prompt_tokens);
  });

  test('base64 (the SDK default): rendered by the gateway, decoded by the SDK to the same floats', async () => {
    const raw = await post({ model: 'emb-ollama', input: TEXT, encoding_format: 'base64' });
    assert.equal(raw.status, 200);
    assert.equal(typeof raw.body.data[0].embedding, 'string');
    assert.equal(Buffer.from(raw.body.data[0].embedding, 'base64').length, 1536 * 4);

    const decoded = await client.embeddings.create({ model: 'emb-ollama', input: TEXT });
    const floats = await client.embeddings.create({ model: 'emb-ollama', input: TEXT, encoding_format: 'float' });
    assert.deepEqual(decoded.data[0].embedding, floats.data[0].embedding.map(Math.fround));
  });

  test('a batch: one vector per input, indexed in order, each the vector of its own text', async () => {
    const inputs = ['alpha', 'beta', 'gamma'];
    const batch = await client.embeddings.create({ model: 'emb-ollama', input: inputs, dimensions: 16 });
    assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
    for (const [i, text] of inputs.entries()) {
      const single = await client.embeddings.create({ model: 'emb-openai', input: text, dimensions: 16 });
      assert.deepEqual(batch.data[i].embedding, single.data[0].embedding, `input ${i}`);
    }
    assert.notDeepEqual(batch.data[0].embedding, batch.data[1].embedding);
  });

  test('token inputs cannot reach Ollama: 400 naming input', async () => {
    await assert.rejects(client.embeddings.create({ model: 'emb-ollama', input: [[1, 2, 3]] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
  });

  test('an Ollama error (model not pulled) in OpenAI\'s shape', async () => {
    const r = await post({ model: 'emb-missing', input: TEXT });
    assert.equal(r.status, 404);
    assert.match(r.body.error.message, /not found/);
  });
});

describe('cohere deployment (/v2/embed)', () => {
  test('float and the SDK default (base64): the same vectors as the openai deployment, billed tokens as usage', async () => {
    const inputs = ['alpha', 'beta'];
    const floats = await client.embeddings.create({ model: 'emb-cohere', input: inputs, encoding_format: 'float', dimensions: 32 });
    const decoded = await client.embeddings.create({ model: 'emb-cohere', input: inputs, dimensions: 32 });
    assert.equal(floats.object, 'list');
    assert.equal(floats.model, 'embed-v4.0', 'Cohere names no model: the deployment\'s is used');
    assert.deepEqual(floats.data.map((d) => d.index), [0, 1]);
    for (const [i, text] of inputs.entries()) {
      const single = await client.embeddings.create({ model: 'emb-openai', input: text, dimensions: 32, encoding_format: 'float' });
      assert.deepEqual(floats.data[i].embedding, single.data[0].embedding, `input ${i}`);
      assert.deepEqual(decoded.data[i].embedding, floats.data[i].embedding.map(Math.fround), `input ${i}`);
    }
    assert.ok(floats.usage.prompt_tokens > 0);
  });

  test('what Cohere cannot express is a 400 naming the field', async () => {
    await assert.rejects(client.embeddings.create({ model: 'emb-cohere', input: [1, 2, 3] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
    await assert.rejects(client.embeddings.create({ model: 'emb-cohere', input: Array(97).fill('x') }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input' && /96/.test(e.message));
    await assert.rejects(client.embeddings.create({ model: 'emb-cohere', input: 'x', user: 'u1' }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'user');
  });
});

describe('gemini deployment (:batchEmbedContents)', () => {
  test('float and the SDK default (base64): the same vectors as the openai deployment; Gemini counts no tokens', async () => {
    const inputs = ['alpha', 'beta'];
    const floats = await client.embeddings.create({ model: 'emb-gemini', input: inputs, encoding_format: 'float', dimensions: 32 });
    const decoded = await client.embeddings.create({ model: 'emb-gemini', input: inputs, dimensions: 32 });
    assert.equal(floats.model, 'gemini-embedding-001');
    assert.deepEqual(floats.data.map((d) => d.index), [0, 1]);
    for (const [i, text] of inputs.entries()) {
      const single = await client.embeddings.create({ model: 'emb-openai', input: text, dimensions: 32, encoding_format: 'float' });
      assert.deepEqual(floats.data[i].embedding, single.data[0].embedding, `input ${i}`);
      assert.deepEqual(decoded.data[i].embedding, floats.data[i].embedding.map(Math.fround), `input ${i}`);
    }
    assert.equal(floats.usage.prompt_tokens, 0, 'not reported by Gemini (billing uses a flagged estimate)');
  });

  test('token inputs cannot reach Gemini: 400 naming input', async () => {
    await assert.rejects(client.embeddings.create({ model: 'emb-gemini', input: [[1, 2], [3]] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
  });
});

describe('errors', () => {
  test('bad input: openai.BadRequestError naming the param; no upstream call', async () => {
    const before = (await mockStats(mock)).requests;
    await assert.rejects(client.embeddings.create({ model: 'emb-openai', input: '' }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
    await assert.rejects(client.embeddings.create({ model: 'emb-openai', input: [1, 'x'] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'input[1]');
    const r = await post({ model: 'emb-ollama', input: 'x', encoding_format: 'hex' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.param, 'encoding_format');
    assert.equal(r.body.error.type, 'invalid_request_error');
    assert.equal((await mockStats(mock)).requests, before);
  });

  test('a model whose dialect has no embeddings API: 400 naming model', async () => {
    await assert.rejects(client.embeddings.create({ model: 'chat-anthropic', input: TEXT }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'model' && /does not support embeddings/.test(e.message));
  });

  test('an unknown model: 404; GET: 405', async () => {
    await assert.rejects(client.embeddings.create({ model: 'nope', input: TEXT }), (e) => e instanceof OpenAI.NotFoundError);
    const r = await fetch(`${gw.url}/v1/embeddings`);
    assert.equal(r.status, 405);
  });

  test('an upstream 500 is retried on the next deployment (failover as for chat)', async () => {
    const failMock = await startMock(['--fail-rate', '1']);
    const fo = await startGateway(gatewayConfig({
      routing: { max_attempts: 2, backoff_base: '1ms' },
      models: { 'emb': [...ollama(failMock), ...ollama(mock)].map((d, i) => ({ ...d, weight: i === 0 ? 1000000 : 1 })) },
    }));
    const r = await post({ model: 'emb', input: TEXT }, {}, fo.url);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await mockStats(failMock)).requests >= 1, true);
  });
});

describe('governance', () => {
  const TOKEN = 'test-admin-token';
  // 1000 USD per million input tokens: 1000 micro-USD a token, so costs are exact integers.
  const PRICE = { input: 1000, output: 0, max_output_tokens: 1 };
  let gov;
  let govMock;

  async function admin(method, route, body) {
    const r = await fetch(`${gov.url}/admin/v1/${route}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  }
  async function keyFor(tenant, plan) {
    assert.equal((await admin('PUT', `plans/p-${tenant}`, plan)).status, 200);
    assert.equal((await admin('POST', 'tenants', { id: tenant, plan: `p-${tenant}` })).status, 201);
    const created = await admin('POST', 'keys', { tenant, name: 'test' });
    assert.equal(created.status, 201);
    return created.body.key;
  }
  async function calls(tenant, n) {
    return eventually(async () => {
      const r = await admin('GET', `calls?limit=100&tenant=${tenant}`);
      return r.body.data.length >= n ? r.body.data : null;
    }, 5000);
  }

  before(async () => {
    govMock = await startMock();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-emb-'));
    gov = await startGateway(gatewayConfig({
      models: {
        'emb-priced': ollama(govMock, 'text-embedding-3-small'),
        'emb-unpriced': openai(govMock, 'mystery-embed'),
        'emb-gemini': gemini(govMock, 'text-embedding-3-small'),
      },
      governance: { enabled: true, reconcile_interval: '0s' },
      store: { path: path.join(dir, 'turnpike.db') },
      call_log: { flush_interval: '50ms' },
      prices: { 'text-embedding-3-small': PRICE },
    }), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  });

  test('no key: 401 before any upstream call', async () => {
    const r = await post({ model: 'emb-priced', input: TEXT }, {}, gov.url);
    assert.equal(r.status, 401);
    assert.equal((await mockStats(govMock)).requests, 0);
  });

  test('the call log row has the prompt tokens and the cost; an unpriced model is flagged, not $0', async () => {
    const secret = await keyFor('t-log', {});
    const sdk = new OpenAI({ baseURL: `${gov.url}/v1`, apiKey: secret, maxRetries: 0 });
    const priced = await sdk.embeddings.create({ model: 'emb-priced', input: ['one', 'two'] });
    assert.equal(priced.data.length, 2);
    const unpriced = await sdk.embeddings.create({ model: 'emb-unpriced', input: 'three' });
    const rows = await calls('t-log', 2);
    assert.ok(rows, 'two call-log rows');
    const row = rows.find((r) => r.model === 'emb-priced');
    assert.equal(row.status, 200);
    assert.equal(row.prompt_tokens, priced.usage.prompt_tokens);
    assert.equal(row.completion_tokens, 0);
    assert.equal(Math.round(row.cost_usd * 1e6), priced.usage.prompt_tokens * 1000);
    assert.equal(row.unpriced, false);
    assert.equal(row.estimated, false);
    const other = rows.find((r) => r.model === 'emb-unpriced');
    assert.equal(other.prompt_tokens, unpriced.usage.prompt_tokens);
    assert.equal(other.unpriced, true);
  });

  test('a provider that counts no tokens (Gemini): billed from the estimate, flagged estimated', async () => {
    const secret = await keyFor('t-estimate', {});
    const sdk = new OpenAI({ baseURL: `${gov.url}/v1`, apiKey: secret, maxRetries: 0 });
    const answer = await sdk.embeddings.create({ model: 'emb-gemini', input: 'some text to embed' });
    assert.equal(answer.data.length, 1);
    const rows = await calls('t-estimate', 1);
    assert.ok(rows, 'one call-log row');
    assert.equal(rows[0].status, 200);
    assert.equal(rows[0].estimated, true, JSON.stringify(rows[0]));
    assert.ok(rows[0].prompt_tokens > 0, JSON.stringify(rows[0]));
    assert.equal(Math.round(rows[0].cost_usd * 1e6), rows[0].prompt_tokens * 1000, JSON.stringify(rows[0]));
  });

  test('an exhausted budget: 429 insufficient_quota with no upstream call', async () => {
    // 0.05 USD holds a couple of these requests (each reserves ceil(body bytes / 3) tokens).
    const secret = await keyFor('t-budget', { monthly_budget_usd: 0.05 });
    let ok = 0;
    let refused = null;
    const before = (await mockStats(govMock)).requests;
    for (let i = 0; i < 20 && !refused; ++i) {
      const r = await post({ model: 'emb-priced', input: `${TEXT} ${i}` }, { authorization: `Bearer ${secret}` }, gov.url);
      if (r.status === 200) ++ok;
      else refused = r;
    }
    assert.ok(ok >= 1, 'the budget admitted some requests first');
    assert.ok(refused, 'the budget ran out');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.type, 'insufficient_quota');
    assert.equal((await mockStats(govMock)).requests - before, ok, 'the refused request never reached the provider');
    const spend = (await admin('GET', 'spend?tenant=t-budget')).body.data.find((s) => s.scope === 'tenant');
    assert.ok(spend.spent_usd <= 0.05 && spend.spent_usd > 0);
    assert.equal(spend.reserved_usd, 0);
  });

  test('RPM applies to embeddings', async () => {
    const secret = await keyFor('t-rpm', { rpm: 2 });
    const auth = { authorization: `Bearer ${secret}` };
    assert.equal((await post({ model: 'emb-priced', input: TEXT }, auth, gov.url)).status, 200);
    assert.equal((await post({ model: 'emb-priced', input: TEXT }, auth, gov.url)).status, 200);
    const r = await post({ model: 'emb-priced', input: TEXT }, auth, gov.url);
    assert.equal(r.status, 429);
    assert.equal(r.body.error.type, 'rate_limit_error');
  });
});
