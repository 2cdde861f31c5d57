// The LLM response cache (src/doors/llm/response_cache.h, cache_filter.h) from outside: the
// official openai and @anthropic-ai/sdk clients against a governed gateway over the mock
// provider, whose /mock/stats counts the upstream calls a hit or a coalesced request did not make.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  startMock, startGateway, gatewayConfig, startGovernedGateway, stopAll, mockStats, metricsOf,
  eventually, sleep, adminOf,
} from './lib/harness.mjs';
import { startRedis } from './lib/redis.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres, needsRedis } from './lib/requires.mjs';

const redises = [];
after(async () => {
  await stopAll();
  for (const r of redises) r.proc.kill('SIGKILL');
  stopAllPostgres();
});

const PRICES = {
  chat: { input: 1, output: 2, max_output_tokens: 1000 },
  claude: { input: 3, output: 15, max_output_tokens: 1000 },
};

async function cachedGateway(name, { mockFlags = [], sections = {} } = {}) {
  const mock = await startMock(['--tokens', '6', ...mockFlags]);
  const base = `http://127.0.0.1:${mock.port}`;
  const g = await startGovernedGateway({
    name,
    models: {
      chat: [`${base}/v1`],
      claude: [{ provider: 'anthropic', base_url: base, api_key: 'sk-ant-test' }],
    },
    prices: PRICES,
    sections: { llm_cache: { enabled: true }, ...sections },
  });
  return { ...g, mock, base };
}

const upstreamCalls = async (mock) => (await mockStats(mock)).requests;

// A chat completion through fetch: { status, cache (the header), body (parsed) }.
async function chat(gw, key, body, headers = {}) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, cache: r.headers.get('x-turnpike-cache'), text, body: JSON.parse(text) };
}

const question = (extra = {}) => ({
  model: 'chat', messages: [{ role: 'user', content: 'What is a turnpike?' }], ...extra,
});

describe('exact mode', () => {
  test('a miss, then hits in both forms with the openai client; what it saved; the call log', async () => {
    const { gw, key, mock, calls } = await cachedGateway('llm-cache-exact');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const before = await upstreamCalls(mock);
    const first = await client.chat.completions.create(question()).withResponse();
    assert.equal(first.response.headers.get('x-turnpike-cache'), 'miss');
    const second = await client.chat.completions.create(question()).withResponse();
    assert.equal(second.response.headers.get('x-turnpike-cache'), 'hit');
    assert.deepEqual(second.data, first.data, 'the stored answer, as it came');
    assert.equal(await upstreamCalls(mock), before + 1, 'one upstream call');

    // The same entry replayed as a stream, in the chat API's chunking, usage on request.
    const stream = await client.chat.completions
      .create({ ...question(), stream: true, stream_options: { include_usage: true } })
      .withResponse();
    assert.equal(stream.response.headers.get('x-turnpike-cache'), 'hit');
    let text = '';
    let usage = null;
    for await (const chunk of stream.data) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, first.data.choices[0].message.content);
    assert.equal(usage?.completion_tokens, first.data.usage.completion_tokens);
    assert.equal(await upstreamCalls(mock), before + 1);

    // A streamed miss serves a later whole request.
    const streamedFirst = await client.chat.completions
      .create({ ...question({ temperature: 0.5 }), stream: true }).withResponse();
    assert.equal(streamedFirst.response.headers.get('x-turnpike-cache'), 'miss');
    let streamedText = '';
    for await (const chunk of streamedFirst.data) streamedText += chunk.choices[0]?.delta?.content ?? '';
    const whole = await client.chat.completions.create(question({ temperature: 0.5 })).withResponse();
    assert.equal(whole.response.headers.get('x-turnpike-cache'), 'hit');
    assert.equal(whole.data.choices[0].message.content, streamedText);
    assert.equal(await upstreamCalls(mock), before + 2);

    const rows = await eventually(async () => {
      const all = await calls();
      return all.length === 5 && all;
    });
    assert.ok(rows, 'five call-log rows');
    assert.equal(rows.filter((c) => c.cache === 'hit').length, 3);
    for (const hit of rows.filter((c) => c.cache === 'hit')) {
      assert.equal(hit.cost_usd, 0, 'a hit bills nothing');
      assert.equal(hit.completion_tokens, 0);
    }
    assert.ok(rows.some((c) => c.cache === 'miss' && c.cost_usd > 0));
    const metrics = await metricsOf(gw);
    assert.equal(metrics['turnpike_cache_hits_total{cache="llm"}'], 3);
    assert.ok(metrics['turnpike_cache_saved_usd_total{cache="llm"}'] > 0);
  });

  test('the key is the request: reordered keys and numbers hit, any output field misses', async () => {
    const { gw, key, mock } = await cachedGateway('llm-cache-keys');
    const a = await chat(gw, key, '{"model":"chat","temperature":1,"messages":[{"role":"user","content":"hi"}]}');
    assert.equal(a.cache, 'miss');
    const reordered = await chat(gw, key,
      '{ "messages": [ {"content":"hi", "role":"user"} ], "temperature": 1.0, "model": "chat", "stream": false, "user": "u-7" }');
    assert.equal(reordered.cache, 'hit', 'key order, spacing, 1 vs 1.0 and stream/user do not count');
    assert.equal(reordered.text, a.text);
    for (const changed of [
      { temperature: 0.9 }, { top_p: 0.5 }, { seed: 3 }, { stop: ['x'] }, { max_tokens: 5 },
      { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] },
      { response_format: { type: 'json_object' } },
      { messages: [{ role: 'user', content: 'hi!' }] },
    ]) {
      const r = await chat(gw, key, { model: 'chat', temperature: 1, messages: [{ role: 'user', content: 'hi' }], ...changed });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.cache, 'miss', JSON.stringify(changed));
    }
    assert.equal((await mockStats(mock)).requests, 9);
  });

  test('Cache-Control and x-turnpike-cache-ttl; a bad TTL is a 400 in OpenAI\'s shape', async () => {
    const { gw, key } = await cachedGateway('llm-cache-headers');
    const body = question({ seed: 11 });
    assert.equal((await chat(gw, key, body, { 'cache-control': 'no-store' })).cache, 'miss');
    assert.equal((await chat(gw, key, body)).cache, 'miss', 'no-store stored nothing');
    assert.equal((await chat(gw, key, body)).cache, 'hit');
    assert.equal((await chat(gw, key, body, { 'cache-control': 'no-cache' })).cache, 'miss',
      'no-cache skips the lookup');
    assert.equal((await chat(gw, key, body, { 'cache-control': 'no-cache, no-store' })).cache, 'bypass');

    const short = question({ seed: 12 });
    assert.equal((await chat(gw, key, short, { 'x-turnpike-cache-ttl': '1' })).cache, 'miss');
    assert.equal((await chat(gw, key, short)).cache, 'hit');
    await sleep(1100);
    assert.equal((await chat(gw, key, short)).cache, 'miss', 'expired after its TTL');
    assert.equal((await chat(gw, key, question({ seed: 13 }), { 'x-turnpike-cache-ttl': '0' })).cache, 'miss');
    assert.equal((await chat(gw, key, question({ seed: 13 }))).cache, 'miss', 'TTL 0 stores nothing');

    const bad = await chat(gw, key, body, { 'x-turnpike-cache-ttl': 'soon' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'x-turnpike-cache-ttl');
  });

  test('tenants never share entries; a plan scopes them to the key, turns the cache off; a key opts out', async () => {
    const { gw, key, admin } = await cachedGateway('llm-cache-tenants');
    const ok = async (status, call) => {
      const r = await call;
      assert.equal(r.status, status, JSON.stringify(r.body));
      return r.body;
    };
    const body = question({ seed: 21 });
    assert.equal((await chat(gw, key, body)).cache, 'miss');
    assert.equal((await chat(gw, key, body)).cache, 'hit');

    await ok(200, admin('PUT', 'plans/scoped', { cache: 'on', cache_scope: 'key' }));
    await ok(201, admin('POST', 'tenants', { id: 't2', plan: 'p1' }));
    const other = (await ok(201, admin('POST', 'keys', { tenant: 't2' }))).key;
    const sameTenant = (await ok(201, admin('POST', 'keys', { tenant: 't1' }))).key;
    const noCache = await ok(201, admin('POST', 'keys', { tenant: 't1', cache: false }));
    assert.equal(noCache.cache, false);
    await eventually(async () => (await chat(gw, other, body)).status === 200, 5000);
    assert.equal((await chat(gw, other, body)).cache, 'hit', 'tenant t2 has its own entry now');
    assert.equal((await chat(gw, sameTenant, body)).cache, 'hit', 'shared within the tenant');
    assert.equal((await chat(gw, noCache.key, body)).cache, 'bypass');

    await ok(201, admin('POST', 'tenants', { id: 't3', plan: 'scoped' }));
    const k3a = (await ok(201, admin('POST', 'keys', { tenant: 't3' }))).key;
    const k3b = (await ok(201, admin('POST', 'keys', { tenant: 't3' }))).key;
    await eventually(async () => (await chat(gw, k3a, body)).status === 200, 5000);
    assert.equal((await chat(gw, k3a, body)).cache, 'hit');
    assert.equal((await chat(gw, k3b, body)).cache, 'miss', 'scoped to the key');

    const plan = await ok(200, admin('PUT', 'plans/p1', { cache: 'off' }));
    assert.equal(plan.cache, 'off');
    assert.ok(await eventually(async () => (await chat(gw, key, body)).cache === null, 5000),
      'the plan turned it off: no header');
    const bad = await admin('PUT', 'plans/p9', { cache: 'sometimes' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.field, 'cache');
  });

  test('the anthropic client: a hit, replayed as a stream of Anthropic events', async () => {
    const { gw, key, mock } = await cachedGateway('llm-cache-anthropic');
    const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const ask = { model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] };
    const before = await upstreamCalls(mock);
    const first = await client.messages.create(ask).withResponse();
    assert.equal(first.response.headers.get('x-turnpike-cache'), 'miss');
    const again = await client.messages.create(ask).withResponse();
    assert.equal(again.response.headers.get('x-turnpike-cache'), 'hit');
    assert.deepEqual(again.data, first.data);
    const stream = client.messages.stream(ask);
    const final = await stream.finalMessage();
    assert.equal(final.content[0].text, first.data.content[0].text);
    assert.equal(await upstreamCalls(mock), before + 1);
  });
});

describe('coalescing', () => {
  test('50 identical streams make one upstream call; each gets the whole, identical stream', async () => {
    const { gw, key, mock } = await cachedGateway('llm-cache-coalesce', {
      mockFlags: ['--inter-token', '40ms', '--first-token-delay', '200ms'],
    });
    const body = JSON.stringify({ ...question({ seed: 31 }), stream: true });
    const open = () => fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body,
    });
    const before = await upstreamCalls(mock);
    const leader = open();
    await sleep(50);
    const responses = await Promise.all([leader, ...Array.from({ length: 49 }, open)]);
    const statuses = responses.map((r) => r.headers.get('x-turnpike-cache'));
    const texts = await Promise.all(responses.map((r) => r.text()));
    assert.equal(await upstreamCalls(mock), before + 1, 'one upstream call');
    assert.equal(statuses.filter((s) => s === 'miss').length, 1, statuses.join());
    assert.equal(statuses.filter((s) => s === 'coalesced').length, 49, statuses.join());
    for (const t of texts) {
      assert.equal(t, texts[0], 'every follower gets the same events');
      assert.match(t, /data: \[DONE\]/);
    }
    // Just after the last event: an entry, not a second call.
    assert.equal((await chat(gw, key, question({ seed: 31 }))).cache, 'hit');
    assert.equal(await upstreamCalls(mock), before + 1);
    const metrics = await metricsOf(gw);
    assert.equal(metrics['turnpike_cache_coalesced_total{cache="llm"}'], 49);
  });

  test('a follower that leaves or reads slowly, and a leader that leaves, affect no one else', async () => {
    const { gw, key, mock } = await cachedGateway('llm-cache-leave', {
      mockFlags: ['--inter-token', '60ms', '--first-token-delay', '150ms'],
    });
    const body = JSON.stringify({ ...question({ seed: 41 }), stream: true });
    const open = (signal) => fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body,
    });
    const before = await upstreamCalls(mock);
    const leaderAbort = new AbortController();
    const leader = await open(leaderAbort.signal);
    const quitterAbort = new AbortController();
    const quitter = await open(quitterAbort.signal);
    const slow = await open();
    const steady = await open();
    assert.equal(quitter.headers.get('x-turnpike-cache'), 'coalesced');
    // The leader and one follower leave after their first bytes.
    await leader.body.getReader().read();
    leaderAbort.abort();
    await quitter.body.getReader().read();
    quitterAbort.abort();
    // One follower does not read for a while; the other reads at once.
    const steadyText = await steady.text();
    await sleep(300);
    const slowText = await slow.text();
    assert.equal(slowText, steadyText);
    assert.match(steadyText, /data: \[DONE\]/);
    assert.equal(await upstreamCalls(mock), before + 1);
    // The call finished for its followers: the answer was stored.
    assert.equal((await chat(gw, key, question({ seed: 41 }))).cache, 'hit');
  });
});

describe('two replicas over one Redis', { skip: needsRedis() || needsPostgres() }, () => {
  test('share entries through the L2; with Redis down the cache is skipped and requests served', async () => {
    const redis = await startRedis();
    redises.push(redis);
    const pg = await startPostgres();
    const mock = await startMock(['--tokens', '6']);
    const base = `http://127.0.0.1:${mock.port}`;
    const replica = () => startGateway(gatewayConfig({
      models: { chat: [`${base}/v1`] },
      governance: { enabled: true, reconcile_interval: '0s' },
      store: { engine: 'postgres', url: pg.url },
      prices: PRICES,
      sections: { llm_cache: { enabled: true }, redis: { url: redis.url, command_timeout: '300ms' } },
    }), { env: { TURNPIKE_ADMIN_TOKEN: 'test-admin-token' } });
    const a = await replica();
    const b = await replica();
    const admin = adminOf(a, 'test-admin-token');
    await admin('plans/p1', {}, 'PUT');
    await admin('tenants', { id: 't1', plan: 'p1' });
    const { key } = await admin('keys', { tenant: 't1' });
    await eventually(async () => (await chat(b, key, question({ seed: 50 }))).status === 200, 8000);

    const body = question({ seed: 51 });
    const before = await upstreamCalls(mock);
    const entries = () => redis.cli(['KEYS', 'tp:cache:llm:e:*']).trim().split('\n').filter(Boolean);
    // The warm-up's own entry (seed 50), written by B, has landed before counting.
    assert.ok(await eventually(async () => entries().length >= 1));
    const stored = entries().length;
    assert.equal((await chat(a, key, body)).cache, 'miss');
    // The L2 write is off the client's path: it lands a moment after the answer.
    assert.ok(await eventually(async () => entries().length === stored + 1), 'written to Redis');
    assert.equal((await chat(b, key, body)).cache, 'hit', 'the other replica hits through the L2');
    assert.equal(await upstreamCalls(mock), before + 1);

    const gone = new Promise((resolve) => redis.proc.once('exit', resolve));
    redis.proc.kill('SIGKILL');
    await gone;
    const down = await chat(b, key, question({ seed: 52 }));
    assert.equal(down.status, 200, down.text);
    assert.equal(down.cache, 'miss');
    assert.ok(await eventually(async () =>
      (await metricsOf(b))['turnpike_cache_l2_errors_total{cache="llm"}'] >= 1));
  });
});

describe('semantic mode', () => {
  // The embeddings come from a second mock in bag-of-words mode (src/mock/embeddings.h), so the
  // chat mock's /mock/stats counts chat calls only and the embeddings mock's counts embeddings.
  const ask = (content) => ({ model: 'chat', messages: [{ role: 'user', content }] });
  const QUESTION = 'Please tell me what the capital city of France is';
  // 10 words of 11 shared: cosine 10 / sqrt(110) = 0.9535 with the mock's words vectors.
  const NEAR = 'Please tell me what the capital city of France is today';

  test('a near-duplicate hits above the plan\'s threshold; other questions, tenants and plans miss', async () => {
    const chatMock = await startMock(['--tokens', '6']);
    const embedMock = await startMock(['--embeddings', 'words']);
    const { gw, key, admin, calls } = await startGovernedGateway({
      name: 'llm-cache-semantic',
      models: { chat: [`http://127.0.0.1:${chatMock.port}/v1`], emb: [`http://127.0.0.1:${embedMock.port}/v1`] },
      prices: PRICES,
      sections: { llm_cache: { enabled: true, semantic: '{model: emb, max_entries: 100}' } },
    });
    const ok = async (status, call) => {
      const r = await call;
      assert.equal(r.status, status, JSON.stringify(r.body));
      return r.body;
    };
    const plan = await ok(200, admin('PUT', 'plans/p1', { cache_semantic: 0.9 }));
    assert.equal(plan.cache_semantic, 0.9);
    for (const bad of [1.5, -0.1, 'high', true]) {
      const r = await admin('PUT', 'plans/bad', { cache_semantic: bad });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error.field, 'cache_semantic');
    }
    const chats = async () => (await mockStats(chatMock)).requests;
    const embeds = async () => (await mockStats(embedMock)).requests;

    const first = await chat(gw, key, ask(QUESTION));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.cache, 'miss');
    assert.equal(await chats(), 1);
    assert.equal(await embeds(), 1, 'the miss embedded its question');

    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask(NEAR)),
    });
    const near = await r.json();
    assert.equal(r.headers.get('x-turnpike-cache'), 'hit');
    assert.equal(r.headers.get('x-turnpike-cache-similarity'), '0.9535');
    assert.equal(near.choices[0].message.content, first.body.choices[0].message.content);
    assert.equal(near.id, first.body.id, 'the stored answer');
    assert.equal(await chats(), 1, 'no upstream chat call for the near-duplicate');
    assert.equal(await embeds(), 2);

    const unrelated = await chat(gw, key, ask('Recommend a good pizza recipe for dinner'));
    assert.equal(unrelated.cache, 'miss');
    assert.equal(await chats(), 2);
    // The same question after another system prompt is another context: a miss.
    const otherContext = await chat(gw, key, {
      model: 'chat', messages: [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: NEAR }],
    });
    assert.equal(otherContext.cache, 'miss');
    assert.equal(await chats(), 3);

    // Another tenant on the same plan: its own namespace.
    await ok(201, admin('POST', 'tenants', { id: 't2', plan: 'p1' }));
    const otherTenant = (await ok(201, admin('POST', 'keys', { tenant: 't2' }))).key;
    assert.ok(await eventually(async () => (await chat(gw, otherTenant, ask('warm up'))).status === 200, 5000));
    assert.equal((await chat(gw, otherTenant, ask(NEAR))).cache, 'miss', 'tenants never share');

    // A plan without semantic mode: exact lookups only, nothing embedded.
    await ok(200, admin('PUT', 'plans/exact', { cache: 'on' }));
    await ok(201, admin('POST', 'tenants', { id: 't3', plan: 'exact' }));
    const exactKey = (await ok(201, admin('POST', 'keys', { tenant: 't3' }))).key;
    assert.ok(await eventually(async () => (await chat(gw, exactKey, ask('warm up'))).status === 200, 5000));
    const embedsBefore = await embeds();
    assert.equal((await chat(gw, exactKey, ask(QUESTION))).cache, 'miss');
    assert.equal((await chat(gw, exactKey, ask(NEAR))).cache, 'miss', 'no semantic lookup');
    const exactHit = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${exactKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask(QUESTION)),
    });
    assert.equal(exactHit.headers.get('x-turnpike-cache'), 'hit');
    assert.equal(exactHit.headers.get('x-turnpike-cache-similarity'), null);
    await exactHit.text();
    assert.equal(await embeds(), embedsBefore);

    const metrics = await metricsOf(gw);
    assert.equal(metrics.turnpike_cache_semantic_hits_total, 1);
    assert.equal(metrics['turnpike_cache_semantic_similarity_bucket{le="0.95"}'], 0);
    assert.equal(metrics['turnpike_cache_semantic_similarity_bucket{le="0.97"}'], 1);
    assert.equal(metrics['turnpike_cache_semantic_embeddings_total{result="failed"}'], 0);

    // The embeddings deployment down: a plain miss, counted, never the client's error.
    embedMock.kill('SIGKILL');
    const down = await chat(gw, key, ask('What is the tallest mountain in Europe'));
    assert.equal(down.status, 200, down.text);
    assert.equal(down.cache, 'miss');
    const after = await metricsOf(gw);
    assert.equal(after['turnpike_cache_semantic_embeddings_total{result="failed"}'], 1);

    const rows = await eventually(async () => {
      const all = await calls();
      return all.some((c) => c.cache === 'hit') && all;
    });
    assert.ok(rows, 'call-log rows');
    const hitRow = rows.find((c) => c.cache === 'hit');
    assert.equal(hitRow.cost_usd, 0, 'a semantic hit bills nothing');
  });
});
