// A throwaway redis-server for fleet tests: loopback, a random free port, no persistence
// (no RDB, no AOF), killed by stopRedis. Needs Debian's `redis-server` (scripts/deps.sh --test).
import { spawn, execFileSync } from 'node:child_process';
import net from 'node:net';

const STARTUP_TIMEOUT_MS = 5000;

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Starts redis-server on `port` (default: a free one) and resolves once it answers PING.
export async function startRedis(port) {
  port ??= await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no', '--protected-mode', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited: ${log}`);
    try {
      if (redisCli(port, ['PING']).trim() === 'PONG') {
        return { proc, port, url: `redis://127.0.0.1:${port}/0`, cli: (args) => redisCli(port, args) };
      }
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`redis-server on ${port} did not answer PING: ${log}`);
}

export function redisCli(port, args) {
  return execFileSync('redis-cli', ['-p', String(port), '--raw', ...args],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

export async function stopRedis(redis, signal = 'SIGKILL') {
  if (redis.proc.exitCode !== null || redis.proc.signalCode !== null) return;
  const exited = new Promise((r) => redis.proc.once('exit', r));
  redis.proc.kill(signal);
  await exited;
}
