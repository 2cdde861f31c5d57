// The console's start: ask who is signed in (GET /ui/session, always 200); signed out, show the
// sign-in form and call nothing else; signed in, show the navigation and render the page that
// location.pathname names (/ui/<page>[/<id>]). Pages are plain links: each loads this again.
// When the page has rendered (or failed to), <body data-ready> is set: what the browser test
// waits for.
import { setAdminRoutes, setCsrfToken } from './api.js';
import { field, form, h, notice, show } from './dom.js';
import * as overview from './pages/overview.js';
import * as calls from './pages/calls.js';
import * as spend from './pages/spend.js';
import * as tenants from './pages/tenants.js';
import * as keys from './pages/keys.js';
import * as prices from './pages/prices.js';
import * as search from './pages/search.js';
import * as agents from './pages/agents.js';
import * as webhooks from './pages/webhooks.js';

const PAGES = { overview, calls, spend, tenants, keys, prices, search, agents, webhooks };

async function session(method, body) {
  const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch('/ui/session', init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((data.error && data.error.message) || response.statusText);
  return data;
}

function signInForm(main) {
  const token = field('Admin token', {
    type: 'password', name: 'token', required: true, autocomplete: 'current-password', autofocus: true,
  });
  show(main,
    h('h1', null, 'Sign in'),
    notice("The operator's admin token (TURNPIKE_ADMIN_TOKEN) or a tenant's admin token (tpa-…)."),
    form(null, [token], 'Sign in', async (values) => {
      await session('POST', { token: values.token });
      location.reload();
    }));
  main.querySelector('input').focus();
}

function signedInBar(me) {
  const who = document.getElementById('who');
  const out = h('button', {
    type: 'button',
    class: 'link',
    onclick: async () => {
      await session('DELETE');
      location.assign('/ui');
    },
  }, 'Sign out');
  show(who, me.tenant ? `tenant ${me.tenant}` : 'operator', ' · ', out);
  const nav = document.getElementById('nav');
  nav.hidden = false;
  for (const a of nav.querySelectorAll('a')) {
    if (location.pathname.startsWith(a.getAttribute('href'))) a.classList.add('current');
  }
}

async function main() {
  const mainEl = document.getElementById('main');
  const me = await session('GET');
  if (!me.signed_in) {
    signInForm(mainEl);
    return;
  }

  setCsrfToken(me.csrf_token);
  setAdminRoutes(me.admin_routes);
  signedInBar(me);
  const parts = location.pathname.split('/').filter(Boolean).slice(1);  // after "ui"
  const name = parts[0] || 'overview';
  const page = PAGES[name];
  if (!page) {
    show(mainEl, h('h1', null, 'No such page'), notice(`/ui/${name} is not a console page.`));
    return;
  }
  const context = { tenant: me.tenant, operator: !me.tenant, id: parts[1] ? decodeURIComponent(parts[1]) : null };
  try {
    await page.render(mainEl, context);
  } catch (error) {
    mainEl.append(notice(error.message, 'error'));
  }
}

main().finally(() => {
  document.body.dataset.ready = '1';
});
