// What one call-log row costs PostgreSQL alone, by index set: INSERT ... SELECT of 200,000
// generated rows of the call log's shape into a throwaway cluster (tests/integration/lib/
// postgres.mjs), timed around psql (the server's work plus one round trip). Run by hand:
//   node bench/postgres-row-cost.mjs
import { startPostgres, stopAllPostgres } from '../tests/integration/lib/postgres.mjs';
const pg = await startPostgres();
const setup = (extra) => pg.psql(`SET client_min_messages = warning; DROP TABLE IF EXISTS c; CREATE TABLE c (id BIGSERIAL PRIMARY KEY, time_ms BIGINT, request_id TEXT, tenant_id TEXT, key_id TEXT, model TEXT, deployment TEXT, status INT, error TEXT, p BIGINT, q BIGINT, r BIGINT, s BIGINT, cost BIGINT, e INT, u INT, ttft BIGINT, total BIGINT, ov BIGINT, month TEXT, body TEXT, dropped BIGINT); ${extra}`);
const ins = `INSERT INTO c (time_ms, request_id, tenant_id, key_id, model, deployment, status, error, p, q, r, s, cost, e, u, ttft, total, ov, month, body, dropped)
 SELECT 1796000000000 + g, 'req-' || g || '-abcdefghij', 'bench', 'abcdefghijkl', 'bench-model', 'openai:0', 200, '', 21, 20, 0, 0, 12000, 0, 0, 1200, 3400, 35, '2026-12', NULL, 0 FROM generate_series(1, 200000) g`;
const t = (label, extra) => { setup(extra); const t0 = Date.now(); pg.psql(ins); console.log(label, ((Date.now() - t0) * 1000 / 200000).toFixed(2), 'µs/row'); };
t('pk only', '');
t('pk + tenant', 'CREATE INDEX ON c (tenant_id, id);');
t('pk + tenant + brin', 'CREATE INDEX ON c (tenant_id, id); CREATE INDEX ON c USING brin (month);');
t('+ unique request_id', 'CREATE INDEX ON c (tenant_id, id); CREATE INDEX ON c USING brin (month); CREATE UNIQUE INDEX ON c (request_id);');
stopAllPostgres();
