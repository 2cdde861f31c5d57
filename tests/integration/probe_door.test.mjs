// The probe door (tests/doors/probe/): a door that exists only for the tests, registered with
// one line in its own binary (turnpike-probe), proving from outside the product's doors that a
// door can receive a hand-off (model "probe:<model>" on POST /v1/responses), call a model through
// the model call with a recorder attached (governed by the core's chain, usage in the call log),
// own a store role with a migration on both engines, and add an admin resource.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startMock, startGovernedGateway, stopAll, eventually, metricsOf, PROBE_BIN } from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

const TOKENS = 4;
after(async () => { await stopAll(); stopAllPostgres(); });

const ENGINES = [
  { name: 'sqlite', store: async () => ({}) },
  {
    name: 'postgres',
    skip: needsPostgres(),
    store: async () => ({ engine: 'postgres', url: (await startPostgres()).url }),
  },
];

async function post(gw, body, key) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

for (const engine of ENGINES) describe(`the probe door (${engine.name})`, { skip: engine.skip }, () => {
  test('handed over, a recorded model call, its own table, its own admin route', async () => {
    assert.ok(existsSync(PROBE_BIN), `${PROBE_BIN} is built`);
    const mock = await startMock(['--tokens', String(TOKENS)]);
    const base = `http://127.0.0.1:${mock.port}`;
    const { gw, key, admin, calls } = await startGovernedGateway({
      name: `probe-${engine.name}`,
      bin: PROBE_BIN,
      models: {
        chat: [`${base}/v1`],
        claude: [{ provider: 'anthropic', base_url: base, api_key: 'sk-ant-test', model: 'claude-upstream' }],
      },
      store: await engine.store(),
    });

    // Handed over by the LLM door, answered by the probe door, through two dialects.
    const answers = [];
    for (const model of ['chat', 'claude']) {
      const r = await post(gw, { model: `probe:${model}`, input: 'Say four words.' }, key);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.object, 'probe.answer');
      assert.equal(r.body.model, model);
      assert.equal(r.body.streamed, true);
      assert.equal(r.body.text.split(' ').filter(Boolean).length, TOKENS, r.body.text);
      // The recorder kept every event: the start, the text deltas, the finish, usage and end.
      assert.ok(r.body.events > TOKENS, JSON.stringify(r.body));
      assert.ok(r.body.id > 0);
      answers.push(r.body);
    }
    // The same route without the prefix is the LLM door's own.
    const own = await post(gw, { model: 'chat', input: 'Hi.' }, key);
    assert.equal(own.status, 200);
    assert.equal(own.body.object, 'response');

    // The core's governance ran in the probe door's chain: no key, an OpenAI-shaped 401.
    const anonymous = await post(gw, { model: 'probe:chat', input: 'Hi.' });
    assert.equal(anonymous.status, 401);
    assert.equal(typeof anonymous.body.error.message, 'string');
    // The door's own errors, in the OpenAI shape naming the field.
    const unknown = await post(gw, { model: 'probe:nope', input: 'Hi.' }, key);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.param, 'model');
    const bad = await post(gw, { model: 'probe:chat', input: 7 }, key);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'input');

    // Its table, through its admin route (the admin token first, as every admin route).
    const listed = await admin('GET', 'probe/answers');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data.map((a) => [a.id, a.model, a.text, a.events]),
      answers.map((a) => [a.id, a.model, a.text, a.events]));
    const noToken = await fetch(`${gw.url}/admin/v1/probe/answers`);
    assert.equal(noToken.status, 401);
    const wrongMethod = await admin('DELETE', 'probe/answers');
    assert.equal(wrongMethod.status, 405);

    // Accounted once each by the core: the call log has the probe calls with their usage.
    const rows = await eventually(async () => {
      const data = (await calls()).filter((c) => c.model?.startsWith('probe:') && c.status === 200);
      return data.length === 2 ? data : null;
    });
    assert.ok(rows, 'both probe calls are in the call log');
    for (const row of rows) assert.equal(row.completion_tokens, TOKENS, JSON.stringify(row));
    // Its statements are counted under its own purposes.
    const metrics = await metricsOf(gw);
    assert.equal(metrics['turnpike_store_statements_total{op="probe_write"}'], 2);
    assert.equal(metrics['turnpike_store_statements_total{op="probe_read"}'], 1);
  });
});
