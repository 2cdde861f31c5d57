// A small HTTP/2 load driver (node:http2) for the inbound HTTP/2 path, until `turnpike bench`
// has --http2: C connections, each keeping S streams in flight, POSTing a chat body (streamed
// or not) for D seconds; prints requests/s, failures and the gateway's CPU per request
// (/proc/<pid>/stat). With --http1 the same load goes over HTTP/1.1 keep-alive connections
// (C x S sockets, node:http), for a side-by-side on the same client.
//
//   node bench/http2-load.mjs --url http://127.0.0.1:8080 --pid <gateway pid> \
//     [--connections 4] [--streams 32] [--seconds 10] [--stream] [--http1]
//
// The client is node (one thread): it saturates long before the gateway does at high rates,
// so read the CPU per request, not the throughput, as the gateway's cost.
import http from 'node:http';
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = args[i + 1];
  return v === undefined || v.startsWith('--') ? true : v;
};
const url = new URL(opt('url', 'http://127.0.0.1:8080'));
const pid = opt('pid', '');
const connections = Number(opt('connections', 4));
const streams = Number(opt('streams', 32));
const seconds = Number(opt('seconds', 10));
const stream = opt('stream', false) === true;
const useHttp1 = opt('http1', false) === true;
const body = JSON.stringify({
  model: opt('model', 'mock-model'), stream, messages: [{ role: 'user', content: 'Say hello.' }],
});

function cpuSeconds() {
  if (!pid) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

let ok = 0;
let failed = 0;
let running = true;

function h2Once(session) {
  return new Promise((resolve) => {
    const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });
    let status = 0;
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', () => {});
    req.on('end', () => { if (status === 200) ok++; else failed++; resolve(); });
    req.on('error', () => { failed++; resolve(); });
    req.end(body);
  });
}

function h1Once(agent) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', path: '/v1/chat/completions', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => { if (res.statusCode === 200) ok++; else failed++; resolve(); });
    });
    req.on('error', () => { failed++; resolve(); });
    req.end(body);
  });
}

async function loop(once) {
  while (running) await once();
}

const loops = [];
const sessions = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: connections * streams });
for (let c = 0; c < connections; c++) {
  if (useHttp1) {
    for (let s = 0; s < streams; s++) loops.push(loop(() => h1Once(agent)));
  } else {
    const session = http2.connect(url.origin, { settings: { initialWindowSize: 1 << 20 } });
    session.on('error', () => {});
    sessions.push(session);
    for (let s = 0; s < streams; s++) loops.push(loop(() => h2Once(session)));
  }
}
const cpu0 = cpuSeconds();
const t0 = process.hrtime.bigint();
await new Promise((r) => setTimeout(r, seconds * 1000));
const ok0 = ok;
running = false;
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = cpuSeconds() - cpu0;
await Promise.all(loops);
for (const s of sessions) s.close();
agent.destroy();
const result = {
  protocol: useHttp1 ? 'http/1.1' : 'h2', connections, streams, stream,
  requests_per_s: Math.round(ok0 / elapsed), failed,
  gateway_cpu_ms_per_1k: pid ? Math.round((cpu / ok0) * 1e6) : null,
};
console.log(JSON.stringify(result));
