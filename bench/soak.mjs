// The soak (issue 28): one gateway replica (SQLite store, governance on, search on) over the mock
// provider on loopback, fed a modest mix of traffic for a given time while its RSS
// (/proc/PID/status VmRSS) is sampled every 10 s into a CSV; then a burst of concurrent streams,
// and RSS sampled while the burst drains, to see whether freed memory goes back to the OS.
//
// The mix, drawn per request (weights in MIX): plain and streamed OpenAI chat; Anthropic
// (/v1/messages) and Gemini (:generateContent, :streamGenerateContent) clients translated onto an
// OpenAI deployment; a bad key (401), a bad body (400), an upstream 500 and a reset mid-stream
// (a second mock that fails
// every request, and the mock's x-mock-fault); a client that drops a stream after its first bytes; an admin write
// (create a key, revoke it, delete it: the key table keeps its size); search (bulk-index into a fixed set of ids, then query).
// Every answer's status is checked against the one its kind expects; the summary counts the rest.
//
// Run by hand, not in CI (the default is one hour):
//   TURNPIKE_BIN=build/src/app/turnpike node bench/soak.mjs [--duration 3600] [--warmup 300]
//     [--rate 20] [--burst 1000] [--drain 60] [--csv soak.csv] [--mix KIND,...] [--search-cache 0]
//     [--env NAME=VALUE ...]
// --mix runs those kinds alone; --search-cache 0 turns the search door's response cache off
// (it fills up to its bound, search.cache's tenant_max_bytes, with answers of past index states).
// --env goes to the gateway alone, e.g. --env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
// or --env MALLOC_ARENA_MAX=2. The summary's last line is one JSON object.
import { writeFileSync, appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMock, startGateway, gatewayConfig, stopAll, sleep, rssKiB } from '../tests/integration/lib/harness.mjs';

const args = { duration: 3600, warmup: 300, rate: 20, burst: 1000, csv: 'soak.csv', drain: 60, mix: '',
  'search-cache': 1 };
const env = {};
for (let i = 2; i < process.argv.length; i += 2) {
  const name = process.argv[i].replace(/^--/, '');
  const value = process.argv[i + 1];
  if (name === 'env') {
    const eq = value.indexOf('=');
    env[value.slice(0, eq)] = value.slice(eq + 1);
  } else if (name in args) {
    args[name] = name === 'csv' || name === 'mix' ? value : Number(value);
  } else {
    console.error('usage: soak.mjs [--duration S] [--warmup S] [--rate R] [--burst N] [--drain S] ' +
      '[--csv F] [--mix KIND,KIND] [--search-cache 0] [--env K=V]');
    process.exit(2);
  }
}

const TOKEN = 'soak-admin-token';
const SAMPLE_MS = 10_000;
const MAX_IN_FLIGHT = 64;  // beyond it a tick's request is skipped (and counted), never queued

const mock = await startMock(['--tokens', '24']);
const failing = await startMock(['--fail-rate', '1']);  // every answer a 500
const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-soak-'));
const upstream = `http://127.0.0.1:${mock.port}/v1`;
const gw = await startGateway(gatewayConfig({
  models: { 'mock-model': [upstream], 'failing-model': [`http://127.0.0.1:${failing.port}/v1`] },
  governance: { enabled: true, reconcile_interval: '0s' },
  store: { path: path.join(dir, 'turnpike.db') },
  call_log: { flush_interval: '200ms' },
}) + `search:\n  path: ${path.join(dir, 'search.db')}\n` +
  (args['search-cache'] ? '' : '  cache:\n    enabled: false\n'), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN, ...env } });

async function admin(method, route, body) {
  const r = await fetch(`${gw.url}/admin/v1/${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}
await admin('PUT', 'plans/p1', {});
await admin('POST', 'tenants', { id: 't1', plan: 'p1' });
const key = (await admin('POST', 'keys', { tenant: 't1', name: 'soak' })).body.key;
const json = { 'content-type': 'application/json' };
const created = await fetch(`${gw.url}/es/soak`, {
  method: 'PUT', headers: { ...json, authorization: `ApiKey ${key}` },
  body: JSON.stringify({ mappings: { properties: { title: { type: 'text' }, year: { type: 'integer' }, tags: { type: 'keyword' } } } }),
});
if (created.status !== 200) throw new Error(`creating the search index: ${created.status} ${await created.text()}`);
const bearer = { ...json, authorization: `Bearer ${key}` };
const chat = (extra = {}) => JSON.stringify({
  model: 'mock-model', messages: [{ role: 'user', content: 'Hello there, how are you?' }], ...extra,
});
const anthropic = (stream) => JSON.stringify({
  model: 'mock-model', max_tokens: 256, stream, messages: [{ role: 'user', content: 'Hello there' }],
});
const gemini = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] });

async function drain(r) {
  if (!r.body) return;
  const reader = r.body.getReader();
  while (!(await reader.read()).done) { /* the whole body */ }
}
const post = (route, headers, body) => fetch(`${gw.url}${route}`, { method: 'POST', headers, body });
// Runs one request and drains its body; resolves with its status (0 when the exchange failed).
async function exchange(route, headers, body) {
  try {
    const r = await post(route, headers, body);
    await drain(r);
    return r.status;
  } catch {
    return 0;
  }
}

let docSeq = 0;
const is = (want, got) => got === want || `status ${got}`;
// Each kind: [name, weight, run() -> true when the answer was the expected one].
const MIX = [
  ['plain', 20, async () => is(200, await exchange('/v1/chat/completions', bearer, chat()))],
  ['stream', 20, async () => is(200, await exchange('/v1/chat/completions', bearer, chat({ stream: true })))],
  ['anthropic', 8, async () => is(200, await exchange('/v1/messages',
    { ...json, 'x-api-key': key, 'anthropic-version': '2023-06-01' }, anthropic(true)))],
  ['gemini', 8, async () => is(200, await exchange('/v1beta/models/mock-model:streamGenerateContent?alt=sse',
    { ...json, 'x-goog-api-key': key }, gemini))],
  ['gemini_plain', 4, async () => is(200, await exchange('/v1beta/models/mock-model:generateContent',
    { ...json, 'x-goog-api-key': key }, gemini))],
  ['bad_key', 4, async () => is(401, await exchange('/v1/chat/completions',
    { ...json, authorization: 'Bearer tp-not-a-key' }, chat()))],
  ['bad_body', 4, async () => is(400, await exchange('/v1/chat/completions', bearer, '{"model":'))],
  ['upstream_500', 4, async () => {
    const status = await exchange('/v1/chat/completions', bearer, chat({ model: 'failing-model' }));
    return status >= 500 || status;
  }],
  // A reset mid-stream reaches the client as an error event or a cut stream: any end will do.
  ['upstream_reset', 2, async () => {
    await exchange('/v1/chat/completions', { ...bearer, 'x-mock-fault': 'reset' }, chat({ stream: true }));
    return true;
  }],
  ['disconnect', 6, async () => {
    const abort = new AbortController();
    try {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', signal: abort.signal,
        headers: { ...bearer, 'x-mock-tokens': '400', 'x-mock-inter-token-ms': '5' },
        body: chat({ stream: true }),
      });
      const reader = r.body.getReader();
      await reader.read();
      abort.abort();
      return r.status === 200;
    } catch {
      return false;
    }
  }],
  ['admin_key', 2, async () => {
    const created = await admin('POST', 'keys', { tenant: 't1', name: `k${docSeq++}` });
    if (created.status !== 201) return false;
    const revoked = await admin('POST', `keys/${created.body.id}/revoke`);
    if (revoked.status !== 200) return false;
    const deleted = await admin('DELETE', `keys/${created.body.id}`);
    return deleted.status === 200;
  }],
  ['search', 6, async () => {
    // 200 ids, rewritten in turn: the index stays the same size however long the soak runs.
    const lines = [];
    for (let i = 0; i < 5; i++) {
      const id = (docSeq++) % 200;
      lines.push(JSON.stringify({ index: { _index: 'soak', _id: String(id) } }),
        JSON.stringify({ title: `book ${id} of the soak`, year: 1900 + (id % 120), tags: ['a', `t${id % 7}`] }));
    }
    const es = { authorization: `ApiKey ${key}` };
    const bulk = await exchange('/es/_bulk?refresh=true', { ...es, 'content-type': 'application/x-ndjson' },
      lines.join('\n') + '\n');
    const query = await exchange('/es/soak/_search', { ...es, ...json },
      JSON.stringify({ query: { match: { title: 'book soak' } }, size: 5 }));
    return bulk === 200 && query === 200 ? true : `bulk ${bulk} search ${query}`;
  }],
];
// --mix plain,search: those kinds alone (to find which one a growth comes with).
if (args.mix) {
  const kinds = args.mix.split(',');
  for (let i = MIX.length - 1; i >= 0; i--) if (!kinds.includes(MIX[i][0])) MIX.splice(i, 1);
}
const totalWeight = MIX.reduce((s, [, w]) => s + w, 0);
const stats = Object.fromEntries(MIX.map(([name]) => [name, { ok: 0, bad: 0 }]));
let inFlight = 0;
let skipped = 0;

function pick() {
  let r = Math.random() * totalWeight;
  for (const kind of MIX) {
    r -= kind[1];
    if (r < 0) return kind;
  }
  return MIX[0];
}
function launch() {
  if (inFlight >= MAX_IN_FLIGHT) {
    skipped++;
    return;
  }
  const [name, , run] = pick();
  inFlight++;
  // run() answers true, or what it got instead (kept as the kind's last unexpected answer).
  run().then((ok) => {
    stats[name][ok === true ? 'ok' : 'bad']++;
    if (ok !== true) stats[name].last = String(ok);
  }, (e) => { stats[name].bad++; stats[name].last = String(e); })
    .finally(() => { inFlight--; });
}

const t0 = Date.now();
const samples = [];
writeFileSync(args.csv,
  'seconds,phase,rss_kib,anon_kib,file_kib,shmem_kib,store_cache_kib,requests,unexpected\n');
// VmRSS's parts (/proc/PID/status): RssAnon is the heap and stacks, where a leak shows;
// RssFile the mapped files (the binary's and the libraries' pages as code paths are first
// run); RssShmem the shared mappings (SQLite's -shm files, the counters' memfd).
function rssParts(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { anon: kib('RssAnon'), file: kib('RssFile'), shmem: kib('RssShmem') };
}
// The store's SQLite page cache (turnpike_store_cache_bytes), read from /metrics in the
// background; each sample writes the latest value.
let storeCacheKiB = '';
async function readStoreCache() {
  try {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const m = /^turnpike_store_cache_bytes (\S+)$/m.exec(text);
    if (m) storeCacheKiB = String(Math.round(Number(m[1]) / 1024));
  } catch { /* the next read tries again */ }
}
await readStoreCache();
const storeCacheReader = setInterval(readStoreCache, SAMPLE_MS / 2);
function sample(phase) {
  const rss = rssKiB(gw.pid);
  const parts = rssParts(gw.pid);
  const requests = Object.values(stats).reduce((s, v) => s + v.ok + v.bad, 0);
  const unexpected = Object.values(stats).reduce((s, v) => s + v.bad, 0);
  const seconds = Math.round((Date.now() - t0) / 1000);
  samples.push({ seconds, phase, rss, ...parts, storeCache: storeCacheKiB });
  appendFileSync(args.csv, `${seconds},${phase},${rss},${parts.anon},${parts.file},${parts.shmem},` +
    `${storeCacheKiB},${requests},${unexpected}\n`);
  return rss;
}

// The steady mix.
console.log(`gateway pid ${gw.pid}`);  // for tools that attach to it (gdb, perf) meanwhile
sample('start');
const sampler = setInterval(() => sample('mix'), SAMPLE_MS);
const ticker = setInterval(launch, 1000 / args.rate);
await sleep(args.duration * 1000);
clearInterval(ticker);
while (inFlight > 0) await sleep(50);
clearInterval(sampler);
const atWarmup = samples.find((s) => s.seconds >= args.warmup && s.phase === 'mix') ?? samples[0];
const endOfMix = sample('mix_end');
const mixEnd = samples.at(-1);

// The burst: `burst` concurrent streams of 200 tokens each, 10 ms apart (2 s per stream).
let peak = endOfMix;
const peakSampler = setInterval(() => { peak = Math.max(peak, rssKiB(gw.pid)); }, 200);
const burstResults = await Promise.all(Array.from({ length: args.burst }, () => exchange('/v1/chat/completions',
  { ...bearer, 'x-mock-tokens': '200', 'x-mock-inter-token-ms': '10' }, chat({ stream: true }))));
clearInterval(peakSampler);
const burstOk = burstResults.filter((s) => s === 200).length;
sample('burst_end');
const drainSamples = [];
for (let s = 0; s < args.drain; s += 10) {
  await sleep(SAMPLE_MS);
  drainSamples.push(sample('drained'));
}
const afterDrain = drainSamples.at(-1) ?? sample('drained');
clearInterval(storeCacheReader);

const summary = {
  env, duration_s: args.duration, rate: args.rate, stats, skipped,
  rss_kib: {
    start: samples[0].rss, warmup: atWarmup.rss, warmup_at_s: atWarmup.seconds, end_of_mix: endOfMix,
    end_vs_warmup_pct: Number((100 * (endOfMix - atWarmup.rss) / atWarmup.rss).toFixed(1)),
    burst_peak: peak, after_drain: afterDrain,
    anon: { warmup: atWarmup.anon, end_of_mix: mixEnd.anon,
      end_vs_warmup_pct: Number((100 * (mixEnd.anon - atWarmup.anon) / atWarmup.anon).toFixed(1)) },
    file: { warmup: atWarmup.file, end_of_mix: mixEnd.file },
    shmem: { warmup: atWarmup.shmem, end_of_mix: mixEnd.shmem },
    store_cache_kib: { warmup: atWarmup.storeCache, end_of_mix: mixEnd.storeCache },
    burst_returned_pct: peak > endOfMix ? Number((100 * (peak - afterDrain) / (peak - endOfMix)).toFixed(1)) : null,
  },
  burst: { streams: args.burst, ok: burstOk },
};
for (const [name, s] of Object.entries(stats)) {
  console.log(`${name.padEnd(15)} ok ${s.ok}  unexpected ${s.bad}${s.last ? ` (last: ${s.last})` : ''}`);
}
console.log(`RSS KiB: warm-up (${atWarmup.seconds} s) ${atWarmup.rss}, end of mix ${endOfMix} ` +
  `(${summary.rss_kib.end_vs_warmup_pct}%), burst peak ${peak}, ${args.drain} s after it ${afterDrain}; ` +
  `anonymous ${atWarmup.anon} -> ${mixEnd.anon} (${summary.rss_kib.anon.end_vs_warmup_pct}%), ` +
  `files ${atWarmup.file} -> ${mixEnd.file}, shared ${atWarmup.shmem} -> ${mixEnd.shmem}`);
console.log(JSON.stringify(summary));
await stopAll();
