// The optional parts of the integration suite, and what a test file does when one is missing.
//
// Each `needs*` returns a test's `skip` option: false when the part is present, else the reason.
// - In CI (CI=true) a missing part is an error instead, thrown when the file loads, so the file
//   fails: CI installs every part (scripts/deps.sh --test, and Qdrant's document beside the
//   clone), and a skip there would hide a missing install step.
// - Elsewhere the reason is also appended to the file $TURNPIKE_SKIPPED names, when set:
//   scripts/test.sh names every skipped part at the end of the run.
import { appendFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { pgbouncerAvailable, postgresAvailable } from './postgres.mjs';
import { loadQdrantOpenApi } from './openapi_validate.mjs';

function requirement(part, reason) {
  if (!reason) return false;
  if (process.env.CI === 'true') throw new Error(`CI needs ${part}: ${reason}`);
  if (process.env.TURNPIKE_SKIPPED) appendFileSync(process.env.TURNPIKE_SKIPPED, `${part}: ${reason}\n`);
  return `${part} missing: ${reason}`;
}

function onPath(command) {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const needsPostgres = () =>
  requirement('PostgreSQL 15', postgresAvailable() ? '' : "no initdb (Debian's postgresql-15)");

export const needsPgbouncer = () =>
  requirement('PgBouncer', pgbouncerAvailable() ? '' : "no pgbouncer (Debian's pgbouncer)");

export const needsRedis = () =>
  requirement('redis-server', onPath('redis-server') ? '' : "not on PATH (Debian's redis-server)");

// Qdrant's OpenAPI document, which the Qdrant fake validates every call against: { doc, skip }.
export function needsQdrantOpenApi() {
  const { doc, reason } = loadQdrantOpenApi();
  return { doc, skip: requirement("Qdrant's OpenAPI document", doc ? '' : reason) };
}
