// Call log: the admin API's /admin/v1/calls with its filters (tenant, key, model, status, time
// range) kept in the page's URL, newest first, paged by the cursor; /ui/calls/<id> is one call
// with its phases and cost.
import { get, query } from '../api.js';
import { h, notice, number, show, table, time, usd } from '../dom.js';

const PAGE = 50;
const FILTERS = ['tenant', 'key', 'model', 'status', 'since', 'until'];

// A datetime-local value ("2026-12-05T13:00", UTC) as unix ms, or "".
function toMs(local) {
  if (!local) return '';
  const ms = Date.parse(`${local}:00Z`);
  return Number.isNaN(ms) ? '' : ms;
}

function filterForm(params, context) {
  const input = (name, label, attrs = {}) =>
    h('label', null, h('span', null, label), h('input', { name, value: params.get(name) || '', ...attrs }));
  return h('form', { class: 'filters', method: 'get', action: '/ui/calls' },
    context.operator ? input('tenant', 'Tenant') : null,
    input('key', 'Key'),
    input('model', 'Model'),
    input('status', 'Status', { type: 'number', min: 100, max: 599 }),
    input('since', 'Since (UTC)', { type: 'datetime-local' }),
    input('until', 'Until (UTC)', { type: 'datetime-local' }),
    h('button', { type: 'submit' }, 'Filter'),
    h('a', { href: '/ui/calls' }, 'Clear'));
}

function statusCell(c) {
  return h('span', { class: c.status >= 400 ? 'bad' : 'good' }, String(c.status));
}

async function list(main, context) {
  const params = new URLSearchParams(location.search);
  const q = {
    key: params.get('key'),
    model: params.get('model'),
    status: params.get('status'),
    since: toMs(params.get('since')),
    until: toMs(params.get('until')),
    cursor: params.get('cursor'),
    limit: PAGE,
  };
  if (context.operator) q.tenant = params.get('tenant');
  const page = await get(`/admin/v1/calls${query(q)}`);
  const rows = table([
    ['Time', (c) => h('a', { href: `/ui/calls/${c.id}` }, time(c.time_ms))],
    ['Tenant', (c) => c.tenant],
    ['Key', (c) => c.key],
    ['Model', (c) => c.model],
    ['Deployment', (c) => c.deployment],
    ['Status', statusCell],
    ['Tokens in/out', (c) => `${c.prompt_tokens}/${c.completion_tokens}`],
    ['Cost', (c) => usd(c.cost_usd)],
    ['Total', (c) => `${c.total_ms} ms`],
  ], page.data, 'No calls match.');
  let older = null;
  if (page.next_cursor !== null) {
    const next = new URLSearchParams(params);
    next.set('cursor', String(page.next_cursor));
    older = h('a', { href: `/ui/calls?${next}`, class: 'pager' }, 'Older →');
  }
  show(main, h('h1', null, 'Calls'), filterForm(params, context), rows, older);
}

function phaseBar(c) {
  const overhead = c.overhead_us === null ? null : c.overhead_us / 1000;
  const upstream = overhead === null ? null : Math.max(c.total_ms - overhead, 0);
  return table([
    ['Phase', (p) => p[0]],
    ['Time', (p) => (p[1] === null ? '—' : `${number(p[1], 2)} ms`)],
  ], [
    ['gateway overhead', overhead],
    ['upstream and stream', upstream],
    ['time to first token', c.ttft_ms],
    ['total', c.total_ms],
  ]);
}

// The cost's parts at the model's current price (the call's own cost is what was charged).
function costParts(c, price) {
  const M = 1e6;
  const uncached = Math.max(c.prompt_tokens - c.cached_tokens - c.cache_creation_tokens, 0);
  const output = Math.max(c.completion_tokens - c.reasoning_tokens, 0);
  const parts = [
    ['input', uncached, price && (uncached * price.input) / M],
    ['cached input', c.cached_tokens, price && (c.cached_tokens * price.cached_input) / M],
    ['cache write', c.cache_creation_tokens, price && (c.cache_creation_tokens * price.cache_write) / M],
    ['output', output, price && (output * price.output) / M],
    ['reasoning', c.reasoning_tokens, price && (c.reasoning_tokens * price.reasoning) / M],
  ];
  return table([
    ['Part', (p) => p[0]],
    ['Tokens', (p) => p[1]],
    ['Cost at current price', (p) => (price ? usd(p[2]) : '—')],
  ], parts);
}

async function detail(main, context) {
  const id = Number(context.id);
  const q = { cursor: id + 1, limit: 1 };
  if (!context.operator) q.tenant = context.tenant;
  const rows = Number.isInteger(id) && id > 0 ? (await get(`/admin/v1/calls${query(q)}`)).data : [];
  const c = rows.find((r) => r.id === id);
  if (!c) {
    show(main, h('h1', null, 'Call'), notice(`No call ${context.id}.`), h('a', { href: '/ui/calls' }, '← Calls'));
    return;
  }
  let price = null;
  if (context.operator) {
    price = (await get('/admin/v1/prices')).data.find((p) => p.model === c.model) || null;
  }
  const facts = [
    ['Request id', c.request_id], ['Time', time(c.time_ms)], ['Tenant', c.tenant], ['Key', c.key],
    ['Model', c.model], ['Deployment', c.deployment], ['Status', statusCell(c)],
    ['Error', c.error || '—'], ['Cost charged', `${usd(c.cost_usd)}${c.estimated ? ' (estimated)' : ''}${c.unpriced ? ' (unpriced)' : ''}`],
    ['Cache', c.cache || '—'],
  ];
  if (c.agent_id) facts.push(['Agent', `${c.agent_id} v${c.agent_version}`]);
  if (c.response_id) facts.push(['Response', c.response_id]);
  show(main,
    h('a', { href: '/ui/calls' }, '← Calls'),
    h('h1', null, `Call ${c.id}`),
    h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
    h('h2', null, 'Phases'), phaseBar(c),
    h('h2', null, 'Cost'), costParts(c, price),
    c.request_body ? [h('h2', null, 'Request body'), h('pre', null, c.request_body)] : null);
}

export async function render(main, context) {
  if (context.id) return detail(main, context);
  return list(main, context);
}
