// Agents and conversations: the agent door's admin routes (/admin/v1/agents) when the door is
// configured; otherwise "not configured", with no failing request.
import { get, hasRoute, query } from '../api.js';
import { h, notice, show, table, unixTime, usd } from '../dom.js';

const AGENTS = '/admin/v1/agents';

export async function render(main, context) {
  if (!hasRoute(AGENTS)) {
    show(main, h('h1', null, 'Agents'),
      h('p', { class: 'not-configured' }, 'Agents: not configured'),
      notice('The agent door is off on this gateway (agents.enabled, or governance off).'));
    return;
  }
  const agents = await get(`${AGENTS}${query({ tenant: context.operator ? '' : context.tenant })}`);
  show(main, h('h1', null, 'Agents'),
    table([
      ['Id', (a) => a.id], ['Tenant', (a) => a.tenant], ['Model', (a) => a.model],
      ['Version', (a) => a.version],
      ['Spent this month', (a) => (a.spend ? usd(a.spend.spent_usd) : '—')],
      ['Updated', (a) => unixTime(a.updated_at)],
    ], agents.data, 'No agents yet.'),
    h('h2', null, 'Conversations'),
    notice('Conversations are read through the OpenAI Conversations API with a key of their tenant; the admin API has no conversation routes.'));
}
