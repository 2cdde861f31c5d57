// The Qdrant backend's mapping cache (src/doors/search/qdrant/mapping_cache.h), through real
// gateway replicas over one Qdrant fake: a warm search reads no collection before its legs
// (Qdrant calls counted per endpoint), and what another replica changes is seen: a field it
// added works at once, an index it deleted is a 404 at once, an index it re-created with a
// field retyped fails at most one search with a retryable 503 and is seen by `_count` after
// `search.qdrant.mapping_ttl`. The response cache is off here (it would answer repeats itself).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gatewayConfig, startGateway, stopAll, esRequest, sleep, adminOf } from './lib/harness.mjs';
import { needsQdrantOpenApi } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';

const { doc, skip } = needsQdrantOpenApi();
const TOKEN = 'test-admin-token';
const ENV = { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } };
const SHORT_TTL_MS = 300;  // replica C's mapping_ttl
const WARM_SEARCHES = 20;
let fake;
let a;  // mapping_ttl 60s: only the rules other than the ttl can refresh its entries
let b;  // the "other replica": it writes
let c;  // mapping_ttl 300ms
let off;  // mapping_ttl 0: no cache (the cost before)
let key;

const es = (g, method, route, body, ndjson = false) => esRequest(g, key, method, route, body, ndjson);

async function createIndex(g, index, properties, docs) {
  const made = await es(g, 'PUT', index, { mappings: { properties } });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const lines = docs.map((d, i) => `{"index":{"_id":"d${i}"}}\n${JSON.stringify(d)}\n`).join('');
  const bulk = await es(g, 'POST', `${index}/_bulk?refresh=true`, lines, true);
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));
}

const ids = (r) => r.body.hits.hits.map((h) => h._id).sort();

before(async () => {
  if (!doc) return;
  fake = await new QdrantFake({ doc }).listen();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-qdrant-mappings-'));
  const config = (ttl) => gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + `search:\n  backend: qdrant\n  cache: {enabled: false}\n  qdrant:\n    url: ${fake.url}\n    mapping_ttl: ${ttl}\n`;
  a = await startGateway(config('60s'), ENV);
  const admin = adminOf(a, TOKEN);
  await admin('plans/p1', {}, 'PUT');
  await admin('tenants', { id: 'm1', plan: 'p1' });
  key = (await admin('keys', { tenant: 'm1', name: 'k-m1' })).key;
  // The others read the tenant and key A wrote to the shared store.
  b = await startGateway(config('5s'), ENV);
  c = await startGateway(config(`${SHORT_TTL_MS}ms`), ENV);
  off = await startGateway(config('0s'), ENV);
});
after(async () => {
  await stopAll();
  if (fake) await fake.close();
});

// The door reads the index before every search: GET collection. The Cover leg reads it too
// (points and status fill `_shards`; it stays a leg). So a warm search costs one
// get_collection (its Cover leg) instead of two, and a warm _count none instead of one.
test('warm searches and counts read no collection before their legs', { skip }, async () => {
  await createIndex(b, 'warm', { tag: { type: 'keyword' }, n: { type: 'long' } },
    Array.from({ length: 30 }, (_, i) => ({ tag: i % 2 ? 'odd' : 'even', n: i })));
  const measure = async (g) => {
    // The first search may read the mapping (cold); the ones after it are warm.
    assert.equal((await es(g, 'POST', 'warm/_search', { query: { term: { n: 0 } } })).status, 200);
    const before = { info: fake.callsTo('get_collection'), all: fake.requests.length };
    for (let i = 0; i < WARM_SEARCHES; i++) {
      // Distinct queries (no response cache here anyway), with a total and a filter.
      const r = await es(g, 'POST', 'warm/_search', {
        query: { bool: { filter: [{ range: { n: { gte: i } } }] } }, track_total_hits: true,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.hits.total.value, 30 - i);
      assert.equal(r.body._shards.successful, 1);
    }
    const searches = {
      info: fake.callsTo('get_collection') - before.info, all: fake.requests.length - before.all,
    };
    const counted = { info: fake.callsTo('get_collection'), all: fake.requests.length };
    for (let i = 0; i < WARM_SEARCHES; i++) {
      const r = await es(g, 'POST', 'warm/_count', { query: { term: { n: i } } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.count, 1);
    }
    const counts = {
      info: fake.callsTo('get_collection') - counted.info, all: fake.requests.length - counted.all,
    };
    return { searches, counts };
  };
  const cached = await measure(a);
  const uncached = await measure(off);
  // Cached: only the Cover leg reads the collection.
  assert.equal(cached.searches.info, WARM_SEARCHES, 'one collection read per search (Cover)');
  assert.equal(cached.counts.info, 0, 'no collection read per _count');
  // Without the cache (mapping_ttl 0): one more read per search and per _count.
  assert.equal(uncached.searches.info, 2 * WARM_SEARCHES);
  assert.equal(uncached.counts.info, WARM_SEARCHES);
  assert.equal(uncached.searches.all - cached.searches.all, WARM_SEARCHES);
  assert.equal(uncached.counts.all - cached.counts.all, WARM_SEARCHES);
  // For docs/BENCHMARKS.md: Qdrant requests per warm search / count, with and without.
  console.log(`qdrant requests per warm _search: cached ${cached.searches.all / WARM_SEARCHES}, ` +
    `uncached ${uncached.searches.all / WARM_SEARCHES}; per warm _count: cached ` +
    `${cached.counts.all / WARM_SEARCHES}, uncached ${uncached.counts.all / WARM_SEARCHES}`);
});

test('own index writes drop the entry at once (PUT _mapping, DELETE, PUT on this replica)', { skip }, async () => {
  await createIndex(a, 'own', { tag: { type: 'keyword' } }, [{ tag: 'x' }]);
  assert.equal((await es(a, 'POST', 'own/_search', { query: { term: { tag: 'x' } } })).status, 200);
  const put = await es(a, 'PUT', 'own/_mapping', { properties: { size: { type: 'long' } } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const before = fake.callsTo('get_collection');
  const sized = await es(a, 'POST', 'own/_count', { query: { range: { size: { gte: 0 } } } });
  assert.equal(sized.status, 200, JSON.stringify(sized.body));
  // Read once after the write (no 400 and re-read: the write dropped the entry).
  assert.equal(fake.callsTo('get_collection') - before, 1);
  assert.equal((await es(a, 'DELETE', 'own')).status, 200);
  assert.equal((await es(a, 'POST', 'own/_count', {})).status, 404);
  await createIndex(a, 'own', { tag: { type: 'long' } }, [{ tag: 7 }]);
  const retyped = await es(a, 'POST', 'own/_search', { query: { term: { tag: 7 } } });
  assert.equal(retyped.status, 200, JSON.stringify(retyped.body));
  assert.deepEqual(ids(retyped), ['d0']);
});

test('a field added on replica B is usable on replica A at once', { skip }, async () => {
  await createIndex(b, 'grow', { tag: { type: 'keyword' } }, [{ tag: 'a' }, { tag: 'b' }]);
  // A caches the mapping without `color` and `size`.
  assert.equal((await es(a, 'POST', 'grow/_search', { query: { term: { tag: 'a' } } })).status, 200);
  assert.equal((await es(a, 'POST', 'grow/_count', { query: { term: { tag: 'a' } } })).status, 200);
  const put = await es(b, 'PUT', 'grow/_mapping', { properties: { color: { type: 'keyword' } } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const add = await es(b, 'PUT', 'grow/_doc/c1?refresh=true', { tag: 'c', color: 'red' });
  assert.equal(add.status, 201, JSON.stringify(add.body));
  const found = await es(a, 'POST', 'grow/_search', { query: { term: { color: 'red' } } });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  assert.deepEqual(ids(found), ['c1']);
  // The same through _count (no Cover leg there): a field added after A's last read.
  const put2 = await es(b, 'PUT', 'grow/_mapping', { properties: { size: { type: 'long' } } });
  assert.equal(put2.status, 200, JSON.stringify(put2.body));
  assert.equal((await es(b, 'PUT', 'grow/_doc/s1?refresh=true', { tag: 's', size: 4 })).status, 201);
  const counted = await es(a, 'POST', 'grow/_count', { query: { range: { size: { gte: 1 } } } });
  assert.equal(counted.status, 200, JSON.stringify(counted.body));
  assert.equal(counted.body.count, 1);
  // A field mapped nowhere is still a 400, after the one re-read.
  const before = fake.callsTo('get_collection');
  const unmapped = await es(a, 'POST', 'grow/_count', { query: { term: { nowhere: 'x' } } });
  assert.equal(unmapped.status, 400);
  assert.match(unmapped.body.error.reason, /nowhere/);
  assert.equal(fake.callsTo('get_collection') - before, 1, 're-read once before the 400');
});

test('an index deleted on replica B is a 404 on replica A at once', { skip }, async () => {
  for (const route of ['gone1/_search', 'gone2/_count']) {
    const index = route.split('/')[0];
    await createIndex(b, index, { tag: { type: 'keyword' } }, [{ tag: 'a' }]);
    assert.equal((await es(a, 'POST', route, { query: { term: { tag: 'a' } } })).status, 200);
    assert.equal((await es(b, 'DELETE', index)).status, 200);
    for (const again of [route, `${index}/_search`, `${index}/_count`]) {
      const r = await es(a, 'POST', again, { query: { term: { tag: 'a' } } });
      assert.equal(r.status, 404, `${again}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.type, 'index_not_found_exception');
    }
  }
});

// Deleted and re-created on B with `v` retyped keyword -> long. Under the old mapping A would
// send {"term":{"v":7}} as the keyword "7", which matches no integer payload: a wrong, empty
// 200. A's Cover leg sees another created_ms and a retyped field: that one search is a 503
// (the official clients retry it) and the next one is answered with the new mapping.
test('an index re-created on B with a retyped field: one retryable 503 on A, then right', { skip }, async () => {
  await createIndex(b, 'retyped', { v: { type: 'keyword' } }, [{ v: '7' }, { v: 'x' }]);
  const old = await es(a, 'POST', 'retyped/_search', { query: { term: { v: '7' } } });
  assert.deepEqual(ids(old), ['d0']);
  assert.equal((await es(b, 'DELETE', 'retyped')).status, 200);
  await createIndex(b, 'retyped', { v: { type: 'long' } }, [{ v: 7 }, { v: 7 }, { v: 8 }]);
  const first = await es(a, 'POST', 'retyped/_search', { query: { term: { v: 7 } } });
  assert.equal(first.status, 503, JSON.stringify(first.body));
  assert.equal(first.body.error.type, 'search_phase_execution_exception');
  assert.match(first.body.error.reason, /re-created with another mapping.*retry/);
  const second = await es(a, 'POST', 'retyped/_search', { query: { term: { v: 7 } } });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.deepEqual(ids(second), ['d0', 'd1']);
});

// _count runs no Cover leg: its bound is the ttl. C (300ms) counts right after it.
test('an index re-created on B with a retyped field: _count on C is right after the ttl', { skip }, async () => {
  await createIndex(b, 'ttl', { v: { type: 'keyword' } }, [{ v: '7' }]);
  const old = await es(c, 'POST', 'ttl/_count', { query: { term: { v: '7' } } });
  assert.equal(old.body.count, 1);
  assert.equal((await es(b, 'DELETE', 'ttl')).status, 200);
  await createIndex(b, 'ttl', { v: { type: 'long' } }, [{ v: 7 }, { v: 7 }]);
  await sleep(SHORT_TTL_MS + 100);
  const now = await es(c, 'POST', 'ttl/_count', { query: { term: { v: 7 } } });
  assert.equal(now.status, 200, JSON.stringify(now.body));
  assert.equal(now.body.count, 2);
});

test('every request the replicas sent and every answer follows Qdrant\'s OpenAPI document', { skip }, async () => {
  assert.ok(fake.requests.length > 0);
  assert.deepEqual(fake.violations, []);
});
