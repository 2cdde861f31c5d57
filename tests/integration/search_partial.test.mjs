// The search door's partial answers and date math (issue 17), through the real binary:
// - over the Qdrant fake, one endpoint held back (QdrantFake.hold) far past the request's
//   `timeout`, so which leg misses it does not depend on the machine's speed: a count
//   leg slower than the request's `timeout` gives the hits, `timed_out: true` and a `gte`
//   total; a slow page gives no hits and the total; a failed coverage leg is a failed shard
//   in `_shards.failures`; none of them is cached (a following identical request is computed
//   again, and with a Redis L2 nothing reaches Redis); `allow_partial_search_results=false` is
//   a 504; the official clients (es8, es9)
//   read the partial answer without throwing;
// - on the embedded backend: `timeout: "1nanos"` (a deadline that has passed before the
//   engine thread takes the legs) gives the same partial answer;
// - date math in range bounds on both backends, with the same hits; `now`-relative requests
//   bypass the cache every time; bad date math and bad time units are ES-shaped 400s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as Client8, errors as errors8 } from 'es8';
import { Client as Client9, errors as errors9 } from 'es9';
import { gatewayConfig, startGateway, stopAll, esRequest, adminOf } from './lib/harness.mjs';
import { needsQdrantOpenApi, needsRedis } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';
import { startRedis, stopRedis } from './lib/redis.mjs';

const { doc, skip } = needsQdrantOpenApi();
const TOKEN = 'test-admin-token';
const CACHE = '  cache: {enabled: true, max_bytes: 4MiB, tenant_max_bytes: 1MiB, ttl: 60s}\n';
// A held Qdrant answer waits HELD_MS; the searches ask for TIMEOUT, with room for the legs
// that are not held to answer in time even in a sanitizer build on a loaded machine.
const HELD_MS = 1500;
const TIMEOUT = '400ms';
const DAY = 86_400_000;
let fake;
const gws = {};  // backend -> {gw, key}

// Documents: 'old' 3 days ago, 'recent' 12 hours ago, 'future' in 2 days (relative to the
// wall clock when seeded), and 20 numbered ones in 2020.
function documents() {
  const now = Date.now();
  const iso = (ms) => new Date(ms).toISOString();
  const docs = [
    ['old', { tag: 'odd', n: 100, at: iso(now - 3 * DAY) }],
    ['recent', { tag: 'odd', n: 101, at: iso(now - DAY / 2) }],
    ['future', { tag: 'odd', n: 102, at: iso(now + 2 * DAY) }],
  ];
  for (let i = 0; i < 20; i++) {
    docs.push([`d${i}`, { tag: i % 2 ? 'odd' : 'even', n: i, at: `2020-0${1 + (i % 3)}-1${i % 10}T00:00:00Z` }]);
  }
  return docs;
}

// `name`: the gateway's key in gws; `redis`: a redis.url (the cache's L2).
async function start(backend, root, { name = backend, tenant = 't1', redis } = {}) {
  const dir = path.join(root, name);
  mkdirSync(dir);
  const search = (redis ? `redis:\n  url: ${redis}\n` : '') + (backend === 'qdrant'
    ? `search:\n  backend: qdrant\n  timeout: 5s\n  qdrant:\n    url: ${fake.url}\n${CACHE}`
    : `search:\n  path: ${path.join(dir, 'search.db')}\n${CACHE}`);
  const gw = await startGateway(gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    server: { server_timing: true },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + search, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  const admin = adminOf(gw, TOKEN);
  await admin('plans/p1', {}, 'PUT');
  await admin('tenants', { id: tenant, plan: 'p1' });
  const key = (await admin('keys', { tenant, name: 'k' })).key;
  gws[name] = { gw, key };
  const created = await es(name, 'PUT', 'books', {
    mappings: { properties: { tag: { type: 'keyword' }, n: { type: 'long' }, at: { type: 'date' } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines = documents().map(([id, d]) => `{"index":{"_id":"${id}"}}\n${JSON.stringify(d)}\n`);
  const bulk = await es(name, 'POST', 'books/_bulk?refresh=true', lines.join(''), true);
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));
}

const es = (backend, method, route, body, ndjson = false) =>
  esRequest(gws[backend].gw, gws[backend].key, method, route, body, ndjson);

// Holds every answer of `operation` (a Qdrant operationId) after the first `skip` from now.
function hold(operation, skip = 0) {
  let seen = 0;
  fake.hold = (op) => (op === operation && seen++ >= skip ? HELD_MS : 0);
}
const calls = (operation) => fake.requests.filter((q) => q.op === operation).length;

let root;
before(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'turnpike-search-partial-'));
  await start('embedded', root);
  if (!doc) return;
  fake = await new QdrantFake({ doc }).listen();
  await start('qdrant', root);
});
after(async () => {
  await stopAll();
  if (fake) await fake.close();
});

const SORTED = {
  query: { bool: { filter: [{ term: { tag: 'odd' } }] } }, sort: [{ n: 'asc' }], size: 5,
  track_total_hits: true, timeout: TIMEOUT,
};

test('qdrant: a count leg slower than the timeout gives hits, timed_out and a gte total, never cached', { skip }, async () => {
  hold('count_points');
  try {
    for (let i = 0; i < 2; i++) {
      const counted = calls('count_points');
      const r = await es('qdrant', 'POST', 'books/_search', SORTED);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.timed_out, true);
      assert.deepEqual(r.body.hits.hits.map((h) => h._id), ['d1', 'd3', 'd5', 'd7', 'd9']);
      assert.deepEqual(r.body.hits.total, { value: 5, relation: 'gte' });
      assert.deepEqual(r.body._shards, { total: 1, successful: 1, skipped: 0, failed: 0 });
      assert.equal(r.cache, 'miss', 'a partial answer is looked up but never stored');
      assert.equal(calls('count_points') - counted, 1, 'computed again');
      for (const leg of ['es_page', 'es_count', 'es_cover', 'es_join']) assert.match(r.timing, new RegExp(`${leg};dur=`));
    }
  } finally {
    fake.hold = null;
  }
  // Once Qdrant answers in time, the same request is complete, exact and cached.
  const full = await es('qdrant', 'POST', 'books/_search', SORTED);
  assert.equal(full.body.timed_out, false);
  assert.deepEqual(full.body.hits.total, { value: 13, relation: 'eq' });
  assert.equal(full.cache, 'miss');
  assert.equal((await es('qdrant', 'POST', 'books/_search', SORTED)).cache, 'hit');
});

test('qdrant: a page leg slower than the timeout answers no hits with the total; allow_partial_search_results=false is a 504', { skip }, async () => {
  hold('scroll_points');
  try {
    const body = { ...SORTED, size: 4 };
    const r = await es('qdrant', 'POST', 'books/_search', body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.timed_out, true);
    assert.deepEqual(r.body.hits.hits, []);
    assert.deepEqual(r.body.hits.total, { value: 13, relation: 'eq' });
    assert.equal(r.cache, 'miss');
    const strict = await es('qdrant', 'POST', 'books/_search?allow_partial_search_results=false', body);
    assert.equal(strict.status, 504, JSON.stringify(strict.body));
    assert.equal(strict.body.error.type, 'search_phase_execution_exception');
    assert.match(strict.body.error.reason, /\[page\] leg/);
    const inBody = await es('qdrant', 'POST', 'books/_search', { ...body, allow_partial_search_results: false });
    assert.equal(inBody.status, 504);
  } finally {
    fake.hold = null;
  }
});

test('qdrant: a coverage leg that times out is a failed shard in _shards.failures', { skip }, async () => {
  // The door's index read is answered by the Qdrant backend's mapping cache (this search,
  // unheld and not the one below, which the response cache would answer, warms it), so the only get_collection of the
  // next search is its coverage leg's: that one is held.
  assert.equal((await es('qdrant', 'POST', 'books/_search', { ...SORTED, size: 2 })).status, 200);
  hold('get_collection');
  try {
    const r = await es('qdrant', 'POST', 'books/_search', { ...SORTED, size: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.hits.hits.map((h) => h._id), ['d1', 'd3', 'd5']);
    assert.equal(r.body._shards.successful, 0);
    assert.equal(r.body._shards.failed, 1);
    assert.equal(r.body._shards.failures.length, 1);
    const [failure] = r.body._shards.failures;
    assert.equal(failure.shard, 0);
    assert.equal(failure.index, 'books');
    assert.equal(failure.reason.type, 'timeout_exception');
    assert.equal(r.cache, 'miss');
  } finally {
    fake.hold = null;
  }
});

test('qdrant + Redis L2: a partial answer is stored in neither cache level', { skip: skip || needsRedis() }, async () => {
  const redis = await startRedis();
  try {
    await start('qdrant', root, { name: 'fleet', tenant: 't2', redis: redis.url });
    const keys = () => Number(redis.cli(['DBSIZE']).trim());
    const before = keys();
    hold('count_points');
    try {
      for (let i = 0; i < 2; i++) {
        const r = await es('fleet', 'POST', 'books/_search', SORTED);
        assert.equal(r.body.timed_out, true);
        assert.equal(r.cache, 'miss');
      }
    } finally {
      fake.hold = null;
    }
    assert.equal(keys(), before, 'nothing written to Redis for a partial answer');
    const full = await es('fleet', 'POST', 'books/_search', SORTED);
    assert.equal(full.body.timed_out, false);
    assert.ok(keys() > before, 'the complete answer is stored in Redis');
  } finally {
    await stopRedis(redis);
  }
});

for (const [label, Client, errors] of [['8.19.2', Client8, errors8], ['9.4.3', Client9, errors9]]) {
  test(`es ${label}: the official client reads a partial answer; a strict one is its ResponseError`, { skip }, async () => {
    const { gw, key } = gws.qdrant;
    // maxRetries 0: the clients retry a 504 (as they would ES's own search timeout).
    const client = new Client({ node: `${gw.url}/es`, auth: { apiKey: key }, maxRetries: 0 });
    hold('count_points');
    try {
      // request_cache=false: the first test cached the complete answer of this very body.
      const r = await client.search({ index: 'books', ...SORTED, request_cache: false });
      assert.equal(r.timed_out, true);
      assert.equal(r.hits.hits.length, 5);
      assert.deepEqual(r.hits.total, { value: 5, relation: 'gte' });
      await assert.rejects(client.search({ index: 'books', ...SORTED, request_cache: false, allow_partial_search_results: false }),
        (e) => e instanceof errors.ResponseError && e.statusCode === 504);
    } finally {
      fake.hold = null;
      await client.close();
    }
  });
}

test('embedded: timeout 1nanos has passed before the engine takes the legs: a partial answer', async () => {
  const body = { ...SORTED, timeout: '1nanos' };
  for (let i = 0; i < 2; i++) {
    const r = await es('embedded', 'POST', 'books/_search', body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.timed_out, true);
    assert.deepEqual(r.body.hits.hits, []);
    assert.deepEqual(r.body.hits.total, { value: 0, relation: 'gte' });
    assert.equal(r.body._shards.failed, 1, 'the coverage leg missed it too');
    assert.equal(r.cache, 'miss');
  }
  const strict = await es('embedded', 'POST', 'books/_search?allow_partial_search_results=false', body);
  assert.equal(strict.status, 504);
  // Without a timeout (or -1) the same search is complete and cached.
  const full = await es('embedded', 'POST', 'books/_search?timeout=-1', { ...SORTED, timeout: undefined });
  assert.equal(full.body.timed_out, false);
  assert.deepEqual(full.body.hits.total, { value: 13, relation: 'eq' });
});

test('bad time values are parse_exception 400s', async () => {
  const url = await es('embedded', 'POST', 'books/_search?timeout=10x', {});
  assert.equal(url.status, 400);
  assert.equal(url.body.error.type, 'parse_exception');
  assert.match(url.body.error.reason, /failed to parse setting \[timeout\] with value \[10x\]/);
  const inBody = await es('embedded', 'POST', 'books/_search', { timeout: '10' });
  assert.equal(inBody.status, 400);
  assert.equal(inBody.body.error.type, 'parse_exception');
});

const backends = () => (doc ? ['embedded', 'qdrant'] : ['embedded']);
const ids = (r) => r.body.hits.hits.map((h) => h._id).sort();

test('date math in range bounds: the same hits on both backends', async () => {
  const cases = [
    [{ gte: 'now-1d/d', lt: 'now+1d/d' }, ['recent']],
    [{ lt: 'now/d' }, null],  // 20 in 2020, 'old'; 'recent' when it was yesterday
    [{ gt: 'now' }, ['future']],
    [{ gte: 'now-7d', lte: 'now' }, ['old', 'recent']],
    // gt rounds up: all of January 2020 is excluded; lte rounds up: all of March included.
    [{ gt: '2020-01-15||/M', lte: '2020-03-01||/M' }, ['d1', 'd10', 'd11', 'd13', 'd14', 'd16', 'd17', 'd19', 'd2', 'd4', 'd5', 'd7', 'd8']],
    [{ gte: '2020-01-01||+1M', lt: '2020-02-01||+1M' }, ['d1', 'd10', 'd13', 'd16', 'd19', 'd4', 'd7']],
    // lte on a date without a time includes the whole day (ES's missing date components).
    [{ gte: '2020-03-18', lte: '2020-03-18' }, ['d8']],
    [{ gte: '2020-03-18T01:00:00', lte: '2020-03-18T01:00:00', time_zone: '+01:00' }, ['d8']],
  ];
  for (const [bounds, expected] of cases) {
    const results = [];
    for (const backend of backends()) {
      const r = await es(backend, 'POST', 'books/_search', {
        query: { bool: { filter: [{ range: { at: bounds } }] } }, size: 50,
      });
      assert.equal(r.status, 200, `${backend} ${JSON.stringify(bounds)}: ${JSON.stringify(r.body)}`);
      results.push(ids(r));
    }
    if (expected) assert.deepEqual(results[0], expected.sort(), JSON.stringify(bounds));
    else assert.ok(results[0].includes('old') && results[0].includes('d0') && !results[0].includes('future'));
    if (results.length > 1) assert.deepEqual(results[1], results[0], `qdrant = embedded for ${JSON.stringify(bounds)}`);
  }
});

test('now-relative requests bypass the cache every time; fixed date math is cached', async () => {
  for (const backend of backends()) {
    const q = { query: { range: { at: { gte: 'now-1d/d', lt: 'now+1d/d' } } } };
    for (let i = 0; i < 2; i++) {
      const r = await es(backend, 'POST', 'books/_search', q);
      assert.equal(r.cache, 'bypass', backend);
      assert.deepEqual(ids(r), ['recent']);
    }
    const fixed = { query: { range: { at: { gte: '2020-01-01||+1M/M' } } }, size: 1 };
    assert.equal((await es(backend, 'POST', 'books/_search', fixed)).cache, 'miss');
    assert.equal((await es(backend, 'POST', 'books/_search', fixed)).cache, 'hit');
  }
});

test('bad date math is an ES-shaped 400, also through the official client', async () => {
  for (const [bound, reason] of [
    ['now-1x', /unit \[x\] not supported for date math \[-1x\]/],
    ['now+', /truncated date math \[\+\]/],
    ['2026-01-01||/q', /unit \[q\] not supported for date math \[\/q\]/],
  ]) {
    const r = await es('embedded', 'POST', 'books/_search', { query: { range: { at: { gte: bound } } } });
    assert.equal(r.status, 400, bound);
    assert.equal(r.body.error.type, 'parse_exception');
    assert.match(r.body.error.reason, reason);
  }
  const zone = await es('embedded', 'POST', 'books/_search', { query: { range: { at: { gte: 'now', time_zone: 'Europe/Paris' } } } });
  assert.equal(zone.status, 400);
  assert.match(zone.body.error.reason, /named time zones are not implemented/);
  const { gw, key } = gws.embedded;
  const client = new Client9({ node: `${gw.url}/es`, auth: { apiKey: key } });
  await assert.rejects(client.search({ index: 'books', query: { range: { at: { gte: 'now-1x' } } } }),
    (e) => e instanceof errors9.ResponseError && e.statusCode === 400 && /parse_exception/.test(e.message));
  await client.close();
});
