// Agents and conversations: the agent door's admin routes (/admin/v1/agents, an agent's
// versions at /ui/agents/<id>, /admin/v1/conversations) when the door is configured; otherwise
// "not configured", with no failing request.
import { get, hasRoute, query } from '../api.js';
import { h, notice, show, table, unixTime, usd } from '../dom.js';

const AGENTS = '/admin/v1/agents';
const VERSIONS = '/admin/v1/agents/{id}/versions';
const CONVERSATIONS = '/admin/v1/conversations';

async function agentPage(main, context) {
  const tenant = context.operator ? '' : context.tenant;
  const path = `${AGENTS}/${encodeURIComponent(context.id)}`;
  const agent = await get(`${path}${query({ tenant })}`);
  const versions = hasRoute(VERSIONS) ? (await get(`${path}/versions${query({ tenant })}`)).data : [agent];
  show(main,
    h('a', { href: '/ui/agents' }, '← Agents'),
    h('h1', null, `Agent ${agent.id}`),
    h('dl', { class: 'facts' },
      h('dt', null, 'Tenant'), h('dd', null, agent.tenant),
      h('dt', null, 'Model'), h('dd', null, agent.model),
      h('dt', null, 'Version'), h('dd', null, String(agent.version)),
      h('dt', null, 'Monthly budget'), h('dd', null, usd(agent.monthly_budget_usd)),
      h('dt', null, 'Spent this month'), h('dd', null, agent.spend ? usd(agent.spend.spent_usd) : '—')),
    h('h2', null, 'Instructions'),
    h('pre', null, agent.instructions || '(none)'),
    h('h2', null, 'Versions'),
    table([
      ['Version', (v) => v.version], ['Model', (v) => v.model],
      ['Tools', (v) => (v.tools || []).length],
      ['Max output tokens', (v) => v.max_output_tokens ?? '—'],
      ['Updated', (v) => unixTime(v.updated_at)],
    ], versions, 'No versions.'));
}

export async function render(main, context) {
  if (!hasRoute(AGENTS)) {
    show(main, h('h1', null, 'Agents'),
      h('p', { class: 'not-configured' }, 'Agents: not configured'),
      notice('The agent door is off on this gateway (agents.enabled, or governance off).'));
    return;
  }
  if (context.id) {
    await agentPage(main, context);
    return;
  }
  const tenant = context.operator ? '' : context.tenant;
  const agents = await get(`${AGENTS}${query({ tenant })}`);
  const conversations = hasRoute(CONVERSATIONS) ? (await get(`${CONVERSATIONS}${query({ tenant })}`)).data : null;
  show(main, h('h1', null, 'Agents'),
    table([
      ['Id', (a) => h('a', { href: `/ui/agents/${encodeURIComponent(a.id)}` }, a.id)],
      ['Tenant', (a) => a.tenant], ['Model', (a) => a.model],
      ['Version', (a) => a.version],
      ['Spent this month', (a) => (a.spend ? usd(a.spend.spent_usd) : '—')],
      ['Updated', (a) => unixTime(a.updated_at)],
    ], agents.data, 'No agents yet.'),
    h('h2', null, 'Conversations'),
    conversations === null
      ? notice('This gateway lists no conversations (no /admin/v1/conversations route).')
      : table([
        ['Id', (c) => c.id], ['Tenant', (c) => c.tenant],
        ['Metadata', (c) => JSON.stringify(c.metadata)],
        ['Created', (c) => unixTime(c.created_at)],
      ], conversations, 'No conversations yet.'));
}
