// The search door's response cache (search.cache; README "Search"): X-Cache hit/miss/bypass
// through the official Elasticsearch clients, `took` re-stamped, invalidation by every kind of
// write, tenant isolation through the cache, `now`-relative and failed requests never cached,
// the `es_cache` Server-Timing phase, allocations per hit (counted, as allocations.test.mjs),
// single flight (concurrent misses compute once), and two replicas over the Qdrant fake and
// one redis-server: a write on replica A invalidates the answer replica B cached.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as Client8 } from 'es8';
import { Client as Client9 } from 'es9';
import { startGateway, gatewayConfig, stopAll, esRequest } from './lib/harness.mjs';
import { needsQdrantOpenApi, needsRedis } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';
import { startRedis, stopRedis } from './lib/redis.mjs';

const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
const CACHE = '  cache: {enabled: true, max_bytes: 4MiB, tenant_max_bytes: 1MiB, ttl: 60s}\n';
// Recorded budget (hot-path rule 2): heap allocations per warm cache hit, whole process,
// governance on (key check, RPM, one call-log row). Measured 2026-12-01: 21.42 (the key's
// parse is in a stack buffer; the canonical text, the key's strings, the re-stamped body and
// the request's own costs remain). Since coroutine frames count (2026-12-07, allocations.test.mjs:
// the build takes them from operator new): 32.45. A cold search costs ~57 (search.test.mjs).
const ALLOCATIONS_PER_HIT = 33.5;
const HITS_MEASURED = 500;

let gw;
const keys = {};

async function admin(g, method, route, body) {
  const r = await fetch(`${g.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status >= 300) throw new Error(`admin ${route}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

async function provision(g, tenants) {
  await admin(g, 'PUT', 'plans/p1', {});
  for (const tenant of tenants) {
    await admin(g, 'POST', 'tenants', { id: tenant, plan: 'p1' });
    keys[tenant] = (await admin(g, 'POST', 'keys', { tenant, name: `k-${tenant}` })).key;
  }
}

// One raw request: status, X-Cache, Server-Timing and the parsed body.
const es = (g, tenant, method, route, body, ndjson = false) =>
  esRequest(g, keys[tenant], method, route, body, ndjson);

async function allocations(g) {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  const m = /^turnpike_allocations_total (\d+)$/m.exec(text);
  return m ? Number(m[1]) : null;
}

async function metric(g, name) {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

const MAPPINGS = {
  properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' }, at: { type: 'date' } },
};

async function seed(g, tenant, index, count, tagOf) {
  const created = await es(g, tenant, 'PUT', index, { mappings: MAPPINGS });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines = Array.from({ length: count }, (_, i) =>
    `{"index":{"_id":"d${i}"}}\n${JSON.stringify({ title: `doc ${i}`, tag: tagOf(i), n: i, at: '2020-01-01T00:00:00Z' })}\n`);
  const bulk = await es(g, tenant, 'POST', `${index}/_bulk?refresh=true`, lines.join(''), true);
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));
}

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-search-cache-'));
  const config = gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    server: { server_timing: true },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + `search:\n  path: ${path.join(dir, 'search.db')}\n${CACHE}`;
  gw = await startGateway(config, ENV);
  await provision(gw, ['t1', 't2']);
  await seed(gw, 't1', 'books', 20, (i) => (i % 2 ? 'odd' : 'even'));
  await seed(gw, 't2', 'books', 6, () => 'odd');  // same index name, other documents
});
after(stopAll);

const ODD = { query: { term: { tag: 'odd' } }, sort: [{ n: 'asc' }], track_total_hits: true };

test('miss, then hit with the same body and took re-stamped; request_cache=false bypasses', async () => {
  const q = { query: { term: { tag: 'even' } }, sort: [{ n: 'desc' }], size: 3 };
  const first = await es(gw, 't1', 'POST', 'books/_search', q);
  assert.equal(first.status, 200);
  assert.equal(first.cache, 'miss');
  const second = await es(gw, 't1', 'POST', 'books/_search', q);
  assert.equal(second.cache, 'hit');
  assert.equal(typeof second.body.took, 'number');
  assert.deepEqual({ ...second.body, took: 0 }, { ...first.body, took: 0 });
  // Keys in another order and the defaults spelled out are the same request.
  const reordered = await es(gw, 't1', 'POST', 'books/_search',
    { size: 3, from: 0, sort: [{ n: 'desc' }], query: { term: { tag: 'even' } } });
  assert.equal(reordered.cache, 'hit');
  const bypass = await es(gw, 't1', 'POST', 'books/_search?request_cache=false', q);
  assert.equal(bypass.cache, 'bypass');
  assert.deepEqual({ ...bypass.body, took: 0 }, { ...first.body, took: 0 });
  // A URL option is part of the key.
  const smaller = await es(gw, 't1', 'POST', 'books/_search?size=1', q);
  assert.equal(smaller.cache, 'miss');
  assert.equal(smaller.body.hits.hits.length, 1);
  // _count is cached apart from _search.
  assert.equal((await es(gw, 't1', 'POST', 'books/_count', { query: q.query })).cache, 'miss');
  const counted = await es(gw, 't1', 'POST', 'books/_count', { query: q.query });
  assert.equal(counted.cache, 'hit');
  assert.equal(counted.body.count, 10);
  // The phase shows in Server-Timing.
  assert.match(String(second.timing), /es_cache;dur=/);
});

test('the official clients see X-Cache (es8 and es9)', async () => {
  for (const Client of [Client8, Client9]) {
    const client = new Client({ node: `${gw.url}/es`, auth: { apiKey: keys.t1 } });
    const body = { query: { range: { n: { gte: Client === Client8 ? 8 : 9 } } } };
    const a = await client.search({ index: 'books', ...body }, { meta: true });
    const b = await client.search({ index: 'books', ...body }, { meta: true });
    assert.equal(a.headers['x-cache'], 'miss');
    assert.equal(b.headers['x-cache'], 'hit');
    assert.deepEqual(b.body.hits, a.body.hits);
    const c = await client.search({ index: 'books', request_cache: false, ...body }, { meta: true });
    assert.equal(c.headers['x-cache'], 'bypass');
  }
});

test('every write invalidates the index: doc index, delete, update, bulk, refresh, mapping', async () => {
  const total = async () => {
    const r = await es(gw, 't1', 'POST', 'books/_search', ODD);
    return { cache: r.cache, total: r.body.hits.total.value };
  };
  await total();
  assert.deepEqual(await total(), { cache: 'hit', total: 10 });
  assert.equal((await es(gw, 't1', 'PUT', 'books/_doc/x1?refresh=true', { tag: 'odd', n: 100 })).status, 201);
  assert.deepEqual(await total(), { cache: 'miss', total: 11 });
  assert.deepEqual(await total(), { cache: 'hit', total: 11 });
  await es(gw, 't1', 'POST', 'books/_update/x1?refresh=true', { doc: { tag: 'even' } });
  assert.deepEqual(await total(), { cache: 'miss', total: 10 });
  await es(gw, 't1', 'POST', '_bulk?refresh=true', '{"index":{"_index":"books","_id":"x2"}}\n{"tag":"odd","n":101}\n', true);
  assert.deepEqual(await total(), { cache: 'miss', total: 11 });
  await es(gw, 't1', 'DELETE', 'books/_doc/x2?refresh=true');
  assert.deepEqual(await total(), { cache: 'miss', total: 10 });
  await total();
  await es(gw, 't1', 'POST', 'books/_refresh');
  assert.equal((await total()).cache, 'miss');
  await total();
  assert.equal((await es(gw, 't1', 'PUT', 'books/_mapping', { properties: { extra: { type: 'keyword' } } })).status, 200);
  assert.equal((await total()).cache, 'miss');
  // A read does not invalidate.
  await es(gw, 't1', 'GET', 'books/_doc/d1');
  await es(gw, 't1', 'GET', 'books/_mapping');
  assert.equal((await total()).cache, 'hit');
});

test('tenant isolation through the cache: same index name, same query, own answer', async () => {
  const a = await es(gw, 't1', 'POST', 'books/_search', ODD);
  const a2 = await es(gw, 't1', 'POST', 'books/_search', ODD);
  assert.equal(a2.cache, 'hit');
  const b = await es(gw, 't2', 'POST', 'books/_search', ODD);
  assert.equal(b.cache, 'miss');
  assert.equal(b.body.hits.total.value, 6);
  assert.notEqual(a.body.hits.total.value, 6);
  assert.equal((await es(gw, 't2', 'POST', 'books/_search', ODD)).body.hits.total.value, 6);
  // A write by tenant B leaves A's entry alone.
  await es(gw, 't2', 'PUT', 'books/_doc/y?refresh=true', { tag: 'odd', n: 1 });
  assert.equal((await es(gw, 't1', 'POST', 'books/_search', ODD)).cache, 'hit');
  assert.equal((await es(gw, 't2', 'POST', 'books/_search', ODD)).body.hits.total.value, 7);
});

test('now-relative date math is never cached', async () => {
  // Answered (date math resolves against the request's `now`), never looked up nor stored.
  const q = { query: { bool: { filter: [{ range: { at: { lte: 'now-1d/d' } } }] } } };
  const misses = await metric(gw, 'turnpike_cache_misses_total{cache="search"}');
  for (let i = 0; i < 2; i++) {
    const r = await es(gw, 't1', 'POST', 'books/_search', q);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.hits.total.value, 20);
    assert.equal(r.cache, 'bypass', JSON.stringify(r.body));
  }
  assert.equal(await metric(gw, 'turnpike_cache_misses_total{cache="search"}'), misses);
});

test('errors are never cached', async () => {
  for (let i = 0; i < 2; i++) {
    const missing = await es(gw, 't1', 'POST', 'nope/_search', { query: { match_all: {} } });
    assert.equal(missing.status, 404);
    assert.equal(missing.cache, 'miss');
    const bad = await es(gw, 't1', 'POST', 'books/_search', { query: { no_such_query: {} } });
    assert.equal(bad.status, 400);
    assert.equal(bad.cache, 'miss');
  }
  // Created afterwards, the index answers (no cached 404).
  await seed(gw, 't1', 'nope', 1, () => 'odd');
  const found = await es(gw, 't1', 'POST', 'nope/_search', { query: { match_all: {} } });
  assert.equal(found.status, 200);
  assert.equal(found.body.hits.total.value, 1);
});

test('msearch: each search goes through the cache', async () => {
  const body = '{"index":"books"}\n{"query":{"term":{"tag":"odd"}}}\n{"index":"books"}\n{"size":1}\n';
  const first = await es(gw, 't1', 'POST', '_msearch', body, true);
  assert.equal(first.status, 200);
  const second = await es(gw, 't1', 'POST', '_msearch', body, true);
  assert.equal(second.cache, 'hit');
  assert.deepEqual(second.body.responses.map((r) => r.hits.total.value),
    first.body.responses.map((r) => r.hits.total.value));
  const mixed = '{"index":"books","request_cache":false}\n{"size":1}\n{"index":"books"}\n{"size":1}\n';
  assert.equal((await es(gw, 't1', 'POST', '_msearch', mixed, true)).cache, 'miss');
  const wrong = await es(gw, 't1', 'POST', '_msearch', '{"index":"books","request_cache":"no"}\n{}\n', true);
  assert.equal(wrong.body.responses[0].status, 400);
  assert.match(wrong.body.responses[0].error.reason, /request_cache\] must be a boolean/);
});

test('single flight: concurrent misses of one key compute it once', async () => {
  const q = { query: { range: { n: { gte: 3 } } }, sort: [{ n: 'asc' }], track_total_hits: true };
  const misses = await metric(gw, 'turnpike_cache_misses_total{cache="search"}');
  const answers = await Promise.all(Array.from({ length: 20 }, () => es(gw, 't1', 'POST', 'books/_search', q)));
  assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
  assert.equal(answers.filter((a) => a.cache === 'miss').length, 1);
  assert.equal((await metric(gw, 'turnpike_cache_misses_total{cache="search"}')) - misses, 1);
  const totals = new Set(answers.map((a) => a.body.hits.total.value));
  assert.equal(totals.size, 1);
});

test('allocations per warm cache hit stay within budget', async (t) => {
  if ((await allocations(gw)) === null) {
    t.skip('this build does not count allocations (sanitizer build)');
    return;
  }
  const q = { query: { term: { tag: 'odd' } }, size: 5 };
  for (let i = 0; i < 50; i++) await es(gw, 't1', 'POST', 'books/_search', q);
  const hitsBefore = await metric(gw, 'turnpike_cache_hits_total{cache="search"}');
  const before = await allocations(gw);
  for (let i = 0; i < HITS_MEASURED; i++) await es(gw, 't1', 'POST', 'books/_search', q);
  const perHit = ((await allocations(gw)) - before) / HITS_MEASURED;
  const hits = (await metric(gw, 'turnpike_cache_hits_total{cache="search"}')) - hitsBefore;
  console.log(`allocations per search cache hit: ${perHit.toFixed(2)} (${hits} hits)`);
  assert.equal(hits, HITS_MEASURED);
  assert.ok(perHit <= ALLOCATIONS_PER_HIT, `${perHit} allocations per hit > ${ALLOCATIONS_PER_HIT}`);
});

// Two replicas over one Qdrant (the fake) and one redis-server: the L2 holds entries and
// generations, so a write on A invalidates what B cached.
const { doc: qdrantDoc, skip: qdrantSkip } = needsQdrantOpenApi();
test('two replicas: a write on A invalidates the answer B cached (Qdrant fake + Redis L2)',
  { skip: qdrantSkip || needsRedis() }, async () => {
    const fake = await new QdrantFake({ doc: qdrantDoc }).listen();
    const redis = await startRedis();
    try {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-search-cache-fleet-'));
      const config = gatewayConfig({
        models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
        governance: { enabled: true, reconcile_interval: '0s' },
        store: { path: path.join(dir, 'turnpike.db') },
        call_log: { flush_interval: '50ms' },
      }) + `redis:\n  url: ${redis.url}\nsearch:\n  backend: qdrant\n  qdrant:\n    url: ${fake.url}\n${CACHE}`;
      const a = await startGateway(config, ENV);
      await provision(a, ['f1']);
      const b = await startGateway(config, ENV);  // reads the tenants A wrote to the store
      await seed(a, 'f1', 'shared', 10, (i) => (i % 2 ? 'odd' : 'even'));
      const q = { query: { term: { tag: 'odd' } }, track_total_hits: true };
      const before = fake.requests.length;
      const onB = await es(b, 'f1', 'POST', 'shared/_search', q);
      assert.equal(onB.status, 200, JSON.stringify(onB.body));
      assert.equal(onB.cache, 'miss');
      assert.equal(onB.body.hits.total.value, 5);
      const onA = await es(a, 'f1', 'POST', 'shared/_search', q);
      assert.equal(onA.cache, 'hit', 'A is served what B cached (L2)');
      const queried = fake.requests.length;
      assert.ok(queried > before);
      // Recorded cost of a hit with the L2: one Redis command (MGET of generation and entry).
      const gets = `turnpike_redis_commands_total{op="cache_get"}`;
      const getsBefore = await metric(b, gets);
      for (let i = 0; i < 10; i++) {
        assert.equal((await es(b, 'f1', 'POST', 'shared/_search', q)).cache, 'hit');
      }
      assert.equal((await metric(b, gets)) - getsBefore, 10, 'one MGET per hit');
      assert.equal(fake.requests.length, queried, 'a hit asks Qdrant nothing');
      assert.ok(Number(redis.cli(['DBSIZE']).trim()) >= 2, 'entries and generations live in Redis');
      const put = await es(a, 'f1', 'PUT', 'shared/_doc/new?refresh=true', { tag: 'odd', n: 99 });
      assert.equal(put.status, 201, JSON.stringify(put.body));
      const after = await es(b, 'f1', 'POST', 'shared/_search', q);
      assert.equal(after.cache, 'miss', 'the write on A invalidated B');
      assert.equal(after.body.hits.total.value, 6);
    } finally {
      await stopAll();
      await stopRedis(redis);
      await fake.close();
    }
  });
