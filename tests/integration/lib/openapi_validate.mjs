// A small JSON-Schema validator for the OpenAPI 3.0 dialect Qdrant's document uses, and the
// lookup of an operation (method + path) in that document. Written for the tests: no npm
// validator, so what "valid" means is readable here.
//
// Supported: $ref (local "#/..."), type (object, array, string, integer, number, boolean),
// nullable, properties, required, additionalProperties (boolean or schema), enum, anyOf,
// oneOf, allOf, items, uniqueItems, minItems, minLength, minimum, maximum, and the formats the
// document uses (uuid, date-time, partial-date-time, int64, uint*, float, double, uri).
//
// Two readings of the document that a tool could make differently, chosen on purpose:
// - A schema holding only `nullable: true` (Qdrant writes `anyOf: [X, {nullable: true}]` for
//   "X or null") accepts only null; reading it as "anything" would make every such anyOf pass.
// - `strict` (used for requests): an object schema with `properties` and no
//   `additionalProperties` rejects unknown keys. Qdrant's server rejects unknown fields in
//   request bodies; the document does not say so, so answers are validated without it.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const QDRANT_OPENAPI = path.resolve(here, '../../../../shared/qdrant/openapi-1.19.0.json');

// Where the document is looked for when QDRANT_OPENAPI is unset: QDRANT_OPENAPI's default, then
// shared/qdrant/ in each folder above the checkout.
function qdrantOpenApiFile() {
  if (process.env.QDRANT_OPENAPI) return process.env.QDRANT_OPENAPI;
  if (existsSync(QDRANT_OPENAPI)) return QDRANT_OPENAPI;
  for (let dir = path.resolve(here, '../../../..'); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'shared', 'qdrant', path.basename(QDRANT_OPENAPI));
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) return QDRANT_OPENAPI;
  }
}

// The document, or null (with the reason) when it is not found.
export function loadQdrantOpenApi(file = qdrantOpenApiFile()) {
  if (!existsSync(file)) return { doc: null, reason: `Qdrant OpenAPI document not found at ${file}` };
  return { doc: JSON.parse(readFileSync(file, 'utf8')), reason: '' };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function deepEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class Validator {
  constructor(doc) {
    this.doc = doc;
  }

  resolve(ref) {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
    let node = this.doc;
    for (const part of ref.slice(2).split('/')) {
      node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
    }
    return node;
  }

  // A list of error strings ("$.filter.must[0]: ..."); empty means valid.
  validate(schema, value, { strict = false } = {}) {
    const errors = [];
    this.check(schema, value, '$', strict, errors);
    return errors;
  }

  check(schema, v, at, strict, errors) {
    if (schema === true || schema === undefined) return;
    if (schema === false) {
      errors.push(`${at}: no value allowed`);
      return;
    }
    if (schema.$ref) {
      this.check(this.resolve(schema.$ref), v, at, strict, errors);
      return;
    }
    const keys = Object.keys(schema).filter((k) => !['description', 'example', 'default',
      'deprecated', 'title', 'nullable'].includes(k));
    if (v === null) {
      if (schema.nullable) return;
      if (keys.length === 0) {
        errors.push(`${at}: null not allowed`);
        return;
      }
    } else if (schema.nullable && keys.length === 0) {
      errors.push(`${at}: only null allowed here, got ${typeOf(v)}`);
      return;
    }
    if (schema.allOf) for (const s of schema.allOf) this.check(s, v, at, strict, errors);
    if (schema.anyOf || schema.oneOf) {
      const branches = schema.anyOf ?? schema.oneOf;
      const results = branches.map((s) => {
        const e = [];
        this.check(s, v, at, strict, e);
        return e;
      });
      const passed = results.filter((e) => e.length === 0).length;
      if (passed === 0) {
        const best = results.reduce((a, b) => (b.length < a.length ? b : a));
        errors.push(`${at}: matches no branch of ${schema.anyOf ? 'anyOf' : 'oneOf'} (closest: ${best.slice(0, 3).join('; ')})`);
        return;
      }
      if (schema.oneOf && passed > 1) errors.push(`${at}: matches ${passed} branches of oneOf`);
    }
    if (schema.enum && !schema.enum.some((e) => deepEqual(e, v))) {
      errors.push(`${at}: ${JSON.stringify(v)} not in enum ${JSON.stringify(schema.enum)}`);
    }
    if (schema.type) {
      const t = typeOf(v);
      const ok = t === schema.type || (schema.type === 'number' && t === 'integer');
      if (!ok) {
        errors.push(`${at}: expected ${schema.type}, got ${t}`);
        return;
      }
    }
    this.checkFormat(schema, v, at, errors);
    if (typeof v === 'number') {
      if (schema.minimum !== undefined && v < schema.minimum) errors.push(`${at}: ${v} < minimum ${schema.minimum}`);
      if (schema.maximum !== undefined && v > schema.maximum) errors.push(`${at}: ${v} > maximum ${schema.maximum}`);
    }
    if (typeof v === 'string' && schema.minLength !== undefined && v.length < schema.minLength) {
      errors.push(`${at}: shorter than ${schema.minLength}`);
    }
    if (Array.isArray(v)) {
      if (schema.minItems !== undefined && v.length < schema.minItems) errors.push(`${at}: fewer than ${schema.minItems} items`);
      if (schema.uniqueItems && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) {
        errors.push(`${at}: items not unique`);
      }
      if (schema.items) v.forEach((x, i) => this.check(schema.items, x, `${at}[${i}]`, strict, errors));
    }
    if (typeOf(v) === 'object') this.checkObject(schema, v, at, strict, errors);
  }

  checkObject(schema, v, at, strict, errors) {
    for (const r of schema.required ?? []) if (!(r in v)) errors.push(`${at}: missing required "${r}"`);
    const props = schema.properties ?? {};
    for (const [k, x] of Object.entries(v)) {
      if (k in props) {
        this.check(props[k], x, `${at}.${k}`, strict, errors);
      } else if (schema.additionalProperties === false) {
        errors.push(`${at}: unknown property "${k}"`);
      } else if (typeof schema.additionalProperties === 'object') {
        this.check(schema.additionalProperties, x, `${at}.${k}`, strict, errors);
      } else if (strict && schema.properties && schema.additionalProperties === undefined) {
        errors.push(`${at}: unknown property "${k}" (strict)`);
      }
    }
  }

  checkFormat(schema, v, at, errors) {
    const f = schema.format;
    if (!f) return;
    if (f === 'uuid' && typeof v === 'string' && !UUID.test(v)) errors.push(`${at}: not a uuid: ${v}`);
    if ((f === 'date-time' || f === 'partial-date-time') && typeof v === 'string' && !DATE_TIME.test(v)) {
      errors.push(`${at}: not a date-time: ${v}`);
    }
    if (f.startsWith('uint') && typeof v === 'number' && (!Number.isInteger(v) || v < 0)) {
      errors.push(`${at}: not an unsigned integer: ${v}`);
    }
    if ((f === 'int64' || f === 'int32') && typeof v === 'number' && !Number.isInteger(v)) {
      errors.push(`${at}: not an integer: ${v}`);
    }
  }
}

// Finds the operation for `method` and a request path ("/collections/x/points/query"):
// { op, params } or null.
export function findOperation(doc, method, pathname) {
  const m = method.toLowerCase();
  const parts = pathname.split('/');
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!item[m]) continue;
    const tparts = template.split('/');
    if (tparts.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const t = tparts[i];
      if (t.startsWith('{') && t.endsWith('}')) params[t.slice(1, -1)] = decodeURIComponent(parts[i]);
      else ok = t === parts[i];
    }
    if (ok) return { op: item[m], template, params };
  }
  return null;
}

// Validates a whole request: path, query parameters (strings converted by their schema's type)
// and the JSON body. A list of errors.
export function validateRequest(validator, method, url, body) {
  const u = new URL(url, 'http://x');
  const found = findOperation(validator.doc, method, u.pathname);
  if (!found) return { found: null, errors: [`no operation ${method} ${u.pathname} in the document`] };
  const errors = [];
  const declared = new Map((found.op.parameters ?? []).map((p) => [`${p.in}:${p.name}`, p]));
  for (const [k, raw] of u.searchParams) {
    const p = declared.get(`query:${k}`);
    if (!p) {
      errors.push(`query parameter "${k}" not declared`);
      continue;
    }
    let s = p.schema;
    while (s.$ref) s = validator.resolve(s.$ref);
    let v = raw;
    if (s.type === 'integer' || s.type === 'number') v = Number(raw);
    if (s.type === 'boolean') v = raw === 'true' ? true : raw === 'false' ? false : raw;
    errors.push(...validator.validate(p.schema, v).map((e) => `query ${k} ${e}`));
  }
  for (const p of found.op.parameters ?? []) {
    if (p.in === 'query' && p.required && !u.searchParams.has(p.name)) errors.push(`query ${p.name} required`);
  }
  const schema = found.op.requestBody?.content?.['application/json']?.schema;
  if (body !== undefined && !schema) errors.push('a body where the operation takes none');
  if (body === undefined && schema && found.op.requestBody.required) errors.push('body required');
  if (body !== undefined && schema) errors.push(...validator.validate(schema, body, { strict: true }));
  return { found, errors };
}

// Validates an answer of the operation `found` with `status`.
export function validateResponse(validator, found, status, body) {
  const r = found.op.responses;
  const entry = r[String(status)] ?? r[`${String(status)[0]}XX`] ?? r.default;
  if (!entry) return [`status ${status} not documented`];
  const schema = entry.content?.['application/json']?.schema;
  if (!schema) return [];
  return validator.validate(schema, body);
}
