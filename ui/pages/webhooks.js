// Webhooks: a tenant's endpoints (/admin/v1/tenants/{id}/webhooks), registering one (its signing
// secret shown this once) and deleting one; /ui/webhooks/<id>?tenant= lists an endpoint's
// deliveries, newest first, each replayable. The operator picks the tenant (?tenant=, the
// first tenant by default); a tenant's admin token sees its own. Without the webhook door the
// page says "not configured" and makes no request that would fail.
import { del, get, hasRoute, post, query } from '../api.js';
import { field, form, h, notice, show, table, unixTime } from '../dom.js';

const ENDPOINTS = '/admin/v1/tenants/{id}/webhooks';
const DELIVERIES_PAGE = 50;

const base = (tenant) => `/admin/v1/tenants/${encodeURIComponent(tenant)}`;

function tenantPicker(tenants, tenant, path) {
  if (tenants.length <= 1) return null;
  return h('p', null, 'Tenant: ', tenants.map((t) => [
    t === tenant ? h('strong', null, t) : h('a', { href: `${path}?tenant=${encodeURIComponent(t)}` }, t), ' ',
  ]));
}

async function endpoints(main, context, tenant, tenants, created) {
  const list = await get(`${base(tenant)}/webhooks`);
  const remove = (w) => h('button', {
    type: 'button',
    class: 'small danger',
    'data-delete': w.id,
    onclick: async () => {
      await del(`${base(tenant)}/webhooks/${encodeURIComponent(w.id)}`);
      await endpoints(main, context, tenant, tenants, null);
    },
  }, 'Delete');
  const secret = created ? h('div', { class: 'card secret' },
    h('h3', null, `Webhook ${created.id} registered`),
    h('p', null, 'Its signing secret is shown this once; store it now:'),
    h('code', { id: 'new-webhook-secret' }, created.secret)) : null;
  show(main,
    h('h1', null, `Webhooks of ${tenant}`),
    tenantPicker(tenants, tenant, '/ui/webhooks'),
    secret,
    table([
      ['Id', (w) => h('a', { href: `/ui/webhooks/${encodeURIComponent(w.id)}${query({ tenant })}` }, w.id)],
      ['URL', (w) => w.url],
      ['Events', (w) => (w.event_types.length ? w.event_types.join(', ') : 'every event')],
      ['Enabled', (w) => (w.enabled ? 'yes' : 'no')],
      ['Created', (w) => unixTime(w.created_at)],
      ['', remove],
    ], list.data, 'No webhooks yet.'),
    form('Register a webhook', [
      field('URL', { name: 'url', type: 'url', required: true, placeholder: 'https://example.com/hooks' }),
      field('Event types (comma-separated; empty: every event)', { name: 'event_types' }),
    ], 'Register', async (v) => {
      const body = { url: v.url };
      const types = (v.event_types || '').split(',').map((t) => t.trim()).filter(Boolean);
      if (types.length) body.event_types = types;
      const made = await post(`${base(tenant)}/webhooks`, body);
      await endpoints(main, context, tenant, tenants, made);
    }));
}

async function deliveries(main, tenant, id) {
  const endpoint = await get(`${base(tenant)}/webhooks/${encodeURIComponent(id)}`);
  const page = await get(`${base(tenant)}/webhooks/${encodeURIComponent(id)}/deliveries${query({ limit: DELIVERIES_PAGE })}`);
  const replay = (d) => h('button', {
    type: 'button',
    class: 'small',
    'data-replay': d.id,
    onclick: async () => {
      await post(`${base(tenant)}/webhook-deliveries/${encodeURIComponent(d.id)}/replay`);
      await deliveries(main, tenant, id);
    },
  }, 'Replay');
  show(main,
    h('a', { href: `/ui/webhooks${query({ tenant })}` }, '← Webhooks'),
    h('h1', null, `Webhook ${id}`),
    h('p', null, endpoint.url),
    h('h2', null, 'Deliveries'),
    table([
      ['Id', (d) => d.id], ['Event', (d) => d.event_type],
      ['Status', (d) => h('span', { class: d.status === 'delivered' ? 'good' : d.status === 'failed' ? 'bad' : '' }, d.status)],
      ['Attempts', (d) => d.attempts], ['Last error', (d) => d.last_error || '—'],
      ['Created', (d) => unixTime(d.created_at)], ['Delivered', (d) => unixTime(d.delivered_at)],
      ['', replay],
    ], page.data, 'No deliveries yet.'),
    page.has_more ? notice(`The newest ${DELIVERIES_PAGE} deliveries.`) : null);
}

export async function render(main, context) {
  if (!hasRoute(ENDPOINTS)) {
    show(main, h('h1', null, 'Webhooks'),
      h('p', { class: 'not-configured' }, 'Webhooks: not configured'),
      notice('The webhook outbox is off on this gateway (webhooks.enabled).'));
    return;
  }
  const params = new URLSearchParams(location.search);
  const tenants = context.operator ? (await get('/admin/v1/tenants')).data.map((t) => t.id) : [context.tenant];
  const tenant = context.operator ? params.get('tenant') || tenants[0] : context.tenant;
  if (!tenant) {
    show(main, h('h1', null, 'Webhooks'), notice('No tenants yet: webhooks belong to a tenant.'));
    return;
  }
  if (context.id) {
    await deliveries(main, tenant, context.id);
    return;
  }
  await endpoints(main, context, tenant, tenants, null);
}
