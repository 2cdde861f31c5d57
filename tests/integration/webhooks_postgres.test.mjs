// webhooks.test.mjs again, every test, with the store on PostgreSQL 15 (a throwaway cluster that
// file starts: lib/postgres.mjs). Skipped only where the PostgreSQL binaries are absent; CI
// installs them (scripts/deps.sh --test).
import { test } from 'node:test';
import { needsPostgres } from './lib/requires.mjs';

const skip = needsPostgres();
if (!skip) {
  process.env.TURNPIKE_TEST_STORE_ENGINE = 'postgres';
  await import('./webhooks.test.mjs');
} else {
  test('webhooks on PostgreSQL', { skip }, () => {});
}
