// The long-running commands execute themselves again once at start with glibc's per-thread
// cache count raised and huge pages asked for (src/app/main_command.cc,
// ReexecWithAllocatorTunables): what the running process's environment holds afterwards, read
// from /proc, for each case the code decides.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMock, startProcess, stopAll } from './lib/harness.mjs';

after(stopAll);

const COUNT = 'glibc.malloc.tcache_count=1024';
const HUGE = 'glibc.malloc.hugetlb=1';
const TUNED = `${COUNT}:${HUGE}`;

async function tunablesOf(env) {
  const proc = await startProcess(['mock-provider', '--listen', '127.0.0.1:0'], { env });
  const environ = readFileSync(`/proc/${proc.pid}/environ`, 'latin1').split('\0');
  proc.kill('SIGTERM');
  const at = environ.findIndex((v) => v.startsWith('GLIBC_TUNABLES='));
  if (at < 0) return undefined;
  // glibc 2.36's loader, parsing the variable, writes a NUL after each tunable's value in the
  // process's own copy of its environment (which /proc shows): the tunables after the first
  // then read as entries of their own. Joined back.
  const tunables = [environ[at].slice('GLIBC_TUNABLES='.length)];
  for (let i = at + 1; i < environ.length && environ[i].startsWith('glibc.'); ++i) {
    tunables.push(environ[i]);
  }
  return tunables.join(':');
}

test('a long-running command runs with both tunables set, keeping the same PID', async () => {
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: '', TURNPIKE_MALLOC_TUNING: '' }), TUNED);
  // startProcess resolved on the listening line of the process it spawned: the PID read above
  // is the spawned one, now running the executed image. And the harness's own mock agrees.
  const mock = await startMock();
  assert.match(readFileSync(`/proc/${mock.pid}/environ`, 'latin1'), /GLIBC_TUNABLES=[^\0]*tcache_count=/);
});

test('tunables already set are kept, and the missing ones are added after them', async () => {
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }),
    `glibc.malloc.arena_max=2:${TUNED}`);
});

test('a tunable the environment names keeps its value; MALLOC_TUNING=off leaves all', async () => {
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=5' }),
    `glibc.malloc.tcache_count=5:${HUGE}`);
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' }),
    `glibc.malloc.hugetlb=0:${COUNT}`);
  const both = 'glibc.malloc.hugetlb=0:glibc.malloc.tcache_count=5';
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: both }), both);
  assert.equal(await tunablesOf({ GLIBC_TUNABLES: '', TURNPIKE_MALLOC_TUNING: 'off' }), '');
});
