// A throwaway PostgreSQL 15 cluster (and a PgBouncer in front of it) for tests: initdb into a
// temporary directory, the server on a random free loopback port with its unix socket in that
// directory, trust authentication for user `turnpike`, database `turnpike`. Debian's binaries
// (/usr/lib/postgresql/15/bin, /usr/sbin/pgbouncer; scripts/deps.sh --test installs them).
// initdb and pgbouncer refuse to run as root (CI runs as root): then they run as the
// `postgres` user (runuser) and the directory is handed to it.
// startPostgres() returns null when the binaries are absent (a local machine without them);
// CI installs them, so there the tests run.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const PGBOUNCER = '/usr/sbin/pgbouncer';
const asRoot = process.getuid?.() === 0;
const clusters = new Set();

export const postgresAvailable = () => existsSync(`${PG_BIN}/initdb`);
export const pgbouncerAvailable = () => existsSync(PGBOUNCER);

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Runs a server binary as the postgres user when we are root.
function command(bin, args) {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}
const SYNC_TIMEOUT_MS = 120_000;

function run(bin, args) {
  const [cmd, argv] = command(bin, args);
  // Bounded: a synchronous child that hung would block the event loop, and with it every
  // test timeout, until CI's own limit.
  return execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: SYNC_TIMEOUT_MS }).toString();
}

function ownDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  return dir;
}

export async function startPostgres() {
  if (!postgresAvailable()) return null;
  const dir = ownDir('turnpike-pg-');
  const data = path.join(dir, 'data');
  run(`${PG_BIN}/initdb`, ['-D', data, '-U', 'turnpike', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const cluster = {
    port, dir,
    url: `postgresql://turnpike@127.0.0.1:${port}/turnpike`,
    start() { run(`${PG_BIN}/pg_ctl`, ['-D', data, '-l', path.join(dir, 'log'), '-o', opts, '-w', 'start']); },
    stop(mode = 'fast') {
      try { run(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', mode, '-w', 'stop']); } catch { /* not running */ }
    },
    restart() { this.stop(); this.start(); },
    // Runs SQL through psql; returns the unaligned, tuples-only output.
    psql(sql, db = 'turnpike') {
      return execFileSync(`${PG_BIN}/psql`, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', 'turnpike', '-d', db, '-c', sql],
        { timeout: SYNC_TIMEOUT_MS }).toString().trim();
    },
    // A psql session that runs `sql` in a transaction it keeps open (the locks it took held)
    // until release() commits it; resolves once `sql` has run.
    async holdInTransaction(sql, db = 'turnpike') {
      const proc = spawn(`${PG_BIN}/psql`,
        ['-X', '-q', '-A', '-t', '-h', '127.0.0.1', '-p', String(port), '-U', 'turnpike', '-d', db],
        { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout.on('data', (d) => { out += d; });
      proc.stdin.write(`BEGIN; ${sql}; SELECT 'held';\n`);
      for (let waited = 0; !out.includes('held'); waited += 10) {
        if (waited > 5000 || proc.exitCode !== null) throw new Error(`psql did not run: ${sql}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return {
        release: () => new Promise((resolve) => {
          proc.on('exit', resolve);
          proc.stdin.end('COMMIT;\n');
        }),
      };
    },
    destroy() {
      this.stop('immediate');
      clusters.delete(this);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  clusters.add(cluster);
  cluster.start();
  cluster.psql('CREATE DATABASE turnpike', 'postgres');
  return cluster;
}

// A PgBouncer 1.18 in transaction pooling mode in front of `pg`'s database turnpike.
export async function startPgBouncer(pg) {
  if (!pgbouncerAvailable()) return null;
  const dir = ownDir('turnpike-pgb-');
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'users.txt'), '"turnpike" ""\n');
  writeFileSync(ini, [
    '[databases]',
    `turnpike = host=127.0.0.1 port=${pg.port} dbname=turnpike`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir = ${dir}`,
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 4',
    'max_client_conn = 200',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    'ignore_startup_parameters = extra_float_digits',
    '',
  ].join('\n'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    for (const f of ['users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), uid, uid);
  }
  const [cmd, argv] = command(PGBOUNCER, [ini]);
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  // Ready once it accepts a connection.
  const deadline = Date.now() + 10_000;
  while (true) {
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`pgbouncer did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `postgresql://turnpike@127.0.0.1:${port}/turnpike`,
    stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Stops every cluster this process started (an `after` hook, and process exit as a backstop).
export function stopAllPostgres() {
  for (const c of [...clusters]) c.destroy();
}
process.on('exit', stopAllPostgres);
