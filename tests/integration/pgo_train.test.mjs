// The training load of the profile-guided build (bench/pgo-train.sh, run by scripts/pgo-build.sh),
// in short steps against the binary under test: every step must answer, without a failed
// request, so that the build that depends on it keeps working. The profile-guided build itself
// (two builds of the binary) is not run here; docs/BENCHMARKS.md ("Profile-guided builds and huge
// pages for the heap") reports it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './lib/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const script = path.resolve(here, '../../bench/pgo-train.sh');

test('every step of the training load answers without a failed request', () => {
  const run = spawnSync(script, ['--seconds', '0.3', BIN], { encoding: 'utf8', timeout: 240_000 });
  assert.equal(run.status, 0, `pgo-train failed:\n${run.stdout}\n${run.stderr}`);
  const steps = run.stdout.split('\n').filter((l) => /^\S+\s+\d+ ok\s+\d+ failed$/.test(l));
  assert.equal(steps.length, 12, run.stdout);
  for (const line of steps) {
    const [, name, ok, failed] = /^(\S+)\s+(\d+) ok\s+(\d+) failed$/.exec(line);
    assert.ok(Number(ok) > 0, `${name}: no request answered`);
    assert.equal(Number(failed), 0, `${name}: ${failed} failed`);
  }
  assert.match(run.stdout, /pgo-train: every step answered/);
});
