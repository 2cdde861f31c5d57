// Spend: the store's spend counters, never a sum over the call log. Per month
// (/admin/v1/spend, one month a request: the per-month counters of each tenant and key) for the
// last months, as bar charts with the budget as a line; per day and per model
// (/admin/v1/spend/daily: the daily counters) for the last days, a bar chart whose budget line is
// the month's budget spread over its days, and a table by model. ?tenant=<id> narrows to one
// tenant and its keys.
import { get, hasRoute, query } from '../api.js';
import { barChart } from '../charts.js';
import { h, months, notice, number, show, table, usd } from '../dom.js';

const MONTHS = 6;
const DAYS = 30;
const DAILY = '/admin/v1/spend/daily';
const TICK_EVERY = 5;  // days between the per-day chart's axis labels

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

// "YYYY-MM-DD" of the last `count` days (UTC), oldest first.
function lastDays(count) {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const out = [];
  for (let i = count - 1; i >= 0; i--) out.push(new Date(today - i * 86400000).toISOString().slice(0, 10));
  return out;
}

function daysInThisMonth() {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
}

// The per-day chart and the per-model table from the daily counters (rows by day and model).
function dailySection(days, rows, monthlyBudget) {
  const perDay = new Map(days.map((d) => [d, 0]));
  const perModel = new Map();
  for (const r of rows) {
    perDay.set(r.day, (perDay.get(r.day) || 0) + r.cost_usd);
    const m = perModel.get(r.model) || { model: r.model, cost_usd: 0, requests: 0, prompt_tokens: 0, completion_tokens: 0 };
    m.cost_usd += r.cost_usd;
    m.requests += r.requests;
    m.prompt_tokens += r.prompt_tokens;
    m.completion_tokens += r.completion_tokens;
    perModel.set(r.model, m);
  }
  const bars = days.map((d, i) => ({
    label: d, value: perDay.get(d) || 0, tick: i % TICK_EVERY === TICK_EVERY - 1 || i === days.length - 1 ? d.slice(5) : '',
  }));
  const pace = monthlyBudget === null || monthlyBudget === undefined ? null : monthlyBudget / daysInThisMonth();
  const models = [...perModel.values()].sort((a, b) => b.cost_usd - a.cost_usd);
  const modelBars = models.map((m) => ({ label: m.model, value: m.cost_usd }));
  return [
    h('h2', null, `Per day (last ${DAYS} days)`),
    h('div', { class: 'charts' },
      h('div', { class: 'card', id: 'spend-per-day' }, h('h3', null, pace === null ? 'Spend per day' : 'Spend per day, budget per day as a line'),
        barChart('Spend per day', bars, pace, (v) => usd(v))),
      models.length ? h('div', { class: 'card', id: 'spend-per-model' }, h('h3', null, 'Spend per model'),
        barChart('Spend per model', modelBars, null, (v) => usd(v))) : null),
    h('h2', null, `Per model (last ${DAYS} days)`),
    table([
      ['Model', (m) => m.model],
      ['Requests', (m) => number(m.requests)],
      ['Tokens in', (m) => number(m.prompt_tokens)],
      ['Tokens out', (m) => number(m.completion_tokens)],
      ['Spent', (m) => usd(m.cost_usd)],
    ], models, 'No spend in these days.'),
  ];
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
  let daily = [notice('Per-day spend: this gateway has no daily counters route.')];
  if (hasRoute(DAILY)) {
    const days = lastDays(DAYS);
    const answer = await get(`${DAILY}${query({ from: days[0], to: days[DAYS - 1], tenant, group_by: 'model' })}`);
    const own = tenant ? current.find((r) => r.scope === 'tenant' && r.id === tenant) : null;
    daily = dailySection(days, answer.data, own ? own.budget_usd : null);
  }
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
    ...daily,
    h('h2', null, `Per month (last ${MONTHS})`),
    charts.length ? h('div', { class: 'charts' }, charts) : notice('No spend yet.'));
}
