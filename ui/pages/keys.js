// Virtual keys: list (?tenant= narrows), create (the secret is shown once, here, and never
// again) and revoke. A tenant's admin token sees and makes its own tenant's keys only.
import { get, post, query } from '../api.js';
import { field, form, h, show, table, unixTime, usd } from '../dom.js';

function optionalNumber(text) {
  return text === '' || text === undefined ? undefined : Number(text);
}

async function page(main, context, created) {
  const params = new URLSearchParams(location.search);
  const tenant = context.operator ? params.get('tenant') || '' : context.tenant;
  const keys = await get(`/admin/v1/keys${query({ tenant })}`);
  const tenants = context.operator ? (await get('/admin/v1/tenants')).data.map((t) => t.id) : [context.tenant];
  const revoke = (k) => (k.status !== 'active' ? null : h('button', {
    type: 'button',
    class: 'small danger',
    'data-revoke': k.id,
    onclick: async () => {
      await post(`/admin/v1/keys/${encodeURIComponent(k.id)}/revoke`);
      await page(main, context, null);
    },
  }, 'Revoke'));
  const secret = created ? h('div', { class: 'card secret' },
    h('h3', null, `Key ${created.id} created`),
    h('p', null, 'Its secret is shown this once; store it now:'),
    h('code', { id: 'new-key-secret' }, created.key)) : null;
  show(main,
    h('h1', null, tenant ? `Keys of ${tenant}` : 'Keys'),
    secret,
    table([
      ['Id', (k) => k.id], ['Tenant', (k) => k.tenant], ['Name', (k) => k.name],
      ['Status', (k) => h('span', { class: k.status === 'active' ? 'good' : 'bad' }, k.status)],
      ['Monthly budget', (k) => usd(k.monthly_budget_usd)],
      ['RPM', (k) => k.rpm ?? '—'],
      ['Expires', (k) => unixTime(k.expires_at)],
      ['Created', (k) => unixTime(k.created_at)],
      ['', revoke],
    ], keys.data, 'No keys yet.'),
    tenants.length ? form('New key', [
      h('label', null, h('span', null, 'Tenant'), h('select', { name: 'tenant' },
        tenants.map((t) => h('option', { value: t, selected: t === tenant }, t)))),
      field('Name', { name: 'name' }),
      field('Monthly budget (USD)', { name: 'monthly_budget_usd', type: 'number', min: 0, step: 'any' }),
      field('RPM', { name: 'rpm', type: 'number', min: 1 }),
    ], 'Create key', async (v) => {
      const body = { tenant: v.tenant, name: v.name };
      const budget = optionalNumber(v.monthly_budget_usd);
      const rpm = optionalNumber(v.rpm);
      if (budget !== undefined) body.monthly_budget_usd = budget;
      if (rpm !== undefined) body.rpm = rpm;
      const made = await post('/admin/v1/keys', body);
      await page(main, context, made);
    }) : h('p', { class: 'muted' }, 'Create a tenant first.'));
}

export async function render(main, context) {
  return page(main, context, null);
}
