// The search door on the Qdrant backend, through the real binary and the Qdrant fake: the API
// key from the environment, the Qdrant calls each search costs (counted), tenant isolation,
// the refusal of what Qdrant cannot do, deadlines and an unreachable Qdrant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gatewayConfig, startGateway, stopAll, esRequest, adminOf } from './lib/harness.mjs';
import { needsQdrantOpenApi } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';

const { doc, skip } = needsQdrantOpenApi();
const TOKEN = 'test-admin-token';
const QDRANT_KEY = 'qdrant-secret';
let fake;
let gw;
const keys = {};

const es = (tenant, method, route, body, ndjson = false) =>
  esRequest(gw, keys[tenant], method, route, body, ndjson);

before(async () => {
  if (!doc) return;
  fake = await new QdrantFake({ doc, apiKey: QDRANT_KEY }).listen();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-qdrant-'));
  const config = gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + `search:\n  backend: qdrant\n  timeout: 500ms\n  qdrant:\n    url: ${fake.url}\n    api_key: \${QDRANT_KEY}\n    max_candidates: 50\n`;
  gw = await startGateway(config, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN, QDRANT_KEY } });
  const admin = adminOf(gw, TOKEN);
  await admin('plans/p1', {}, 'PUT');
  for (const t of ['t1', 't2']) {
    await admin('tenants', { id: t, plan: 'p1' });
    keys[t] = (await admin('keys', { tenant: t, name: `k-${t}` })).key;
  }
  const created = await es('t1', 'PUT', 'books', {
    mappings: { properties: { tag: { type: 'keyword' }, n: { type: 'long' }, title: { type: 'text' } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines = Array.from({ length: 60 }, (_, i) =>
    `{"index":{"_id":"b${i}"}}\n${JSON.stringify({ tag: i % 2 ? 'odd' : 'even', n: i % 7, title: `book ${i}` })}\n`);
  const bulk = await es('t1', 'POST', 'books/_bulk', lines.join(''), true);
  assert.equal(bulk.body.errors, false);
});
after(async () => {
  await stopAll();
  if (fake) await fake.close();
});

test('the API key reaches Qdrant, with a deadline, and every request and answer follows the schema', { skip }, async () => {
  assert.ok(fake.requests.length > 0);
  assert.deepEqual(fake.violations, []);
  // Every call but a GET carries Qdrant's own deadline (search.timeout 500ms -> 1 s).
  const writes = fake.requests.filter((q) => q.method !== 'GET');
  assert.ok(writes.length > 0);
  for (const q of writes) assert.match(q.path, /[?&]timeout=1$/, q.path);
});

// Qdrant calls per search, by the path they take (qdrant_backend.h): the door's read of the
// index is answered by the mapping cache (the bulk above read it), and count, cover and the
// page run concurrently. Cold and warm mapping reads: search_qdrant_mappings.test.mjs.
test('a sorted, filtered search with an exact total: its Qdrant calls, counted', { skip }, async () => {
  const before = fake.requests.length;
  const r = await es('t1', 'POST', 'books/_search', {
    query: { bool: { filter: [{ term: { tag: 'odd' } }] } }, sort: [{ n: 'asc' }], size: 5,
    track_total_hits: true,
  });
  assert.equal(r.status, 200);
  assert.equal(r.body.hits.total.value, 30);
  assert.deepEqual(r.body.hits.hits.map((h) => h._id), ['b21', 'b35', 'b49', 'b7', 'b1']);
  const calls = fake.requests.slice(before).map((q) => `${q.method} ${q.path.replace(/\?.*/, '').split('/').slice(3).join('/') || 'collection'}`).sort();
  // cover (collection info); order_by page + the tie boundary + the page's sources; count.
  assert.deepEqual(calls, ['GET collection', 'POST points', 'POST points/count',
    'POST points/scroll', 'POST points/scroll']);
});

test('another tenant cannot see the index', { skip }, async () => {
  const r = await es('t2', 'POST', 'books/_search', {});
  assert.equal(r.status, 404);
  assert.equal(r.body.error.type, 'index_not_found_exception');
  const d = await es('t2', 'GET', 'books/_doc/b1');
  assert.equal(d.status, 404);
});

test('what Qdrant cannot do is a 400 naming it', { skip }, async () => {
  const prefix = await es('t1', 'POST', 'books/_search', { query: { bool: { filter: [{ prefix: { title: 'boo' } }] } } });
  assert.equal(prefix.status, 400);
  assert.match(prefix.body.error.reason, /prefix on a text field is not supported by the qdrant backend/);
  const ranked = await es('t1', 'POST', 'books/_search', {
    query: { bool: { should: [{ term: { tag: 'odd' } }, { term: { n: 3 } }] } },
  });
  assert.equal(ranked.status, 400);
  assert.match(ranked.body.error.reason, /ranking by bool should clauses/);
  const bm25 = await es('t1', 'POST', 'books/_search', { query: { match: { title: 'book' } } });
  assert.equal(bm25.status, 400);
  assert.match(bm25.body.error.reason, /BM25/);
  // The same queries in a filter are answered.
  const filtered = await es('t1', 'POST', 'books/_search', {
    query: { bool: { filter: [{ match: { title: 'book' } }], should: [{ term: { n: 3 } }], minimum_should_match: 1 } },
    sort: [{ n: 'asc' }], size: 3,
  });
  assert.equal(filtered.status, 200, JSON.stringify(filtered.body));
  assert.deepEqual(filtered.body.hits.hits.map((h) => h._id), ['b10', 'b17', 'b24']);
  // More matching documents than max_candidates (50) for a gateway-side sort.
  const many = await es('t1', 'POST', 'books/_search', { sort: [{ tag: 'asc' }] });
  assert.equal(many.status, 400);
  assert.match(many.body.error.reason, /more than 50 matching documents/);
});

// The index's mapping is cached (warm), so every leg misses the deadline: ES's partial answer
// (search_join.h), or a 504 when the request refuses partial results. A cold index read that
// misses it is a 504 timeout_exception (the index is another tenant's: read, not cached).
test('a Qdrant slower than the search timeout: a partial answer, or 504', { skip }, async () => {
  const query = { query: { term: { tag: 'odd' } } };
  // Warm (another body: the response cache would answer the same one).
  assert.equal((await es('t1', 'POST', 'books/_search', { query: { term: { tag: 'even' } } })).status, 200);
  fake.delayMs = 1500;
  try {
    const r = await es('t1', 'POST', 'books/_search', query);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.timed_out, true);
    assert.deepEqual(r.body.hits.hits, []);
    assert.equal(r.body._shards.failed, 1);
    const strict = await es('t1', 'POST', 'books/_search?allow_partial_search_results=false', query);
    assert.equal(strict.status, 504, JSON.stringify(strict.body));
    assert.equal(strict.body.error.type, 'search_phase_execution_exception');
    const cold = await es('t2', 'POST', 'books/_search', query);
    assert.equal(cold.status, 504, JSON.stringify(cold.body));
    assert.equal(cold.body.error.type, 'timeout_exception');
  } finally {
    fake.delayMs = 0;
  }
});

test('an unreachable Qdrant: 503 with Retry-After (the last test: it stops the fake)', { skip }, async () => {
  await fake.close();
  const r = await es('t1', 'POST', 'books/_search', {});
  assert.equal(r.status, 503);
  assert.equal(r.retryAfter, '1');
  assert.match(r.body.error.reason, /qdrant unreachable/);
});
