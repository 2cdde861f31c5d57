// The official Elasticsearch clients (8.19.2 and 9.4.3) against the search door on the Qdrant
// backend (over the Qdrant fake): create with mappings, helpers.bulk and bulk, a sorted
// filtered search with an exact total, search_after through the whole set, filtered kNN,
// aggregations, count, msearch, and Qdrant's refusals as the client's ResponseError.
// Expected answers are computed here from the generated documents.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as Client8, errors as errors8 } from 'es8';
import { Client as Client9, errors as errors9 } from 'es9';
import { gatewayConfig, startGateway, stopAll, adminOf } from './lib/harness.mjs';
import { needsQdrantOpenApi } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';

const { doc, skip } = needsQdrantOpenApi();
const TOKEN = 'test-admin-token';
const GENRES = ['sf', 'crime', 'poetry'];
const N = 120;
const DOCS = Array.from({ length: N }, (_, i) => ({
  id: `q${String(i).padStart(3, '0')}`,
  doc: {
    genre: GENRES[i % 3],
    pages: i % 11 === 0 ? undefined : (i * 37) % 500,
    in_stock: i % 4 === 0,
    vec: [Math.cos(i), Math.sin(i), (i % 7) / 7],
  },
}));
const MAPPINGS = {
  properties: {
    genre: { type: 'keyword' }, pages: { type: 'integer' }, in_stock: { type: 'boolean' },
    vec: { type: 'dense_vector', dims: 3, similarity: 'cosine' },
  },
};
let fake;
let gw;
let key;

before(async () => {
  if (!doc) return;
  fake = await new QdrantFake({ doc }).listen();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-qdrant-es-'));
  gw = await startGateway(gatewayConfig({
    models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    governance: { enabled: true, reconcile_interval: '0s' },
    store: { path: path.join(dir, 'turnpike.db') },
    call_log: { flush_interval: '50ms' },
  }) + `search:\n  backend: qdrant\n  qdrant:\n    url: ${fake.url}\n`, { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  const admin = adminOf(gw, TOKEN);
  await admin('plans/p1', {}, 'PUT');
  await admin('tenants', { id: 't1', plan: 'p1' });
  key = (await admin('keys', { tenant: 't1', name: 'k' })).key;
});
after(async () => {
  await stopAll();
  if (fake) await fake.close();
});

const byPagesThenId = (a, b) => {
  const pa = a.doc.pages ?? Infinity;
  const pb = b.doc.pages ?? Infinity;
  return pa !== pb ? pa - pb : a.id < b.id ? -1 : 1;
};

for (const [label, Client, errors] of [['8.19.2', Client8, errors8], ['9.4.3', Client9, errors9]]) {
  const index = `qbooks-${label.replace(/\./g, '-')}`;
  const client = () => new Client({ node: `${gw.url}/es`, auth: { apiKey: key } });

  test(`es ${label} on qdrant: create, helpers.bulk and bulk, count`, { skip }, async () => {
    const es = client();
    await es.indices.create({ index, mappings: MAPPINGS });
    const clean = (d) => JSON.parse(JSON.stringify(d));
    const half = N / 2;
    const result = await es.helpers.bulk({
      datasource: DOCS.slice(0, half).map((d) => ({ ...clean(d.doc), _id: d.id })),
      onDocument: (d) => {
        const { _id } = d;
        delete d._id;
        return { index: { _index: index, _id } };
      },
    });
    assert.equal(result.failed, 0);
    const bulk = await es.bulk({ operations: DOCS.slice(half).flatMap((d) => [{ index: { _index: index, _id: d.id } }, clean(d.doc)]) });
    assert.equal(bulk.errors, false);
    await es.indices.refresh({ index });
    assert.equal((await es.count({ index })).count, N);
    assert.equal((await es.count({ index, query: { term: { genre: 'sf' } } })).count, N / 3);
  });

  test(`es ${label} on qdrant: sort + filter + exact total, then search_after through all`, { skip }, async () => {
    const es = client();
    const want = DOCS.filter((d) => d.doc.genre !== 'poetry').sort(byPagesThenId).map((d) => d.id);
    const first = await es.search({
      index, query: { bool: { must_not: [{ term: { genre: 'poetry' } }] } }, sort: [{ pages: 'asc' }],
      size: 7, track_total_hits: true,
    });
    assert.deepEqual(first.hits.total, { value: want.length, relation: 'eq' });
    assert.deepEqual(first.hits.hits.map((h) => h._id), want.slice(0, 7));
    const seen = [];
    let after;
    for (;;) {
      const page = await es.search({
        index, query: { bool: { must_not: [{ term: { genre: 'poetry' } }] } }, sort: [{ pages: 'asc' }],
        size: 9, ...(after ? { search_after: after } : {}),
      });
      if (page.hits.hits.length === 0) break;
      seen.push(...page.hits.hits.map((h) => h._id));
      after = page.hits.hits.at(-1).sort;
    }
    assert.deepEqual(seen, want);
  });

  test(`es ${label} on qdrant: filtered kNN, aggregations, msearch`, { skip }, async () => {
    const es = client();
    const q = [1, 0, 0.5];
    const cos = (a, b) => {
      const dot = a.reduce((s, x, i) => s + x * b[i], 0);
      return dot / Math.hypot(...a) / Math.hypot(...b);
    };
    const want = DOCS.filter((d) => d.doc.in_stock)
      .map((d) => ({ id: d.id, s: cos(q, d.doc.vec) }))
      .sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1)).slice(0, 5).map((x) => x.id);
    const knn = await es.search({ index, knn: { field: 'vec', query_vector: q, k: 5, num_candidates: 20, filter: { term: { in_stock: true } } } });
    assert.deepEqual(knn.hits.hits.map((h) => h._id), want);
    const aggs = await es.search({
      index, size: 0,
      aggs: { g: { terms: { field: 'genre' } }, p: { range: { field: 'pages', ranges: [{ to: 250 }, { from: 250 }] } } },
    });
    assert.deepEqual(aggs.aggregations.g.buckets.map((b) => [b.key, b.doc_count]), [['crime', 40], ['poetry', 40], ['sf', 40]]);
    const withPages = DOCS.filter((d) => d.doc.pages !== undefined);
    assert.deepEqual(aggs.aggregations.p.buckets.map((b) => b.doc_count),
      [withPages.filter((d) => d.doc.pages < 250).length, withPages.filter((d) => d.doc.pages >= 250).length]);
    const m = await es.msearch({ searches: [{ index }, { query: { term: { genre: 'crime' } }, size: 0, track_total_hits: true }, { index }, { query: { ids: { values: ['q001', 'q002'] } } }] });
    assert.equal(m.responses[0].hits.total.value, 40);
    assert.deepEqual(m.responses[1].hits.hits.map((h) => h._id).sort(), ['q001', 'q002']);
  });

  test(`es ${label} on qdrant: what Qdrant cannot do is a ResponseError naming it`, { skip }, async () => {
    const es = client();
    await assert.rejects(
      es.search({ index, query: { bool: { filter: [{ range: { genre: { gte: 's' } } }] } } }),
      (e) => e instanceof errors.ResponseError && e.statusCode === 400 && /range query on a keyword/.test(e.message));
    const prefixed = await es.search({ index, query: { bool: { filter: [{ prefix: { genre: 'cr' } }] } }, size: 0, track_total_hits: true });
    assert.equal(prefixed.hits.total.value, 40);
    await assert.rejects(es.search({ index: 'nope', query: { match_all: {} } }),
      (e) => e instanceof errors.ResponseError && e.statusCode === 404);
    assert.deepEqual(fake.violations, []);
  });
}
