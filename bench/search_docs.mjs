// Generates the search benchmark's documents as bulk NDJSON files of `chunk` documents each:
// text (6-12 words), keyword (one of 20 genres), integer, double, date, and a 384-d vector.
// Deterministic (seeded). Usage: node bench/search_docs.mjs OUT_DIR [count=10000] [chunk=1000]
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [out, count = '10000', chunk = '1000'] = process.argv.slice(2);
const DIMS = 384;
const WORDS = ['quick', 'brown', 'fox', 'lazy', 'dog', 'river', 'stone', 'night', 'sun', 'moon',
  'gate', 'road', 'tower', 'field', 'storm', 'glass', 'paper', 'salt', 'iron', 'cloud'];
let s = 7;
const r = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
mkdirSync(out, { recursive: true });
let lines = [];
let file = 0;
for (let i = 0; i < Number(count); i++) {
  const doc = {
    title: Array.from({ length: 6 + Math.floor(r() * 7) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' '),
    genre: `g${Math.floor(r() * 20)}`,
    pages: Math.floor(r() * 1000),
    price: Math.round(r() * 10000) / 100,
    published: new Date(Date.UTC(2000, 0, 1) + Math.floor(r() * 20 * 365) * 86400000).toISOString(),
    vec: Array.from({ length: DIMS }, () => Math.round((r() * 2 - 1) * 10000) / 10000),
  };
  lines.push(JSON.stringify({ index: { _id: `d${i}` } }), JSON.stringify(doc));
  if ((i + 1) % Number(chunk) === 0 || i + 1 === Number(count)) {
    writeFileSync(path.join(out, `bulk-${String(file++).padStart(3, '0')}.ndjson`), lines.join('\n') + '\n');
    lines = [];
  }
}
const q = Array.from({ length: DIMS }, () => Math.round((r() * 2 - 1) * 10000) / 10000);
writeFileSync(path.join(out, 'knn.json'), JSON.stringify({
  knn: { field: 'vec', query_vector: q, k: 10, num_candidates: 100, filter: { term: { genre: 'g3' } } },
  size: 10, _source: { excludes: ['vec'] },
}));
writeFileSync(path.join(out, 'sorted.json'), JSON.stringify({
  query: { bool: { filter: [{ term: { genre: 'g3' } }, { range: { price: { gte: 10 } } }] } },
  sort: [{ published: 'desc' }], size: 20, track_total_hits: true, _source: { excludes: ['vec'] },
}));
writeFileSync(path.join(out, 'mapping.json'), JSON.stringify({
  mappings: { properties: {
    title: { type: 'text' }, genre: { type: 'keyword' }, pages: { type: 'integer' },
    price: { type: 'double' }, published: { type: 'date' },
    vec: { type: 'dense_vector', dims: DIMS, similarity: 'cosine' },
  } },
}));
