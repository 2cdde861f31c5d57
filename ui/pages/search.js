// Search indices: shown from the search door's admin routes when this gateway has them
// (/admin/v1/search/...); without them the page says the door is not configured and makes no
// request that would fail.
import { get, hasRoute, query } from '../api.js';
import { h, notice, show, table } from '../dom.js';

const INDICES = '/admin/v1/search/indices';

export async function render(main, context) {
  if (!hasRoute(INDICES)) {
    show(main, h('h1', null, 'Search'),
      h('p', { class: 'not-configured' }, 'Search: not configured'),
      notice("This gateway's admin API has no search index routes (the search door is off, or it has no admin resources)."));
    return;
  }
  const indices = await get(`${INDICES}${query({ tenant: context.operator ? '' : context.tenant })}`);
  show(main, h('h1', null, 'Search indices'),
    table([['Index', (i) => i.index || i.id], ['Tenant', (i) => i.tenant], ['Documents', (i) => i.docs_count ?? '—']],
      indices.data, 'No indices yet.'));
}
