#!/usr/bin/env bash
# What a call-log row costs PostgreSQL as a row of its own against as an element of a chunk's
# column arrays (schema 7, call_log_columns.h), by COPY format and TOAST compression: 300,000
# generated rows of the call log's shape (random 32-hex request ids, a few routes, two columns
# mostly NULL) are written into a throwaway PostgreSQL 15 cluster by server-side COPY from
# files, a transaction per batch of 4,096 rows (or per chunk), the way the engine writes them;
# each variant is charged the cluster's CPU meanwhile (/proc ticks of the postmaster and its
# children, reaped ones included) and its size on disk. Two rounds, variants alternating.
#
#   bench/postgres-chunk-layouts.sh
#
# Variants: rows (the schema-6 table: a tuple and a primary-key entry per row; text and binary
# COPY), chunks with each column's array stored uncompressed out of line (EXTERNAL), lz4 or
# pglz (PostgreSQL's default), text and binary COPY. Needs python3 and /usr/lib/postgresql/15.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_exclusive
bench_workdir
pg_cluster_start "$dir/pg"
psql_() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U turnpike -d turnpike "$@"; }

mkdir -p "$dir/r" "$dir/c" "$dir/rb" "$dir/cb"
python3 - "$dir" <<'PY'
import random, sys
d = sys.argv[1]
N, B = 300_000, 4096
random.seed(1)
rows = []
for i in range(N):
    rid = '%016x%016x' % (random.getrandbits(64), random.getrandbits(64))
    rows.append([str(1 + i % 3), str(1764600000000 + i // 40), rid, '200', '', '12', '20', '0',
                 '0', str(12 + i % 5), '0', '0', None, str(1000 + i % 700), str(40 + i % 30),
                 None, '0', '0'])
def field(v): return '\\N' if v is None else v
def arr(vals, text):
    return '{' + ','.join('NULL' if v is None else ('"' + v + '"' if text else v) for v in vals) + '}'
for b in range(0, N, B):
    chunk = rows[b:b + B]
    with open(f'{d}/r/{b:07d}', 'w') as f:
        for i, r in enumerate(chunk):
            f.write('\t'.join([str(1_000_000 + b + i)] + [field(v) for v in r]) + '\n')
    cols = list(zip(*chunk))
    with open(f'{d}/c/{b:07d}', 'w') as f:
        f.write('\t'.join([str(1_000_000 + b), str(len(chunk))] +
                          [arr(c, i in (2, 4, 15)) for i, c in enumerate(cols)]) + '\n')
PY
chmod -R a+rX "$dir"
chmod 777 "$dir/cb" "$dir/rb"  # the server writes the binary files
cols="route_id BIGINT[] NOT NULL, time_ms BIGINT[] NOT NULL, request_id TEXT[] NOT NULL,
  status BIGINT[] NOT NULL, error TEXT[] NOT NULL, prompt_tokens BIGINT[] NOT NULL,
  completion_tokens BIGINT[] NOT NULL, cached_tokens BIGINT[] NOT NULL,
  cache_creation_tokens BIGINT[] NOT NULL, cost_micros BIGINT[] NOT NULL,
  estimated BIGINT[] NOT NULL, unpriced BIGINT[] NOT NULL, ttft_us BIGINT[] NOT NULL,
  total_us BIGINT[] NOT NULL, overhead_us BIGINT[] NOT NULL, request_body TEXT[] NOT NULL,
  dropped_rows BIGINT[] NOT NULL, reasoning_tokens BIGINT[] NOT NULL"
psql_ <<SQL
CREATE TABLE rows6 (id BIGINT PRIMARY KEY, route_id BIGINT NOT NULL, time_ms BIGINT NOT NULL,
  request_id TEXT NOT NULL, status INTEGER NOT NULL, error TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL, completion_tokens BIGINT NOT NULL,
  cached_tokens BIGINT NOT NULL, cache_creation_tokens BIGINT NOT NULL,
  cost_micros BIGINT NOT NULL, estimated INTEGER NOT NULL, unpriced INTEGER NOT NULL,
  ttft_us BIGINT, total_us BIGINT NOT NULL, overhead_us BIGINT, request_body TEXT,
  dropped_rows BIGINT NOT NULL, reasoning_tokens BIGINT NOT NULL);
CREATE TABLE chunks_external (first_id BIGINT PRIMARY KEY, n INTEGER NOT NULL, $cols);
CREATE TABLE chunks_lz4 (first_id BIGINT PRIMARY KEY, n INTEGER NOT NULL, $cols);
CREATE TABLE chunks_pglz (first_id BIGINT PRIMARY KEY, n INTEGER NOT NULL, $cols);
SQL
for c in route_id time_ms request_id status error prompt_tokens completion_tokens cached_tokens \
    cache_creation_tokens cost_micros estimated unpriced ttft_us total_us overhead_us \
    request_body dropped_rows reasoning_tokens; do
  echo "ALTER TABLE chunks_external ALTER COLUMN $c SET STORAGE EXTERNAL;"
  echo "ALTER TABLE chunks_lz4 ALTER COLUMN $c SET COMPRESSION lz4;"
  echo "ALTER TABLE chunks_pglz ALTER COLUMN $c SET COMPRESSION pglz;"
done | psql_
# The binary files: what PostgreSQL itself writes for the same rows.
for f in "$dir"/r/*; do echo "COPY rows6 FROM '$f';"; done | psql_
for f in "$dir"/c/*; do echo "COPY chunks_external FROM '$f';"; done | psql_
for f in "$dir"/c/*; do
  id=$((10#$(basename "$f") + 1000000))
  echo "COPY (SELECT * FROM chunks_external WHERE first_id = $id) TO '$dir/cb/$id' WITH (FORMAT binary);"
  echo "COPY (SELECT * FROM rows6 WHERE id >= $id AND id < $id + 4096) TO '$dir/rb/$id' WITH (FORMAT binary);"
done | psql_
hz=$(getconf CLK_TCK)
echo "| round | variant | cluster CPU per row (µs) | bytes on disk per row |"
echo "|---|---|---|---|"
for round in 1 2; do
  for variant in rows:text rows:binary chunks_external:text chunks_external:binary \
      chunks_lz4:text chunks_lz4:binary chunks_pglz:binary; do
    table=${variant%%:*} format=${variant##*:}
    [[ $table == rows ]] && table=rows6
    src=$dir/c opt=""
    [[ $table == rows6 ]] && src=$dir/r
    if [[ $format == binary ]]; then
      src=$dir/cb opt=" WITH (FORMAT binary)"
      [[ $table == rows6 ]] && src=$dir/rb
    fi
    : >"$dir/script.sql"
    for f in "$src"/*; do echo "BEGIN; COPY $table FROM '$f'$opt; COMMIT;" >>"$dir/script.sql"; done
    psql_ -c "TRUNCATE $table; CHECKPOINT"
    before=$(pg_cluster_ticks)
    psql_ -f "$dir/script.sql"
    after=$(pg_cluster_ticks)
    size=$(psql_ -tA -c "SELECT pg_total_relation_size('$table')")
    echo "| $round | $variant | $(jq -n "($after - $before) / $hz * 1e6 / 300000 * 100 | round / 100") | $((size / 300000)) |"
  done
done
