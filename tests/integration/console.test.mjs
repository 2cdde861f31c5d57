// The web console (/ui, src/doors/ui/ and ui/) in a real browser: Debian's chromium, headless,
// driven by puppeteer-core. Signed out, every page shows the sign-in form and calls nothing
// else; signed in (token typed, Enter), every page opened directly by its URL loads with no
// console error and no response >= 400; a call made through the gateway is in the call log; a
// key made in the console works until it is revoked in the console; the spend chart has bars
// and a budget line, and the per-day chart and per-model table (the daily counters) the calls'
// spend; an agent's page lists its versions; a webhook's page its deliveries; a cookie write without the CSRF token is refused (403). Without an admin
// token, or with `ui: {enabled: false}`, /ui is 404. Screenshots go to artifacts/console/
// (gitignored).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { startMock, startGovernedGateway, startGateway, gatewayConfig, stopAll, chatBody, eventually, esRequest } from './lib/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(here, 'artifacts', 'console');
const TOKEN = 'test-admin-token';
const PAGES = ['overview', 'calls', 'spend', 'tenants', 'keys', 'prices', 'search', 'agents', 'webhooks'];
// 16 completion tokens at 1000 USD per million: 0.016 USD a call, against a 1 USD budget.
const PRICES = { 'mock-model': { input: 0, output: 1000, max_output_tokens: 1000 } };

let gw;
let admin;
let firstKey;
let browser;
before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const mock = await startMock(['--tokens', '16']);
  const governed = await startGovernedGateway({
    name: 'console', models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] }, prices: PRICES,
  });
  ({ gw, admin } = governed);
  firstKey = governed.key;
  assert.equal((await admin('PUT', 'plans/p1', { monthly_budget_usd: 1 })).status, 200);
  browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'],
  });
});
after(async () => {
  if (browser) await browser.close();
  await stopAll();
});

function chat(key) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: chatBody({ max_tokens: 100 }),
  });
}

// A page that records every console error, page error and response >= 400, and every request.
async function watchedPage() {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const seen = { errors: [], failed: [], requests: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(`${page.url()}: ${m.text()}`); });
  page.on('pageerror', (e) => seen.errors.push(`${page.url()}: ${e.message}`));
  page.on('response', (r) => { if (r.status() >= 400) seen.failed.push(`${r.status()} ${r.url()}`); });
  page.on('request', (r) => seen.requests.push(new URL(r.url()).pathname));
  return { page, seen };
}

// Opens /ui/<name> by URL and waits until the page has rendered (app.js sets <body data-ready>).
async function open(page, name) {
  await page.goto(`${gw.url}/ui/${name}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready]');
}

async function cookieHeader(page) {
  const cookies = await page.cookies(`${gw.url}/admin/v1/tenants`);
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

test('the console: sign in, every page, call log, keys, spend, CSRF, sign out', async () => {
  assert.equal((await chat(firstKey)).status, 200);
  const { page, seen } = await watchedPage();

  // Signed out: the form, and no data call.
  await open(page, 'calls');
  assert.ok(await page.$('form input[type=password][name=token]'), 'the sign-in form');
  assert.deepEqual(seen.requests.filter((p) => !p.startsWith('/ui')), [], 'no data calls signed out');
  await page.screenshot({ path: path.join(ARTIFACTS, 'sign-in.png') });

  // Sign in: type the token, press Enter.
  await page.type('input[name=token]', TOKEN);
  await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.keyboard.press('Enter')]);
  await page.waitForSelector('body[data-ready] #nav:not([hidden])');
  const cookies = await page.cookies(`${gw.url}/ui`);
  const session = cookies.find((c) => c.name === 'tp_session');
  assert.ok(session && session.httpOnly && session.sameSite === 'Strict' && session.expires > 0, JSON.stringify(cookies));

  // Every page by its URL.
  for (const name of PAGES) {
    await open(page, name);
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  }
  await open(page, 'search');
  assert.match(await page.$eval('main', (m) => m.textContent), /not configured/);

  // A plan's own budget-alert thresholds, set in the plans form and shown in its table.
  await open(page, 'tenants');
  const planForm = await page.$('form:has(input[name=budget_alerts])');
  await (await planForm.$('input[name=id]')).type('p1');
  await (await planForm.$('input[name=monthly_budget_usd]')).type('1');
  await (await planForm.$('input[name=budget_alerts]')).type('75, 25');
  await (await planForm.$('button')).click();
  await page.waitForFunction(() => document.querySelector('main').textContent.includes('25%, 75%'));
  assert.deepEqual((await admin('GET', 'plans')).body.data.find((p) => p.id === 'p1').budget_alerts, [25, 75]);

  // The chat call is in the call log, and its page opens.
  const keyId = (await admin('GET', 'keys?tenant=t1')).body.data[0].id;
  await eventually(async () => {
    await open(page, 'calls');
    const text = await page.$eval('main table', (t) => t.textContent);
    assert.ok(text.includes('mock-model') && text.includes(keyId), text);
  });
  const href = await page.$eval('main table tbody a', (a) => a.getAttribute('href'));
  await open(page, href.replace('/ui/', ''));
  assert.match(await page.$eval('main', (m) => m.textContent), /Phases[\s\S]*gateway overhead[\s\S]*Cost/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'call.png'), fullPage: true });

  // The spend chart: bars with data and the plan's budget line.
  await open(page, 'spend?tenant=t1');
  const chart = await page.$eval('svg.chart', (svg) => ({
    bars: [...svg.querySelectorAll('rect.bar')].filter((r) => Number(r.getAttribute('height')) > 0).length,
    budget: svg.querySelectorAll('line.budget').length,
  }));
  assert.ok(chart.bars >= 1, JSON.stringify(chart));
  assert.equal(chart.budget, 1);
  // Per day (the daily counters): 30 days, today's bar with the calls' spend, the budget per
  // day as a line; per model: the model's row.
  const daily = await page.$eval('#spend-per-day svg', (svg) => ({
    days: svg.querySelectorAll('rect.bar').length,
    spent: [...svg.querySelectorAll('rect.bar')].filter((r) => Number(r.getAttribute('height')) > 0).length,
    budget: svg.querySelectorAll('line.budget').length,
  }));
  assert.ok(daily.days === 30 && daily.spent >= 1 && daily.budget === 1, JSON.stringify(daily));
  assert.match(await page.$eval('main', (m) => m.textContent), /Per model[\s\S]*mock-model/);
  const perDay = await admin('GET', 'spend/daily?tenant=t1');
  assert.equal(perDay.status, 200);
  assert.equal(perDay.body.data.length, 1, JSON.stringify(perDay.body));
  assert.equal(perDay.body.data[0].model, 'mock-model');
  assert.ok(perDay.body.data[0].requests >= 1 && perDay.body.data[0].cost_usd > 0, JSON.stringify(perDay.body));

  // An agent's page lists its versions; a webhook's page its (no) deliveries.
  const agent = await admin('POST', 'agents', { tenant: 't1', model: 'mock-model', instructions: 'Be brief.' });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  assert.equal((await admin('POST', `agents/${agent.body.id}`, { instructions: 'Be briefer.' })).status, 200);
  await open(page, `agents/${agent.body.id}`);
  assert.equal(await page.$$eval('main table tbody tr', (rows) => rows.length), 2, 'two versions');
  const hook = await admin('POST', 'tenants/t1/webhooks', { url: 'http://127.0.0.1:9/hooks' });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  await open(page, 'webhooks?tenant=t1');
  assert.match(await page.$eval('main table', (t) => t.textContent), new RegExp(hook.body.id));
  await open(page, `webhooks/${hook.body.id}?tenant=t1`);
  assert.match(await page.$eval('main', (m) => m.textContent), /Deliveries/);

  // A key made in the console works until it is revoked in the console.
  await open(page, 'keys?tenant=t1');
  await page.type('form input[name=name]', 'from-the-console');
  await page.click('form button[type=submit]');
  await page.waitForSelector('#new-key-secret');
  const secret = await page.$eval('#new-key-secret', (c) => c.textContent);
  assert.equal((await chat(secret)).status, 200);
  const made = (await admin('GET', 'keys?tenant=t1')).body.data.find((k) => k.name === 'from-the-console');
  await page.click(`button[data-revoke="${made.id}"]`);
  await page.waitForFunction((id) => !document.querySelector(`button[data-revoke="${id}"]`), {}, made.id);
  // A revoked key is refused on the next call with a 401 (an invalid credential, as an unknown
  // key; a suspended tenant is a 403), its message naming the revocation.
  const refusedKey = await chat(secret);
  assert.equal(refusedKey.status, 401);
  assert.match((await refusedKey.json()).error.message, /revoked/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'keys.png'), fullPage: true });

  // A cookie write without the CSRF token is refused; with it, it is done.
  const cookie = await cookieHeader(page);
  const write = (headers) => fetch(`${gw.url}/admin/v1/tenants`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id: `t-${Object.keys(headers).length}`, plan: 'p1' }),
  });
  const refused = await write({});
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error.type, 'forbidden');
  const me = await (await fetch(`${gw.url}/ui/session`, { headers: { cookie } })).json();
  assert.equal((await write({ 'x-csrf-token': me.csrf_token })).status, 201);
  assert.equal((await fetch(`${gw.url}/admin/v1/tenants`, { headers: { cookie } })).status, 200, 'a read needs no CSRF token');

  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.failed, []);

  // Sign out: back to the form; every page shows it and calls nothing.
  await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('#who button')]);
  await page.waitForSelector('body[data-ready] input[name=token]');
  assert.equal((await page.cookies(`${gw.url}/ui`)).filter((c) => c.name === 'tp_session').length, 0);
  seen.requests.length = 0;
  for (const name of PAGES) {
    await open(page, name);
    assert.ok(await page.$('main input[type=password][name=token]'), name);
  }
  assert.deepEqual(seen.requests.filter((p) => !p.startsWith('/ui')), []);
  assert.equal((await fetch(`${gw.url}/admin/v1/tenants`, { headers: { cookie: '' } })).status, 401);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.failed, []);
  await page.close();
});

test('with the search door on, the search page lists its indices and their documents', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-console-search-'));
  const governed = await startGovernedGateway({
    name: 'console-search', models: { 'mock-model': ['http://127.0.0.1:9/v1'] },
    sections: { search: { path: path.join(dir, 'search.db') } },
  });
  const created = await esRequest(governed.gw, governed.key, 'PUT', 'library', { mappings: { properties: { n: { type: 'long' } } } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const docs = [1, 2].map((n) => `{"index":{"_id":"d${n}"}}\n{"n":${n}}\n`).join('');
  const bulk = await esRequest(governed.gw, governed.key, 'POST', 'library/_bulk?refresh=true', docs, true);
  assert.equal(bulk.body.errors, false, JSON.stringify(bulk.body));

  const { page, seen } = await watchedPage();
  await page.goto(`${governed.gw.url}/ui/search`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready]');
  await page.type('input[name=token]', TOKEN);
  await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.keyboard.press('Enter')]);
  await page.waitForSelector('body[data-ready] main table');
  const rows = await page.$$eval('main table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.deepEqual(rows.map((r) => r.slice(0, 3)), [['library', 't1', '2']]);
  assert.match(rows[0][3], /^\d{4}-\d{2}-\d{2} /);
  await page.screenshot({ path: path.join(ARTIFACTS, 'search-indices.png'), fullPage: true });
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.failed, []);
  await page.close();
});

test('without an admin token, or with ui.enabled false, /ui is 404; else the shell for every page path', async () => {
  const mock = await startMock();
  const models = { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-console-'));
  const noToken = await startGateway(gatewayConfig({ models, governance: { enabled: true }, store: { path: path.join(dir, 'turnpike.db') } }),
    { env: { TURNPIKE_ADMIN_TOKEN: '' } });
  assert.equal((await fetch(`${noToken.url}/ui`)).status, 404);
  assert.equal((await fetch(`${noToken.url}/ui/overview`)).status, 404);
  const off = await startGateway(gatewayConfig({
    models, governance: { enabled: true }, store: { path: path.join(dir, 'off.db') }, sections: { ui: { enabled: false } },
  }), { env: { TURNPIKE_ADMIN_TOKEN: TOKEN } });
  assert.equal((await fetch(`${off.url}/ui`)).status, 404);
  assert.equal((await fetch(`${off.url}/ui/session`)).status, 404);
  assert.equal((await fetch(`${off.url}/admin/v1/tenants`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  // With the token: the shell for every page path, assets cached for a year.
  const shell = await fetch(`${gw.url}/ui/calls/123`);
  assert.equal(shell.status, 200);
  const html = await shell.text();
  const asset = /src="(\/ui\/assets\/[^"]+\/app\.js)"/.exec(html)[1];
  const js = await fetch(`${gw.url}${asset}`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('cache-control'), /max-age=31536000, immutable/);
  assert.equal((await fetch(`${gw.url}${asset}`, { headers: { 'if-none-match': js.headers.get('etag') } })).status, 304);
});
