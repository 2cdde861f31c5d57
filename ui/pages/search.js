// Search indices: the search door's indices with their document counts, from its admin route
// (GET /admin/v1/search/indices; a tenant's session sees its own). Without the search door the
// route does not exist: the page says the door is not configured and makes no request that
// would fail.
import { get, hasRoute, query } from '../api.js';
import { h, notice, number, show, table, unixTime } from '../dom.js';

const INDICES = '/admin/v1/search/indices';

export async function render(main, context) {
  if (!hasRoute(INDICES)) {
    show(main, h('h1', null, 'Search'),
      h('p', { class: 'not-configured' }, 'Search: not configured'),
      notice("This gateway's admin API has no search index routes (the search door is off)."));
    return;
  }
  const indices = await get(`${INDICES}${query({ tenant: context.operator ? '' : context.tenant })}`);
  show(main, h('h1', null, 'Search indices'),
    table([['Index', (i) => i.index], ['Tenant', (i) => i.tenant],
      ['Documents', (i) => number(i.docs_count)], ['Created', (i) => unixTime(i.created_at)]],
    indices.data, 'No indices yet.'));
}
