// Spend: the spend counters (/admin/v1/spend, one month a request: the store's per-month
// counters, never a sum over the call log) for the last months, by tenant and by key, as bar
// charts with the budget as a line. ?tenant=<id> narrows to one tenant and its keys.
import { get, query } from '../api.js';
import { barChart } from '../charts.js';
import { h, months, notice, show, table, usd } from '../dom.js';

const MONTHS = 6;

function chartFor(title, monthsList, rows, id, scope) {
  const bars = monthsList.map((m, i) => {
    const row = rows[i].find((r) => r.scope === scope && r.id === id);
    return { label: m, value: row ? row.spent_usd : 0 };
  });
  const latest = rows[rows.length - 1].find((r) => r.scope === scope && r.id === id);
  const budget = latest ? latest.budget_usd : null;
  return h('div', { class: 'card' }, h('h3', null, title),
    barChart(`${title}: spend per month`, bars, budget, (v) => usd(v)));
}

export async function render(main, context) {
  const params = new URLSearchParams(location.search);
  const tenant = context.operator ? params.get('tenant') || '' : context.tenant;
  const monthsList = months(MONTHS);
  const rows = [];
  for (const month of monthsList) {
    rows.push((await get(`/admin/v1/spend${query({ month, tenant })}`)).data);
  }
  const current = rows[rows.length - 1];
  const tenants = [...new Set(rows.flat().filter((r) => r.scope === 'tenant').map((r) => r.id))];
  const keys = [...new Set(rows.flat().filter((r) => r.scope === 'key').map((r) => r.id))];
  const charts = tenant
    ? [chartFor(`Tenant ${tenant}`, monthsList, rows, tenant, 'tenant'),
      ...keys.map((k) => chartFor(`Key ${k}`, monthsList, rows, k, 'key'))]
    : tenants.map((t) => chartFor(`Tenant ${t}`, monthsList, rows, t, 'tenant'));
  show(main,
    h('h1', null, tenant ? `Spend: ${tenant}` : 'Spend'),
    tenant && context.operator ? h('a', { href: '/ui/spend' }, '← Every tenant') : null,
    h('h2', null, `This month (${monthsList[MONTHS - 1]})`),
    table([
      ['Scope', (r) => r.scope],
      ['Id', (r) => (r.scope === 'tenant' && context.operator ? h('a', { href: `/ui/spend?tenant=${encodeURIComponent(r.id)}` }, r.id) : r.id)],
      ['Tenant', (r) => r.tenant],
      ['Spent', (r) => usd(r.spent_usd)],
      ['Reserved', (r) => usd(r.reserved_usd)],
      ['Budget', (r) => usd(r.budget_usd)],
    ], current, 'No spend this month.'),
    h('h2', null, `Per month (last ${MONTHS})`),
    charts.length ? h('div', { class: 'charts' }, charts) : notice('No spend yet.'),
    notice('Per-day and per-model spend: the store keeps monthly counters per tenant and per key only.'));
}
