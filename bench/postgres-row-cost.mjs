// What one call-log row costs PostgreSQL alone, by statement shape, index set, column types and
// batch size: each variant writes the same generated rows (the call log's shape, as the bench
// mock's requests make them) in batches, the way the engine does, into a fresh schema in a
// throwaway cluster (tests/integration/lib/postgres.mjs: fsync off), and is charged the CPU
// the cluster used meanwhile, read from /proc (the postmaster, its live children, and the
// children it reaped: the psql session's backend), not wall time. psql's own CPU is not
// counted. Variants alternate within a round; rounds repeat. Run by hand:
//   node bench/postgres-row-cost.mjs [--rounds 3] [--rows 100000] [--only 'copy;arrays']
//
// Shapes:
//   arrays  today's statement (call_log_columns.h, WriteBatchSql): one statement per batch,
//           one text-form array per column, unnest, RETURNING, spend summed in SQL. Sent here
//           as PREPARE/EXECUTE with literal arrays (the engine binds them as parameters: the
//           literals' lexing, measured by `lexing`, is the difference).
//   lexing  control: the same EXECUTE with the same literals into a statement that does nothing
//   copy    BEGIN; the batch key inserted (a replay fails on its primary key); COPY call_log
//           FROM STDIN (text format); spend upserted from the sums the client made; COMMIT.
//   routes  COPY into a narrower row, as the SQLite engine's migration 3 made it: the repeating
//           tenant, key, model, deployment and month replaced by a route id (18 columns); no
//           secondary index (what would replace them, per batch, not measured)
//   binary  the same with COPY's binary format (psql's \copy from a file per batch, written
//           before the measurement).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgres, stopAllPostgres } from '../tests/integration/lib/postgres.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', 3));
const totalRows = Number(arg('rows', 100000));
const only = arg('only', '');

const pg = await startPostgres();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'pg-row-cost-'));  // the scripts and binary batches
const pidFile = path.join(pg.dir, 'data', 'postmaster.pid');
const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
const hz = 100;  // getconf CLK_TCK on Linux

// Cluster CPU in ticks: the postmaster's own and reaped children's, plus its live children's.
function clusterTicks() {
  const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const pm = stat(postmaster);  // fields from state (3rd) on: utime is [11], cutime [13]
  let ticks = Number(pm[11]) + Number(pm[12]) + Number(pm[13]) + Number(pm[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const s = stat(entry);
      if (Number(s[1]) === postmaster) ticks += Number(s[11]) + Number(s[12]);
    } catch { /* gone */ }
  }
  return ticks;
}

// Columns as call_log_columns.h sends them (name, type) and the migration's table.
const columns = [
  ['time_ms', 'bigint'], ['request_id', 'text'], ['tenant_id', 'text'], ['key_id', 'text'],
  ['model', 'text'], ['deployment', 'text'], ['status', 'int'], ['error', 'text'],
  ['prompt_tokens', 'bigint'], ['completion_tokens', 'bigint'], ['cached_tokens', 'bigint'],
  ['cache_creation_tokens', 'bigint'], ['cost_micros', 'bigint'], ['estimated', 'int'],
  ['unpriced', 'int'], ['ttft_us', 'bigint'], ['total_us', 'bigint'], ['overhead_us', 'bigint'],
  ['month', 'text'], ['request_body', 'text'], ['dropped_rows', 'bigint'],
];
const names = columns.map(([n]) => n).join(', ');
const tableSql = (types) => `
CREATE TABLE call_log (id BIGSERIAL PRIMARY KEY, time_ms BIGINT NOT NULL, request_id TEXT NOT NULL,
  tenant_id TEXT${types.collate ?? ''} NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL, deployment TEXT NOT NULL,
  status ${types.small} NOT NULL, error TEXT NOT NULL, prompt_tokens ${types.tokens} NOT NULL,
  completion_tokens ${types.tokens} NOT NULL, cached_tokens ${types.tokens} NOT NULL,
  cache_creation_tokens ${types.tokens} NOT NULL DEFAULT 0, cost_micros BIGINT NOT NULL,
  estimated ${types.small} NOT NULL, unpriced ${types.small} NOT NULL, ttft_us BIGINT,
  total_us BIGINT NOT NULL, overhead_us BIGINT, month TEXT NOT NULL, request_body TEXT,
  dropped_rows BIGINT NOT NULL DEFAULT 0);
CREATE TABLE call_log_batches (batch_key TEXT PRIMARY KEY);
CREATE TABLE spend (scope TEXT NOT NULL CHECK (scope IN ('tenant', 'key')), scope_id TEXT NOT NULL,
  month TEXT NOT NULL, spent_micros BIGINT NOT NULL, PRIMARY KEY (scope, scope_id, month));`;
const indexes = {
  all: 'CREATE INDEX call_log_tenant ON call_log (tenant_id, id); CREATE INDEX call_log_month ON call_log USING brin (month);',
  'no-tenant': 'CREATE INDEX call_log_month ON call_log USING brin (month);',
  'pk-only': '',
};
const wide = { small: 'INTEGER', tokens: 'BIGINT' };
const narrow = { small: 'SMALLINT', tokens: 'INTEGER' };
const cTenant = { ...wide, collate: ' COLLATE "C"' };  // the tenant index compares bytes
const routeCols = ['time_ms', 'request_id', 'route_id', 'status', 'error', 'prompt_tokens',
  'completion_tokens', 'cached_tokens', 'cache_creation_tokens', 'cost_micros', 'estimated',
  'unpriced', 'ttft_us', 'total_us', 'overhead_us', 'request_body', 'dropped_rows'];
const routes = { ...wide, after: `DROP TABLE call_log; CREATE TABLE call_log (id BIGSERIAL PRIMARY KEY,
  time_ms BIGINT NOT NULL, request_id TEXT NOT NULL, route_id BIGINT NOT NULL, status INTEGER NOT NULL,
  error TEXT NOT NULL, prompt_tokens BIGINT NOT NULL, completion_tokens BIGINT NOT NULL,
  cached_tokens BIGINT NOT NULL, cache_creation_tokens BIGINT NOT NULL, cost_micros BIGINT NOT NULL,
  estimated INTEGER NOT NULL, unpriced INTEGER NOT NULL, ttft_us BIGINT, total_us BIGINT NOT NULL,
  overhead_us BIGINT, request_body TEXT, dropped_rows BIGINT NOT NULL);` };
const seqCache = { ...wide, after: 'ALTER SEQUENCE call_log_id_seq CACHE 1024;' };

// Rows as the cell's load makes them: a few keys of one tenant, ids of 32 hex digits.
const row = (i) => [
  1796000000000 + i, `${(i * 2654435761 % 2 ** 32).toString(16).padStart(8, '0')}${'0123456789abcdef01234567'}`,
  `tenant-${i % 3}`, `tpk_${(i % 7).toString().padStart(8, '0')}`, 'bench-model', 'openai:0', 200, '',
  21, 20, 0, 0, 12 + (i % 5), 0, 0, 1200 + (i % 100), 3400 + (i % 300), 35 + (i % 20), '2026-12', null, 0,
];
const arrayLiteral = (values, text) => '{' + values.map((v) => v === null ? 'NULL' : text ? `"${v}"` : String(v)).join(',') + '}';
const q = (s) => `'${s}'`;

const writeBatchSql = () => {
  const arrays = columns.map(([, t], i) => `$${6 + i}::${t}[]`).join(', ');
  return `WITH fresh AS (INSERT INTO call_log_batches (batch_key) VALUES ($1) ON CONFLICT (batch_key) DO NOTHING RETURNING batch_key),
 batch AS (SELECT r.* FROM unnest(${arrays}) AS r(${names}) WHERE EXISTS (SELECT 1 FROM fresh)),
 inserted AS (INSERT INTO call_log (${names}) SELECT * FROM batch RETURNING tenant_id, key_id, month, cost_micros),
 sums AS (SELECT 'tenant'::text AS scope, tenant_id AS scope_id, month, cost_micros AS micros FROM inserted
   UNION ALL SELECT 'key', key_id, month, cost_micros FROM inserted
   UNION ALL SELECT s.* FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) AS s WHERE EXISTS (SELECT 1 FROM fresh)),
 merged AS (SELECT scope, scope_id, month, SUM(micros)::bigint AS micros FROM sums GROUP BY scope, scope_id, month)
INSERT INTO spend (scope, scope_id, month, spent_micros) SELECT scope, scope_id, month, micros FROM merged WHERE micros <> 0
ON CONFLICT (scope, scope_id, month) DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros`;
};

// COPY's binary format: signature, flags, header extension; per row the field count, then
// each field's length (-1: NULL) and bytes (integers big-endian); -1 at the end.
function binaryRows(rows) {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)];
  for (const r of rows) {
    const head = Buffer.alloc(2);
    head.writeInt16BE(columns.length);
    parts.push(head);
    r.forEach((v, c) => {
      const type = columns[c][1];
      let data = null;
      if (v !== null && type === 'bigint') { data = Buffer.alloc(8); data.writeBigInt64BE(BigInt(v)); }
      if (v !== null && type === 'int') { data = Buffer.alloc(4); data.writeInt32BE(v); }
      if (v !== null && type === 'text') data = Buffer.from(String(v));
      const len = Buffer.alloc(4);
      len.writeInt32BE(data === null ? -1 : data.length);
      parts.push(len);
      if (data) parts.push(data);
    });
  }
  const end = Buffer.alloc(2);
  end.writeInt16BE(-1);
  parts.push(end);
  return Buffer.concat(parts);
}

// One script per variant: the batches of `batchRows` rows, as the engine would send them.
function script(shape, batchRows) {
  const out = [];
  if (shape === 'arrays') out.push(`PREPARE w(text, text[], text[], text[], bigint[], ${columns.map(([, t]) => `${t}[]`).join(', ')}) AS ${writeBatchSql()};`);
  if (shape === 'lexing') out.push(`PREPARE w(${Array(26).fill('text').join(', ')}) AS SELECT 1;`);
  for (let b = 0, i = 0; i < totalRows; ++b) {
    const rows = [];
    for (; rows.length < batchRows && i < totalRows; ++i) rows.push(row(i));
    const key = q(`bench-${b}`);
    if (shape === 'copy' || shape === 'binary' || shape === 'routes') {
      const sums = new Map();
      for (const r of rows) {
        for (const k of [`tenant\t${r[2]}`, `key\t${r[3]}`]) sums.set(k, (sums.get(k) ?? 0) + r[12]);
      }
      const spend = [...sums].map(([k, v]) => { const [s, id] = k.split('\t'); return `(${q(s)}, ${q(id)}, '2026-12', ${v})`; });
      out.push(`BEGIN; INSERT INTO call_log_batches (batch_key) VALUES (${key});`);
      if (shape === 'binary') {
        const file = path.join(tmp, `${batchRows}-b${b}.bin`);
        writeFileSync(file, binaryRows(rows));
        out.push(`\\copy call_log (${names}) FROM '${file}' WITH (FORMAT binary)`);
      } else if (shape === 'routes') {
        out.push(`COPY call_log (${routeCols.join(', ')}) FROM STDIN;`);
        const pick = [0, 1, -1, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20];
        for (const r of rows) {
          out.push(pick.map((c) => { const v = c < 0 ? r[0] % 7 : r[c]; return v === null ? '\\N' : String(v); }).join('\t'));
        }
        out.push('\\.');
      } else {
        out.push(`COPY call_log (${names}) FROM STDIN;`);
        for (const r of rows) out.push(r.map((v) => v === null ? '\\N' : String(v)).join('\t'));
        out.push('\\.');
      }
      out.push(`INSERT INTO spend (scope, scope_id, month, spent_micros) VALUES ${spend.join(', ')} ON CONFLICT (scope, scope_id, month) DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros; COMMIT;`);
    } else {
      const arrays = columns.map(([, t], c) => q(arrayLiteral(rows.map((r) => r[c]), t === 'text')));
      out.push(`EXECUTE w(${key}, '{}', '{}', '{}', '{}', ${arrays.join(', ')});`);
    }
  }
  return out.join('\n') + '\n';
}

const variants = [
  { name: 'arrays', shape: 'arrays', idx: 'all', types: wide, batch: 1024 },
  { name: 'lexing', shape: 'lexing', idx: 'all', types: wide, batch: 1024 },
  { name: 'copy', shape: 'copy', idx: 'all', types: wide, batch: 1024 },
  { name: 'binary', shape: 'binary', idx: 'all', types: wide, batch: 1024 },
  { name: 'copy, no tenant index', shape: 'copy', idx: 'no-tenant', types: wide, batch: 1024 },
  { name: 'copy, pk only', shape: 'copy', idx: 'pk-only', types: wide, batch: 1024 },
  { name: 'copy, tenant_id COLLATE "C"', shape: 'copy', idx: 'all', types: cTenant, batch: 1024 },
  { name: 'copy, id sequence CACHE 1024', shape: 'copy', idx: 'all', types: seqCache, batch: 1024 },
  { name: 'copy, routes (18 columns), primary key only', shape: 'routes', idx: 'pk-only', types: routes, batch: 1024 },
  { name: 'copy, smallint/int', shape: 'copy', idx: 'all', types: narrow, batch: 1024 },
  { name: 'copy, batch 256', shape: 'copy', idx: 'all', types: wide, batch: 256 },
  { name: 'copy, batch 4096', shape: 'copy', idx: 'all', types: wide, batch: 4096 },
  { name: 'arrays, batch 4096', shape: 'arrays', idx: 'all', types: wide, batch: 4096 },
].filter((v) => !only || only.split(';').includes(v.name));

const psqlFile = (file) => execFileSync('/usr/lib/postgresql/15/bin/psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1',
  '-h', '127.0.0.1', '-p', String(pg.port), '-U', 'turnpike', '-d', 'turnpike', '-f', file], { stdio: ['ignore', 'ignore', 'inherit'] });
const files = new Map();
for (const v of variants) {
  const file = path.join(tmp, `${files.size}.sql`);
  writeFileSync(file, script(v.shape, v.batch));
  files.set(v, file);
}
const results = new Map(variants.map((v) => [v, []]));
for (let r = 0; r < rounds; ++r) {
  for (const v of r % 2 ? [...variants].reverse() : variants) {
    pg.psql(`SET client_min_messages = warning; DROP TABLE IF EXISTS call_log, call_log_batches, spend; ${tableSql(v.types)} ${indexes[v.idx]} ${v.types.after ?? ''} CHECKPOINT;`);
    await new Promise((done) => setTimeout(done, 300));
    const before = clusterTicks();
    psqlFile(files.get(v));
    await new Promise((done) => setTimeout(done, 300));  // the backend reaped
    results.get(v).push((clusterTicks() - before) / hz * 1e6 / totalRows);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| variant | cluster CPU per row (µs), ${rounds} rounds | median |`);
console.log('|---|---|---|');
for (const [v, xs] of results) console.log(`| ${v.name} | ${xs.map((x) => x.toFixed(2)).join(', ')} | ${median(xs).toFixed(2)} |`);
stopAllPostgres();
rmSync(tmp, { recursive: true, force: true });
