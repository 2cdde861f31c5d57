// The Qdrant fake and its OpenAPI validator, on their own: what the adapter's tests rely on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from './lib/openapi_validate.mjs';
import { needsQdrantOpenApi } from './lib/requires.mjs';
import { QdrantFake } from './lib/qdrant_fake.mjs';

const { doc, skip } = needsQdrantOpenApi();
let fake;

async function call(method, path, body) {
  const r = await fetch(fake.url + path, {
    method, headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}
const ok = async (method, path, body) => {
  const r = await call(method, path, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, 'ok');
  return r.body.result;
};

before(async () => {
  if (!doc) return;
  fake = await new QdrantFake({ doc }).listen();
  await ok('PUT', '/collections/c', { vectors: { v: { size: 2, distance: 'Cosine' } } });
  for (const [k, t] of [['tag', 'keyword'], ['n', 'integer'], ['x', 'float'], ['d', 'datetime'], ['body', 'text']]) {
    await ok('PUT', '/collections/c/index?wait=true', { field_name: k, field_schema: t });
  }
  const docs = [
    { id: 1, tag: 'a', n: 5, x: 1.5, d: '2024-01-02T00:00:00Z', body: 'the quick brown fox', v: [1, 0] },
    { id: 2, tag: ['a', 'b'], n: 3, x: 2.5, d: '2024-03-01T00:00:00Z', body: 'lazy dog', v: [0, 1] },
    { id: 3, tag: 'b', n: 9, body: 'quick dog', v: [1, 1] },
    { id: 4, tag: null, v: [-1, 0] },
  ];
  await ok('PUT', '/collections/c/points?wait=true', {
    points: docs.map(({ id, v, ...payload }) => ({ id, vector: { v }, payload })),
  });
});
after(async () => {
  if (fake) await fake.close();
  if (fake) assert.deepEqual(fake.violations.filter((v) => !v.expected), []);
});

test('validator: refs, anyOf, nullable-only branches, strict unknown keys, formats', { skip }, () => {
  const v = new Validator(doc);
  const s = { $ref: '#/components/schemas/ScrollRequest' };
  assert.deepEqual(v.validate(s, { limit: 3, filter: { must: [{ key: 'a', match: { value: 'x' } }] } }, { strict: true }), []);
  assert.notDeepEqual(v.validate(s, { limit: 0 }, { strict: true }), []);
  assert.notDeepEqual(v.validate(s, { limit: 'x' }, { strict: true }), []);
  assert.notDeepEqual(v.validate(s, { filter: { must: [], bogus: 1 } }), []);  // additionalProperties: false
  assert.notDeepEqual(v.validate(s, { bogus: 1 }, { strict: true }), []);
  assert.deepEqual(v.validate(s, { bogus: 1 }), []);
  assert.deepEqual(v.validate(s, { offset: null }, { strict: true }), []);
  assert.notDeepEqual(v.validate(s, { offset: 'not-a-uuid' }, { strict: true }), []);
  assert.deepEqual(v.validate(s, { offset: '5c56c793-69f3-4fbf-87e6-c4bf54c28c26' }, { strict: true }), []);
  // match.value takes no floats
  const c = { $ref: '#/components/schemas/FieldCondition' };
  assert.notDeepEqual(v.validate(c, { key: 'x', match: { value: 1.5 } }, { strict: true }), []);
  assert.deepEqual(v.validate(c, { key: 'x', range: { gte: 1.5, lte: 1.5 } }, { strict: true }), []);
  assert.notDeepEqual(v.validate({ $ref: '#/components/schemas/Distance' }, 'cosine'), []);
});

test('requests that break the schema are refused and recorded', { skip }, async () => {
  const before = fake.violations.length;
  const r = await call('POST', '/collections/c/points/scroll', { limit: -1 });
  assert.equal(r.status, 400);
  assert.equal(fake.violations.length, before + 1);
  fake.violations.forEach((v) => { v.expected = true; });
});

test('filters: match on arrays, any, range, datetime, is_empty, values_count, has_id, text', { skip }, async () => {
  const ids = async (filter) => (await ok('POST', '/collections/c/points/scroll', { filter, limit: 100 })).points.map((p) => p.id);
  assert.deepEqual(await ids({ must: [{ key: 'tag', match: { value: 'a' } }] }), [1, 2]);
  assert.deepEqual(await ids({ must: [{ key: 'tag', match: { any: ['b'] } }] }), [2, 3]);
  assert.deepEqual(await ids({ must_not: [{ key: 'tag', match: { value: 'a' } }] }), [3, 4]);
  assert.deepEqual(await ids({ must: [{ key: 'n', range: { gt: 3, lte: 9 } }] }), [1, 3]);
  assert.deepEqual(await ids({ must: [{ key: 'd', range: { gte: '2024-02-01T00:00:00Z' } }] }), [2]);
  assert.deepEqual(await ids({ must: [{ is_empty: { key: 'tag' } }] }), [4]);
  assert.deepEqual(await ids({ must: [{ key: 'tag', values_count: { gte: 2 } }] }), [2]);
  assert.deepEqual(await ids({ must: [{ has_id: [3, 1] }] }), [1, 3]);
  assert.deepEqual(await ids({ should: [{ key: 'n', match: { value: 5 } }, { key: 'n', match: { value: 9 } }] }), [1, 3]);
  assert.deepEqual(await ids({ must: [{ key: 'body', match: { text: 'dog quick' } }] }), [3]);
  assert.deepEqual(await ids({ min_should: { min_count: 2, conditions: [
    { key: 'tag', match: { value: 'a' } }, { key: 'n', range: { lt: 4 } }, { key: 'x', range: { gt: 2 } }] } }), [2]);
  assert.equal((await ok('POST', '/collections/c/points/count', { filter: { must: [{ key: 'tag', match: { value: 'b' } }] } })).count, 2);
});

test('scroll pages by id; order_by needs a range index, refuses offset, drops missing values', { skip }, async () => {
  const p1 = await ok('POST', '/collections/c/points/scroll', { limit: 3, with_payload: false });
  assert.deepEqual(p1.points.map((p) => p.id), [1, 2, 3]);
  assert.equal(p1.next_page_offset, 4);
  const p2 = await ok('POST', '/collections/c/points/scroll', { limit: 3, offset: 4 });
  assert.deepEqual(p2.points.map((p) => p.id), [4]);
  assert.equal(p2.next_page_offset, null);
  const o = await ok('POST', '/collections/c/points/scroll', { order_by: { key: 'n', direction: 'desc' } });
  assert.deepEqual(o.points.map((p) => [p.id, p.order_value]), [[3, 9], [1, 5], [2, 3]]);
  const s = await ok('POST', '/collections/c/points/scroll', { order_by: { key: 'n', start_from: 4 } });
  assert.deepEqual(s.points.map((p) => p.id), [1, 3]);
  const noIndex = await call('POST', '/collections/c/points/scroll', { order_by: 'tag' });
  assert.equal(noIndex.status, 400);
  assert.match(noIndex.body.status.error, /No range index for `order_by` key/);
  const withOffset = await call('POST', '/collections/c/points/scroll', { order_by: 'n', offset: 1 });
  assert.equal(withOffset.status, 400);
  assert.match(withOffset.body.status.error, /offset/);
});

test('query: nearest with filter, cosine order, no total; facet counts', { skip }, async () => {
  const r = await ok('POST', '/collections/c/points/query', {
    query: { nearest: [1, 0.1] }, using: 'v', limit: 2, with_payload: ['tag'],
    filter: { must_not: [{ has_id: [1] }] },
  });
  assert.deepEqual(r.points.map((p) => p.id), [3, 2]);
  assert.deepEqual(r.points[0].payload, { tag: 'b' });
  assert.equal('total' in r, false);
  const dim = await call('POST', '/collections/c/points/query', { query: [1, 2, 3], using: 'v' });
  assert.equal(dim.status, 400);
  const f = await ok('POST', '/collections/c/facet', { key: 'tag' });
  assert.deepEqual(f.hits, [{ value: 'a', count: 2 }, { value: 'b', count: 2 }]);
  const nf = await call('POST', '/collections/c/facet', { key: 'body' });
  assert.equal(nf.status, 400);
  const info = await ok('GET', '/collections/c');
  assert.equal(info.points_count, 4);
  assert.equal(info.payload_schema.n.data_type, 'integer');
});
