// Overview: the gateway live, from /metrics every few seconds (the operator only: the metrics
// are every tenant's) — requests per second, error rate, in flight, p50/p99 gateway overhead
// and time to first token, cache hit rate when a cache served — and each deployment's health
// over the last calls of the call log (the operator's, or the tenant's own).
import { get } from '../api.js';
import { lineChart } from '../charts.js';
import { h, notice, number, show, table } from '../dom.js';
import { parse, quantile, sum } from '../metrics.js';

const POLL_MS = 3000;
const HISTORY = 40;
const RECENT_CALLS = 200;
// The console's own requests are not traffic.
const TRAFFIC = (labels) => labels.route !== 'ui' && labels.route !== 'admin' && labels.route !== 'metrics';

function errorStatus(status) {
  return status === '5xx' || status === '4xx' || Number(status) >= 400;
}

function ms(seconds) {
  return seconds === null || seconds === Infinity ? '—' : `${number(seconds * 1000, 1)} ms`;
}

function tile(label, value) {
  return h('div', { class: 'tile' }, h('div', { class: 'tile-value' }, value), h('div', { class: 'tile-label' }, label));
}

async function deployments(context) {
  const q = context.operator ? '' : `&tenant=${encodeURIComponent(context.tenant)}`;
  const calls = (await get(`/admin/v1/calls?limit=${RECENT_CALLS}${q}`)).data;
  const by = new Map();
  for (const c of calls) {
    const name = c.deployment || '(none)';
    const d = by.get(name) || { name, calls: 0, errors: 0, total: 0, ttft: [], model: c.model };
    d.calls += 1;
    if (c.status >= 400) d.errors += 1;
    d.total += c.total_ms;
    if (c.ttft_ms !== null) d.ttft.push(c.ttft_ms);
    by.set(name, d);
  }
  return table([
    ['Deployment', (d) => d.name],
    ['Model', (d) => d.model],
    ['Calls', (d) => d.calls],
    ['Errors', (d) => `${d.errors} (${number((100 * d.errors) / d.calls, 1)}%)`],
    ['Mean latency', (d) => `${number(d.total / d.calls, 1)} ms`],
    ['Health', (d) => h('span', { class: d.errors / d.calls > 0.05 ? 'bad' : 'good' }, d.errors / d.calls > 0.05 ? 'failing' : 'ok')],
  ], [...by.values()], `No calls in the log yet.`);
}

export async function render(main, context) {
  const tiles = h('div', { class: 'tiles' });
  const chart = h('div', { class: 'card' });
  const health = h('div');
  show(main, h('h1', null, 'Overview'), tiles, chart,
    h('h2', null, `Deployments (last ${RECENT_CALLS} calls)`), health);
  show(health, await deployments(context));
  if (!context.operator) {
    show(tiles, notice("The gateway's metrics are the operator's; a tenant sees its own calls below."));
    return;
  }
  const rates = [];
  let previous = null;
  const tick = async () => {
    const text = await fetch('/metrics').then((r) => r.text());
    const samples = parse(text);
    const now = performance.now();
    const total = sum(samples, 'turnpike_requests_total', TRAFFIC);
    const errors = sum(samples, 'turnpike_requests_total', (l) => TRAFFIC(l) && errorStatus(l.status));
    let rate = 0;
    let errorRate = null;
    if (previous) {
      const dt = (now - previous.at) / 1000;
      rate = dt > 0 ? (total - previous.total) / dt : 0;
      const dn = total - previous.total;
      errorRate = dn > 0 ? (errors - previous.errors) / dn : 0;
    }
    previous = { at: now, total, errors };
    rates.push(rate);
    if (rates.length > HISTORY) rates.shift();
    const hits = sum(samples, 'turnpike_cache_hits_total');
    const misses = sum(samples, 'turnpike_cache_misses_total');
    show(tiles,
      tile('requests/s', number(rate, 2)),
      tile('error rate', errorRate === null ? '—' : `${number(errorRate * 100, 1)}%`),
      tile('in flight', number(sum(samples, 'turnpike_requests_in_flight'))),
      tile('overhead p50', ms(quantile(samples, 'turnpike_gateway_overhead_seconds', 0.5))),
      tile('overhead p99', ms(quantile(samples, 'turnpike_gateway_overhead_seconds', 0.99))),
      tile('TTFT p50', ms(quantile(samples, 'turnpike_ttft_seconds', 0.5))),
      tile('TTFT p99', ms(quantile(samples, 'turnpike_ttft_seconds', 0.99))),
      hits + misses > 0 ? tile('cache hit rate', `${number((100 * hits) / (hits + misses), 1)}%`) : null,
      tile('requests (since start)', number(total)));
    show(chart, h('h3', null, 'Requests per second'), lineChart('requests per second', rates, (v) => number(v, 1)));
  };
  await tick();
  setInterval(() => tick().catch(() => {}), POLL_MS);
}
