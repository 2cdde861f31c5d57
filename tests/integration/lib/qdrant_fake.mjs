// A fake Qdrant (REST, the 1.19 endpoint set) for tests: in-memory collections and points,
// every operation a plain scan, so that its answers are obviously right. It is NOT built on
// Turnpike's embedded search engine (a differential test against that engine would otherwise
// compare the engine with itself).
//
// Every request is validated against Qdrant's OpenAPI document before it is served, and every
// answer before it is sent; a violation is recorded in `fake.violations` (tests assert that it
// stays empty) and answered 400 (request) or 500 (answer).
//
// The documented behaviour it keeps, including the quirks an adapter must respect:
// - point ids are unsigned integers or UUIDs; scroll pages by id (`offset` = first id,
//   `next_page_offset` = the next one), integers before UUIDs;
// - `order_by` (scroll and query) needs a range index (integer, float, datetime) on its one
//   key; scroll refuses `offset` with `order_by`; points without a value for the key are left
//   out; a point with several values is ordered by its smallest (asc) or largest (desc) here
//   (an assumption of this fake, stated so);
// - query answers carry no total (points/count does);
// - match.value takes strings, integers and booleans only (no floats: use a range);
// - match.text without a text index is a substring test; with one, every word of the query
//   must be a word of the value (lower-cased, split on non-alphanumerics); never a score;
// - match.phrase needs a text index with phrase_matching: the words adjacent and in order;
//   match.prefix: the value starts with the string (byte-wise, case-sensitive);
// - facet needs a keyword, integer or bool index; hits by count desc, then value asc (the
//   tie order is this fake's choice);
// - nearest: Cosine and Dot score higher-is-closer, Euclid and Manhattan are distances
//   (lower first); ties by id.
import http from 'node:http';
import { Validator, validateRequest, validateResponse } from './openapi_validate.mjs';

const RANGE_INDEX = new Set(['integer', 'float', 'datetime']);
const FACET_INDEX = new Set(['keyword', 'integer', 'bool']);

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
const bad = (m) => new HttpError(400, `Bad request: ${m}`);

// Total order on ids: integers (numeric) before UUIDs (lexicographic, lower-cased).
function idKey(id) {
  return typeof id === 'number' ? `0${String(id).padStart(20, '0')}` : `1${id.toLowerCase()}`;
}

// All values of a (dotted) key in a payload, arrays flattened; [] when missing.
export function valuesOf(payload, key) {
  let cur = [payload];
  for (const part of key.split('.')) {
    const name = part.endsWith('[]') ? part.slice(0, -2) : part;
    const next = [];
    for (const c of cur) {
      if (c === null || typeof c !== 'object' || Array.isArray(c)) continue;
      const v = c[name];
      if (v === undefined) continue;
      if (Array.isArray(v)) next.push(...v);
      else next.push(v);
    }
    cur = next;
  }
  return cur;
}

function words(s) {
  return String(s).toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function toNumber(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

function inRange(x, r) {
  const b = (k) => (r[k] === null || r[k] === undefined ? undefined : toNumber(r[k]));
  const [gt, gte, lt, lte] = [b('gt'), b('gte'), b('lt'), b('lte')];
  return (gt === undefined || x > gt) && (gte === undefined || x >= gte)
    && (lt === undefined || x < lt) && (lte === undefined || x <= lte);
}

function distance(kind, a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let l2 = 0;
  let l1 = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
    l2 += (a[i] - b[i]) ** 2;
    l1 += Math.abs(a[i] - b[i]);
  }
  if (kind === 'Cosine') return na && nb ? dot / Math.sqrt(na * nb) : 0;
  if (kind === 'Dot') return dot;
  if (kind === 'Euclid') return Math.sqrt(l2);
  return l1;
}

class Collection {
  constructor(vectors) {
    this.vectors = vectors;  // VectorParams, or {name: VectorParams}
    this.indexes = new Map();  // key -> data type
    this.textParams = new Map();  // key -> the index's params, when given as an object
    this.points = new Map();  // idKey -> {id, vector, payload, version}
  }

  vectorParams(using) {
    if (this.vectors === undefined) return null;
    if ('size' in this.vectors) return using ? null : this.vectors;
    return this.vectors[using ?? ''] ?? null;
  }
}

export class QdrantFake {
  constructor({ doc, apiKey = '' }) {
    this.validator = new Validator(doc);
    this.apiKey = apiKey;
    this.collections = new Map();
    this.violations = [];
    this.requests = [];  // {method, path, body, op} of every request, in order
    this.calls = new Map();  // operationId (Qdrant's OpenAPI) -> requests served, for budgets
    this.version = 0;
    this.delayMs = 0;  // answers are held this long (deadline tests)
    // Test-only hook (partial-answer tests): (operationId, path) -> extra ms to hold that one
    // answer, e.g. only `count_points`; null: none.
    this.hold = null;
  }

  async listen() {
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = this.server.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  close() {
    this.server?.closeAllConnections?.();
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  onRequest(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const started = process.hrtime.bigint();
      const text = Buffer.concat(chunks).toString('utf8');
      const send = (status, body) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const full = status === 200 ? { result: body, status: 'ok', time: seconds }
          : { status: { error: body }, time: seconds };
        if (found) {
          const errs = validateResponse(this.validator, found, status, full);
          if (errs.length) {
            this.violations.push({ kind: 'answer', method: req.method, url: req.url, errors: errs });
            status = 500;
          }
        }
        const out = JSON.stringify(full);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      };
      let found = null;
      let body;
      try {
        if (text.length) body = JSON.parse(text);
      } catch (e) {
        send(400, `Format error in JSON body: ${e.message}`);
        return;
      }
      const pathname = new URL(req.url, 'http://x').pathname;
      if (pathname === '/__fake/violations') {
        const out = JSON.stringify({ requests: this.requests.length, violations: this.violations });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(out);
        return;
      }
      const record = { method: req.method, path: req.url, body };  // op: its operationId
      this.requests.push(record);
      if (this.apiKey && req.headers['api-key'] !== this.apiKey) {
        send(401, 'Must provide an API key or an Authorization bearer token');
        return;
      }
      const checked = validateRequest(this.validator, req.method, req.url, body);
      found = checked.found;
      record.op = found?.op?.operationId;
      if (record.op) this.calls.set(record.op, (this.calls.get(record.op) ?? 0) + 1);
      if (checked.errors.length) {
        this.violations.push({ kind: 'request', method: req.method, url: req.url, body, errors: checked.errors });
        send(400, `Format error in JSON body: ${checked.errors.join('; ')}`);
        return;
      }
      const held = this.delayMs + (this.hold?.(found.op.operationId, pathname) ?? 0);
      if (held) await new Promise((r) => setTimeout(r, held));
      try {
        const q = new URL(req.url, 'http://x').searchParams;
        send(200, this.serve(found.op.operationId, found.params, body ?? {}, q, pathname));
      } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        send(e.status, e.message);
      }
    });
  }

  // Requests to the endpoint `op` (an operationId: 'get_collection', 'count_points', ...).
  callsTo(op) {
    return this.calls.get(op) ?? 0;
  }

  collection(name) {
    const c = this.collections.get(name);
    if (!c) throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return c;
  }

  serve(op, params, body) {
    const name = params.collection_name;
    switch (op) {
      case 'get_collections':
        return { collections: [...this.collections.keys()].map((n) => ({ name: n })) };
      case 'collection_exists':
        return { exists: this.collections.has(name) };
      case 'create_collection':
        if (this.collections.has(name)) throw bad(`Wrong input: Collection \`${name}\` already exists!`);
        this.collections.set(name, new Collection(body.vectors));
        this.collections.get(name).metadata = body.metadata ?? null;
        return true;
      case 'update_collection':
        if (body.metadata) this.collection(name).metadata = body.metadata;
        return true;
      case 'delete_collection':
        return this.collections.delete(name);
      case 'get_collection':
        return this.info(this.collection(name));
      case 'create_field_index': {
        const c = this.collection(name);
        const type = typeof body.field_schema === 'string' ? body.field_schema : body.field_schema?.type;
        if (!type) throw bad('field_schema is required by this fake');
        c.indexes.set(body.field_name, type);
        if (typeof body.field_schema === 'object') c.textParams.set(body.field_name, body.field_schema);
        return this.updated();
      }
      case 'upsert_points':
        return this.upsert(this.collection(name), body);
      case 'delete_points': {
        const c = this.collection(name);
        if (body.points) for (const id of body.points) c.points.delete(idKey(id));
        else for (const p of this.select(c, body.filter)) c.points.delete(idKey(p.id));
        return this.updated();
      }
      case 'get_points': {
        const c = this.collection(name);
        return body.ids.map((id) => c.points.get(idKey(id))).filter(Boolean)
          .map((p) => this.record(c, p, body.with_payload ?? true, body.with_vector ?? false));
      }
      case 'count_points':
        return { count: this.select(this.collection(name), body.filter).length };
      case 'scroll_points':
        return this.scroll(this.collection(name), body);
      case 'query_points':
        return { points: this.query(this.collection(name), body) };
      case 'facet':
        return this.facet(this.collection(name), body);
      default:
        throw bad(`${op} is not implemented by the fake`);
    }
  }

  updated() {
    return { operation_id: ++this.version, status: 'completed' };
  }

  info(c) {
    const payloadSchema = {};
    for (const [k, t] of c.indexes) {
      const n = [...c.points.values()].filter((p) => valuesOf(p.payload, k).length > 0).length;
      payloadSchema[k] = { data_type: t, points: n };
    }
    return {
      status: 'green',
      optimizer_status: 'ok',
      segments_count: 1,
      points_count: c.points.size,
      indexed_vectors_count: 0,
      config: {
        params: c.vectors === undefined ? {} : { vectors: c.vectors },
        hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000 },
        optimizer_config: { default_segment_number: 0, flush_interval_sec: 5 },
        ...(c.metadata ? { metadata: c.metadata } : {}),
      },
      payload_schema: payloadSchema,
    };
  }

  upsert(c, body) {
    if (!body.points) throw bad('only the list form of upsert is implemented by the fake');
    for (const p of body.points) {
      const vectors = Array.isArray(p.vector) ? { '': p.vector } : p.vector;
      for (const [vname, v] of Object.entries(vectors)) {
        const params = c.vectorParams(vname || undefined);
        if (!params) throw bad(`Wrong input: Not existing vector name error: ${vname}`);
        if (v.length !== params.size) {
          throw bad(`Wrong input: Vector dimension error: expected dim: ${params.size}, got ${v.length}`);
        }
      }
      c.points.set(idKey(p.id), { id: p.id, vector: p.vector, payload: p.payload ?? {}, version: ++this.version });
    }
    return this.updated();
  }

  record(c, p, withPayload, withVector) {
    const r = { id: p.id };
    if (withPayload === true) r.payload = p.payload;
    else if (Array.isArray(withPayload)) r.payload = this.pick(p.payload, withPayload);
    else if (withPayload && typeof withPayload === 'object') {
      r.payload = withPayload.include ? this.pick(p.payload, withPayload.include)
        : Object.fromEntries(Object.entries(p.payload).filter(([k]) => !withPayload.exclude.includes(k)));
    }
    if (withVector === true) r.vector = p.vector;
    else if (Array.isArray(withVector) && !Array.isArray(p.vector)) {
      r.vector = Object.fromEntries(Object.entries(p.vector).filter(([k]) => withVector.includes(k)));
    }
    return r;
  }

  // The payload restricted to `keys`, which may be dotted paths ("f.price" keeps
  // {"f": {"price": ...}}).
  pick(payload, keys) {
    const out = {};
    for (const key of keys) {
      const parts = key.split('.');
      let src = payload;
      let dst = out;
      for (let i = 0; i < parts.length && src !== null && typeof src === 'object' && !Array.isArray(src); i++) {
        if (!(parts[i] in src)) break;
        if (i === parts.length - 1) {
          dst[parts[i]] = src[parts[i]];
        } else {
          dst[parts[i]] ??= {};
          dst = dst[parts[i]];
        }
        src = src[parts[i]];
      }
    }
    return out;
  }

  // The points matching `filter`, in id order.
  select(c, filter) {
    const all = [...c.points.values()].sort((a, b) => (idKey(a.id) < idKey(b.id) ? -1 : 1));
    return filter ? all.filter((p) => this.matchFilter(c, filter, p)) : all;
  }

  matchFilter(c, f, p) {
    const list = (x) => (x === null || x === undefined ? [] : Array.isArray(x) ? x : [x]);
    const must = list(f.must);
    const should = list(f.should);
    const mustNot = list(f.must_not);
    if (!must.every((x) => this.matchCondition(c, x, p))) return false;
    if (mustNot.some((x) => this.matchCondition(c, x, p))) return false;
    if (should.length && !should.some((x) => this.matchCondition(c, x, p))) return false;
    if (f.min_should) {
      const n = f.min_should.conditions.filter((x) => this.matchCondition(c, x, p)).length;
      if (n < f.min_should.min_count) return false;
    }
    return true;
  }

  matchCondition(c, x, p) {
    if ('must' in x || 'should' in x || 'must_not' in x || 'min_should' in x) return this.matchFilter(c, x, p);
    if ('has_id' in x) return x.has_id.some((id) => idKey(id) === idKey(p.id));
    if ('is_empty' in x && typeof x.is_empty === 'object' && x.is_empty !== null) {
      return valuesOf(p.payload, x.is_empty.key).filter((v) => v !== null).length === 0;
    }
    if ('is_null' in x && typeof x.is_null === 'object' && x.is_null !== null) {
      return valuesOf(p.payload, x.is_null.key).some((v) => v === null);
    }
    if ('key' in x) return this.matchField(c, x, p);
    throw bad(`condition not implemented by the fake: ${JSON.stringify(x)}`);
  }

  matchField(c, x, p) {
    const vals = valuesOf(p.payload, x.key);
    if (x.match) {
      const m = x.match;
      if ('value' in m) return vals.some((v) => v === m.value);
      if ('any' in m) return vals.some((v) => m.any.includes(v));
      if ('except' in m) return !vals.some((v) => m.except.includes(v));
      if ('text' in m) {
        if (c.indexes.get(x.key) !== 'text') return vals.some((v) => typeof v === 'string' && v.includes(m.text));
        const want = words(m.text);
        return vals.some((v) => typeof v === 'string' && want.every((w) => words(v).includes(w)));
      }
      if ('prefix' in m) return vals.some((v) => typeof v === 'string' && v.startsWith(m.prefix));
      if ('phrase' in m) {
        const want = words(m.phrase);
        const type = c.indexes.get(x.key);
        if (type !== 'text' || !c.textParams.get(x.key)?.phrase_matching) {
          throw bad(`Phrase matching requires a text index with phrase_matching on \`${x.key}\``);
        }
        return vals.some((v) => {
          if (typeof v !== 'string') return false;
          const have = words(v);
          for (let i = 0; i + want.length <= have.length; i++) {
            if (want.every((w, j) => have[i + j] === w)) return true;
          }
          return false;
        });
      }
      throw bad(`match not implemented by the fake: ${JSON.stringify(m)}`);
    }
    if (x.range) {
      return vals.some((v) => {
        const n = typeof v === 'number' ? v : c.indexes.get(x.key) === 'datetime' ? toNumber(v) : undefined;
        return n !== undefined && inRange(n, x.range);
      });
    }
    if (x.values_count) return inRange(vals.length, x.values_count);
    throw bad('Validation error: at least one field condition must be specified');
  }

  // The points with a value for the order key, in that value's order (ties by id).
  ordered(c, orderBy) {
    const ob = typeof orderBy === 'string' ? { key: orderBy } : orderBy;
    const type = c.indexes.get(ob.key);
    if (!RANGE_INDEX.has(type)) {
      throw bad(`No range index for \`order_by\` key: \`${ob.key}\`. Please create one to use \`order_by\`. Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions`);
    }
    const desc = ob.direction === 'desc';
    const start = ob.start_from === undefined || ob.start_from === null ? undefined : toNumber(ob.start_from);
    return (points) => points
      .map((p) => {
        const nums = valuesOf(p.payload, ob.key).map(toNumber).filter((n) => n !== undefined);
        return nums.length ? { p, v: desc ? Math.max(...nums) : Math.min(...nums) } : null;
      })
      .filter((e) => e && (start === undefined || (desc ? e.v <= start : e.v >= start)))
      .sort((a, b) => (a.v !== b.v ? (desc ? b.v - a.v : a.v - b.v) : idKey(a.p.id) < idKey(b.p.id) ? -1 : 1));
  }

  scroll(c, body) {
    const limit = body.limit ?? 10;
    const matched = this.select(c, body.filter);
    const withPayload = body.with_payload ?? true;
    const withVector = body.with_vector ?? false;
    if (body.order_by) {
      if (body.offset !== undefined && body.offset !== null) {
        throw bad('Cannot use an `offset` when using `order_by`. The alternative for paging is to use `order_by.start_from` and a filter to exclude the IDs that you\'ve already seen for the `order_by.start_from` value');
      }
      const page = this.ordered(c, body.order_by)(matched).slice(0, limit);
      return {
        points: page.map(({ p, v }) => ({ ...this.record(c, p, withPayload, withVector), order_value: v })),
        next_page_offset: null,
      };
    }
    let from = 0;
    if (body.offset !== undefined && body.offset !== null) {
      const k = idKey(body.offset);
      from = matched.findIndex((p) => idKey(p.id) >= k);
      if (from < 0) from = matched.length;
    }
    const page = matched.slice(from, from + limit);
    const next = matched[from + limit];
    return {
      points: page.map((p) => this.record(c, p, withPayload, withVector)),
      next_page_offset: next ? next.id : null,
    };
  }

  query(c, body) {
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    const matched = this.select(c, body.filter);
    const withPayload = body.with_payload ?? false;
    const withVector = body.with_vector ?? false;
    const scored = (p, score, extra = {}) => ({
      ...this.record(c, p, withPayload, withVector), version: p.version, score, ...extra,
    });
    const q = body.query;
    if (q === undefined || q === null) {
      return matched.slice(offset, offset + limit).map((p) => scored(p, 0));
    }
    if (typeof q === 'object' && !Array.isArray(q) && 'order_by' in q) {
      return this.ordered(c, q.order_by)(matched).slice(offset, offset + limit)
        .map(({ p, v }) => scored(p, 0, { order_value: v }));
    }
    const vector = Array.isArray(q) ? q : q.nearest;
    if (!Array.isArray(vector) || typeof vector[0] !== 'number') throw bad('only dense nearest queries are implemented by the fake');
    const params = c.vectorParams(body.using ?? undefined);
    if (!params) throw bad(`Wrong input: Not existing vector name error: ${body.using ?? ''}`);
    if (vector.length !== params.size) {
      throw bad(`Wrong input: Vector dimension error: expected dim: ${params.size}, got ${vector.length}`);
    }
    const lowerFirst = params.distance === 'Euclid' || params.distance === 'Manhattan';
    const hits = matched
      .map((p) => {
        const v = Array.isArray(p.vector) ? p.vector : p.vector[body.using ?? ''];
        return v ? { p, s: Math.fround(distance(params.distance, vector, v)) } : null;
      })
      .filter(Boolean)
      .filter((h) => body.score_threshold === undefined || body.score_threshold === null
        || (lowerFirst ? h.s <= body.score_threshold : h.s >= body.score_threshold))
      .sort((a, b) => (a.s !== b.s ? (lowerFirst ? a.s - b.s : b.s - a.s) : idKey(a.p.id) < idKey(b.p.id) ? -1 : 1));
    return hits.slice(offset, offset + limit).map((h) => scored(h.p, h.s));
  }

  facet(c, body) {
    if (!FACET_INDEX.has(c.indexes.get(body.key))) {
      throw bad(`Index required but not found for "${body.key}" of one of the following types: [keyword, integer, bool]. Help: Create an index for this key or use a different filter.`);
    }
    const counts = new Map();
    for (const p of this.select(c, body.filter)) {
      for (const v of new Set(valuesOf(p.payload, body.key))) {
        if (v === null || typeof v === 'object') continue;
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
    }
    const hits = [...counts].map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    return { hits: hits.slice(0, body.limit ?? 10) };
  }
}
