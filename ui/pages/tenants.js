// Tenants and plans: the operator lists, creates, edits and suspends tenants, and creates and
// edits plans (PUT replaces a plan: the form sends the plan's other fields unchanged); a tenant's
// admin token sees its own tenant only.
import { get, patch, put, post } from '../api.js';
import { field, form, h, show, table, unixTime, usd } from '../dom.js';

function planOptions(plans) {
  return h('label', null, h('span', null, 'Plan'),
    h('select', { name: 'plan', required: true }, plans.map((p) => h('option', { value: p.id }, p.id))));
}

// A number field's value: undefined when empty (the field is then left out).
function optionalNumber(text) {
  return text === '' || text === undefined ? undefined : Number(text);
}

// The plan as PUT takes it: its current fields without the empty ones, then `changes`.
function planBody(plan, changes) {
  const body = {};
  for (const [k, v] of Object.entries(plan || {})) {
    if (k !== 'id' && v !== null) body[k] = v;
  }
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete body[k];
    else body[k] = v;
  }
  return body;
}

// A plan's budget-alert thresholds as shown and as typed: null (unset) is the gateway's own.
function alertsText(percents) {
  if (percents === null || percents === undefined) return 'gateway default';
  return percents.length ? percents.map((p) => `${p}%`).join(', ') : 'none';
}
function alertsOf(text) {
  const t = (text ?? '').trim();
  if (t === '') return undefined;  // left out: the gateway's
  if (t === 'none') return [];
  return t.split(',').map((p) => Number(p.trim()));
}

async function operatorPage(main) {
  const [tenants, plans] = await Promise.all([get('/admin/v1/tenants'), get('/admin/v1/plans')]);
  const toggle = (t) => h('button', {
    type: 'button',
    class: 'small',
    onclick: async () => {
      await patch(`/admin/v1/tenants/${encodeURIComponent(t.id)}`, { status: t.status === 'active' ? 'suspended' : 'active' });
      await operatorPage(main);
    },
  }, t.status === 'active' ? 'Suspend' : 'Activate');
  const rename = form('Edit a tenant', [
    h('label', null, h('span', null, 'Tenant'), h('select', { name: 'id' }, tenants.data.map((t) => h('option', { value: t.id }, t.id)))),
    field('Name', { name: 'name' }),
    planOptions(plans.data),
  ], 'Save', async (v) => {
    const body = { plan: v.plan };
    if (v.name) body.name = v.name;
    await patch(`/admin/v1/tenants/${encodeURIComponent(v.id)}`, body);
    await operatorPage(main);
  });
  show(main,
    h('h1', null, 'Tenants'),
    table([
      ['Id', (t) => t.id], ['Name', (t) => t.name], ['Plan', (t) => t.plan],
      ['Status', (t) => h('span', { class: t.status === 'active' ? 'good' : 'bad' }, t.status)],
      ['Created', (t) => unixTime(t.created_at)],
      ['', (t) => [toggle(t), ' ', h('a', { href: `/ui/keys?tenant=${encodeURIComponent(t.id)}` }, 'keys'), ' ',
        h('a', { href: `/ui/spend?tenant=${encodeURIComponent(t.id)}` }, 'spend')]],
    ], tenants.data, 'No tenants yet: create one below.'),
    h('div', { class: 'forms' },
      form('New tenant', [field('Id', { name: 'id', required: true, pattern: '[A-Za-z0-9._\\-]{1,64}' }), field('Name', { name: 'name' }), planOptions(plans.data)],
        'Create tenant', async (v) => {
          await post('/admin/v1/tenants', { id: v.id, name: v.name || v.id, plan: v.plan });
          await operatorPage(main);
        }),
      tenants.data.length ? rename : null),
    h('h1', null, 'Plans'),
    table([
      ['Id', (p) => p.id], ['Monthly budget', (p) => usd(p.monthly_budget_usd)],
      ['RPM', (p) => p.rpm ?? '—'], ['TPM', (p) => p.tpm ?? '—'],
      ['Models', (p) => (p.allowed_models.length ? p.allowed_models.join(', ') : 'all')],
      ['Cache', (p) => p.cache],
      ['Budget alerts', (p) => alertsText(p.budget_alerts)],
    ], plans.data, 'No plans yet: create one below.'),
    form('New or changed plan', [
      field('Id', { name: 'id', required: true, pattern: '[A-Za-z0-9._\\-]{1,64}' }),
      field('Monthly budget (USD)', { name: 'monthly_budget_usd', type: 'number', min: 0, step: 'any' }),
      field('RPM', { name: 'rpm', type: 'number', min: 1 }),
      field('TPM', { name: 'tpm', type: 'number', min: 1 }),
      field('Budget alerts (%)', { name: 'budget_alerts', placeholder: 'e.g. 50, 80, 100; none; empty: the gateway\'s', pattern: '\\s*(none|\\d+(\\s*,\\s*\\d+)*)?\\s*' }),
    ], 'Save plan', async (v) => {
      const existing = plans.data.find((p) => p.id === v.id);
      const body = planBody(existing, {
        monthly_budget_usd: optionalNumber(v.monthly_budget_usd),
        rpm: optionalNumber(v.rpm),
        tpm: optionalNumber(v.tpm),
        budget_alerts: alertsOf(v.budget_alerts),
      });
      await put(`/admin/v1/plans/${encodeURIComponent(v.id)}`, body);
      await operatorPage(main);
    }));
}

async function tenantPage(main, context) {
  const t = await get(`/admin/v1/tenants/${encodeURIComponent(context.tenant)}`);
  show(main, h('h1', null, `Tenant ${t.id}`),
    h('dl', { class: 'facts' },
      [['Name', t.name], ['Plan', t.plan], ['Status', t.status], ['Created', unixTime(t.created_at)]]
        .map(([k, v]) => [h('dt', null, k), h('dd', null, v)])));
}

export async function render(main, context) {
  if (context.operator) return operatorPage(main);
  return tenantPage(main, context);
}
