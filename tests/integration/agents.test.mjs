// Agent turns (src/doors/agents/) from outside: the agents' admin API and CLI, the Conversations
// API and turns through the official openai client, memory across turns, the one-turn slot of a
// conversation (409), cancel, stored responses, tenant isolation, bad input, the statements
// a warm turn makes before its first token (none) on both store engines, and background turns:
// polling, resuming their stream (live and stored), cancel, a process killed under one; the
// turn-event counters in /metrics; retention purging stored responses and conversations.
import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BIN, startMock, startGovernedGateway, startGateway, gatewayConfig, stopAll, waitExit, metricsOf,
  mockStats, sleep, eventually,
} from './lib/harness.mjs';
import { startPostgres, stopAllPostgres } from './lib/postgres.mjs';
import { needsPostgres } from './lib/requires.mjs';

after(async () => {
  await stopAll();
  stopAllPostgres();
});

const PRICES = { chat: { input: 1, output: 2, max_output_tokens: 1000 } };

async function agentGateway(name, { mockFlags = [], store = {}, sections = {} } = {}) {
  const mock = await startMock([...(mockFlags.includes('--tokens') ? [] : ['--tokens', '5']), ...mockFlags]);
  const g = await startGovernedGateway({
    name,
    models: { chat: [`http://127.0.0.1:${mock.port}/v1`] },
    prices: PRICES,
    store,
    sections,
  });
  const agent = await createAgent(g, { tenant: 't1', model: 'chat', instructions: 'Be brief.' });
  const client = new OpenAI({ baseURL: `${g.gw.url}/v1`, apiKey: g.key, maxRetries: 0 });
  return { ...g, mock, agent, client };
}

async function createAgent(g, body) {
  const r = await g.admin('POST', 'agents', body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

// A second tenant with its own key.
async function otherTenant(g) {
  assert.equal((await g.admin('POST', 'tenants', { id: 't2', plan: 'p1' })).status, 201);
  const created = await g.admin('POST', 'keys', { tenant: 't2', name: 'other' });
  return new OpenAI({ baseURL: `${g.gw.url}/v1`, apiKey: created.body.key, maxRetries: 0 });
}

const statements = async (gw, op) => {
  const m = await metricsOf(gw);
  let n = 0;
  for (const [k, v] of Object.entries(m)) {
    if (k.startsWith('turnpike_store_statements_total') && k.includes(`op="${op}"`)) n += v;
  }
  return n;
};

async function status(promise) {
  try {
    await promise;
    return 200;
  } catch (e) {
    return e.status;
  }
}

describe('agents admin', () => {
  test('create, get, list, update (a new version), delete; the CLI prints the same JSON', async () => {
    const g = await agentGateway('agents-admin');
    assert.match(g.agent.id, /^agt_[0-9a-f]{32}$/);
    assert.equal(g.agent.version, 1);
    assert.equal(g.agent.tenant, 't1');
    const got = await g.admin('GET', `agents/${g.agent.id}`);
    assert.deepEqual(got.body, g.agent);
    const updated = await g.admin('POST', `agents/${g.agent.id}`, { instructions: 'Be verbose.' });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.version, 2);
    assert.equal(updated.body.instructions, 'Be verbose.');
    const list = await g.admin('GET', 'agents?tenant=t1');
    assert.deepEqual(list.body.data.map((a) => [a.id, a.version]), [[g.agent.id, 2]]);

    const out = execFileSync(BIN, ['admin', '--url', g.gw.url, '--json', 'agents', 'create',
      '--tenant', 't1', '--model', 'chat', '--instructions', 'From the CLI.'], {
      env: { ...process.env, TURNPIKE_ADMIN_TOKEN: 'test-admin-token' },
    }).toString();
    const cli = JSON.parse(out);
    assert.match(cli.id, /^agt_/);
    assert.equal(cli.instructions, 'From the CLI.');

    // Errors: unknown model, unknown field, a duplicate id, a missing agent.
    assert.equal((await g.admin('POST', 'agents', { tenant: 't1', model: 'nope' })).status, 400);
    const unknown = await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', colour: 1 });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.field, 'colour');
    assert.equal((await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', id: 'a1' })).status, 201);
    assert.equal((await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', id: 'a1' })).status, 409);
    assert.equal((await g.admin('DELETE', 'agents/a1')).status, 200);
    assert.equal((await g.admin('GET', 'agents/a1')).status, 404);
  });
});

describe('conversations', () => {
  test('CRUD and items with the openai client; another tenant gets 404s', async () => {
    const g = await agentGateway('agents-conversations');
    const conv = await g.client.conversations.create({
      metadata: { topic: 'roads' },
      items: [{ type: 'message', role: 'user', content: 'Hello' }],
    });
    assert.match(conv.id, /^conv_/);
    assert.equal(conv.object, 'conversation');
    assert.deepEqual(conv.metadata, { topic: 'roads' });
    assert.deepEqual((await g.client.conversations.retrieve(conv.id)).metadata, { topic: 'roads' });
    const updated = await g.client.conversations.update(conv.id, { metadata: { topic: 'tolls' } });
    assert.deepEqual(updated.metadata, { topic: 'tolls' });

    const added = await g.client.conversations.items.create(conv.id, {
      items: [{ type: 'message', role: 'assistant', content: 'Hi there' },
        { type: 'message', role: 'user', content: 'Bye' }],
    });
    assert.equal(added.data.length, 2);
    const asc = [];
    for await (const item of g.client.conversations.items.list(conv.id, { order: 'asc', limit: 2 })) {
      asc.push(item);
    }
    assert.deepEqual(asc.map((i) => [i.role, i.content[0].text]),
      [['user', 'Hello'], ['assistant', 'Hi there'], ['user', 'Bye']], 'paged by 2, in order');
    assert.equal(asc[0].content[0].type, 'input_text');
    assert.equal(asc[1].content[0].type, 'output_text');
    const one = await g.client.conversations.items.retrieve(asc[1].id, { conversation_id: conv.id });
    assert.equal(one.id, asc[1].id);
    await g.client.conversations.items.delete(asc[1].id, { conversation_id: conv.id });
    const left = (await g.client.conversations.items.list(conv.id)).data;
    assert.deepEqual(left.map((i) => i.content[0].text), ['Bye', 'Hello'], 'newest first by default');

    const other = await otherTenant(g);
    assert.equal(await status(other.conversations.retrieve(conv.id)), 404);
    assert.equal(await status(other.conversations.items.list(conv.id)), 404);
    assert.equal(await status(other.conversations.delete(conv.id)), 404);

    const deleted = await g.client.conversations.delete(conv.id);
    assert.equal(deleted.deleted, true);
    assert.equal(await status(g.client.conversations.retrieve(conv.id)), 404);

    // Bad input: a malformed item, too many items; nothing is created.
    assert.equal(await status(g.client.conversations.create({ items: [{ type: 'bogus' }] })), 400);
    assert.equal(await status(g.client.conversations.create({
      items: Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })),
    })), 400);
  });
});

describe('turns', () => {
  test('a conversation over several turns, streamed and whole; memory and stored responses', async () => {
    const g = await agentGateway('agents-turns');
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;

    const first = await g.client.responses.create({ model, conversation: conv.id, input: 'Hi' });
    assert.match(first.id, /^resp_[0-9a-f]{32}$/);
    assert.equal(first.status, 'completed');
    assert.equal(first.model, model);
    assert.ok(first.output_text.length > 0);
    assert.equal(first.store, true);
    assert.deepEqual(first.conversation, { id: conv.id });

    // Streamed: events in the API's order, sequence numbers from 0, the id from the start.
    const stream = await g.client.responses.create({
      model, conversation: conv.id, input: 'And again', stream: true,
    });
    const types = [];
    let seq = 0;
    let id = null;
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      assert.equal(event.sequence_number, seq++);
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    assert.equal(types[0], 'response.created');
    assert.equal(types[1], 'response.in_progress');
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(types.includes('response.output_item.added'));
    assert.ok(types.includes('response.output_text.done'));
    assert.match(id, /^resp_/);

    // The items were stored before the terminal event: all four are there at once.
    const items = (await g.client.conversations.items.list(conv.id, { order: 'asc' })).data;
    assert.deepEqual(items.map((i) => i.role), ['user', 'assistant', 'user', 'assistant']);
    assert.equal(items[3].content[0].text, text);

    // Stored responses: retrieve, input items, delete.
    const stored = await g.client.responses.retrieve(id);
    assert.equal(stored.id, id);
    assert.equal(stored.output_text, text);
    const input = await g.client.responses.inputItems.list(id);
    assert.equal(input.data[0].content[0].text, 'And again');
    await g.client.responses.delete(first.id);
    assert.equal(await status(g.client.responses.retrieve(first.id)), 404);

    // previous_response_id continues from a stored response; both at once is a 400.
    const next = await g.client.responses.create({ model, previous_response_id: id, input: 'More' });
    assert.equal(next.previous_response_id, id);
    assert.equal(await status(g.client.responses.create({
      model, previous_response_id: id, conversation: conv.id, input: 'x',
    })), 400);

    // The call log has the turns with their agent, version and response id.
    await eventually(async () => (await g.calls()).some((c) => c.response_id === id));
    const row = (await g.calls()).find((c) => c.response_id === id);
    assert.equal(row.agent_id, g.agent.id);
    assert.equal(row.agent_version, 1);
  });

  test('a second turn while one runs is a 409 conversation_busy; cancel stops a turn', async () => {
    const g = await agentGateway('agents-busy', { mockFlags: ['--tokens', '200', '--inter-token', '20ms'] });
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;
    const stream = await g.client.responses.create({ model, conversation: conv.id, input: 'Long', stream: true });
    const iterator = stream[Symbol.asyncIterator]();
    const created = (await iterator.next()).value;
    assert.equal(created.type, 'response.created');
    const id = created.response.id;

    const busy = await fetch(`${g.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, conversation: conv.id, input: 'Too soon' }),
    });
    assert.equal(busy.status, 409);
    assert.equal((await busy.json()).error.code, 'conversation_busy');

    // Cancelled mid-answer: after its first text.
    for (let e = await iterator.next(); e.value.type !== 'response.output_text.delta';) {
      e = await iterator.next();
    }
    const cancelled = await g.client.responses.cancel(id);
    assert.equal(cancelled.status, 'cancelled');
    const rest = [];
    for (let e = await iterator.next(); !e.done; e = await iterator.next()) rest.push(e.value.type);
    assert.equal(rest.at(-1), 'response.cancelled');
    assert.equal((await g.client.responses.retrieve(id)).status, 'cancelled');
    // Idempotent, and the conversation is free again.
    assert.equal((await g.client.responses.cancel(id)).status, 'cancelled');
    const items = (await g.client.conversations.items.list(conv.id, { order: 'asc' })).data;
    assert.equal(items.at(-1).status, 'incomplete', 'the partial answer is kept, incomplete');
    // The turn-event hook's counters: one cancelled turn; the 409 was no turn.
    const turns = (m, s) => m[`turnpike_agent_turns_total{status="${s}"}`];
    const m = await eventually(async () => {
      const now = await metricsOf(g.gw);
      return turns(now, 'cancelled') === 1 ? now : null;
    });
    assert.ok(m, 'the cancelled turn was counted');
    assert.equal(turns(m, 'completed'), 0);
    assert.equal(turns(m, 'failed'), 0);
    assert.equal(turns(m, 'incomplete'), 0);
  });

  test('bad input and other tenants: clean errors, nothing stored', async () => {
    const g = await agentGateway('agents-bad');
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;
    const cases = [
      [{ model: 'agent:agt_missing', input: 'x' }, 404, 'model'],
      [{ model, input: 'x', instructions: 'mine' }, 400, 'instructions'],
      [{ model, input: 'x', tools: [{ type: 'function', name: 'foreign', parameters: {} }] }, 400, 'tools[0]'],
      [{ model, input: [{ type: 'bogus' }], conversation: conv.id }, 400, null],
      [{ model, input: 'x', conversation: 'conv_missing' }, 404, 'conversation'],
      [{ model, input: 'x', previous_response_id: 'resp_missing' }, 404, 'previous_response_id'],
      [{ model }, 400, 'input'],
    ];
    for (const [body, code, param] of cases) {
      const r = await fetch(`${g.gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = await r.json();
      assert.equal(r.status, code, JSON.stringify([body, answer]));
      assert.ok(answer.error.message, 'OpenAI error shape');
      if (param) assert.equal(answer.error.param, param);
    }
    assert.equal((await g.client.conversations.items.list(conv.id)).data.length, 0, 'nothing stored');

    const other = await otherTenant(g);
    assert.equal(await status(other.responses.create({ model, input: 'x' })), 404);
    assert.equal(await status(other.responses.create({
      model: 'chat', input: 'x', conversation: conv.id,
    })), 400, 'a plain model takes no conversation');
  });
});

describe('memory and guard', () => {
  test('the model is sent the agent\'s instructions, then the window of the conversation', async () => {
    const g = await agentGateway('agents-memory', { mockFlags: ['--reply', 'describe'] });
    const windowed = await createAgent(g, {
      tenant: 't1', model: 'chat', instructions: 'Be brief.', history: { items: 2 },
    });
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;
    const first = await g.client.responses.create({ model, conversation: conv.id, input: 'my name is Ann' });
    assert.equal(first.output_text, 'system: Be brief. | user: my name is Ann');
    const second = await g.client.responses.create({ model, conversation: conv.id, input: 'who am I?' });
    assert.equal(second.output_text,
      `system: Be brief. | user: my name is Ann | assistant: ${first.output_text} | user: who am I?`);
    // The instructions are the agent's, never an item of the conversation.
    const items = (await g.client.conversations.items.list(conv.id, { order: 'asc' })).data;
    assert.deepEqual(items.map((i) => i.role), ['user', 'assistant', 'user', 'assistant']);
    // Another agent (a window of 2 items) continues the same conversation.
    const third = await g.client.responses.create({
      model: `agent:${windowed.id}`, conversation: conv.id, input: 'and now?',
    });
    assert.equal(third.output_text,
      `system: Be brief. | user: who am I? | assistant: ${second.output_text} | user: and now?`);
    // previous_response_id naming a conversation's turn: the conversation through that turn
    // (stored by reference), not the turn after it.
    const branch = await g.client.responses.create({ model, previous_response_id: second.id, input: 'branch' });
    assert.equal(branch.output_text,
      `system: Be brief. | user: my name is Ann | assistant: ${first.output_text} | user: who am I? | `
      + `assistant: ${second.output_text} | user: branch`);
    // And a stateless chain continues from that one's context, input and output.
    const chained = await g.client.responses.create({ model, previous_response_id: branch.id, input: 'end' });
    assert.ok(chained.output_text.endsWith(`user: branch | assistant: ${branch.output_text} | user: end`));
  });

  test('the guard replaces a URL whose host is neither allowed nor in the context', async () => {
    const g = await agentGateway('agents-guard', {
      mockFlags: ['--reply-text', 'See https://evil.example/x and https://docs.example.com/y and https://named.example/z'],
    });
    const agent = await createAgent(g, {
      tenant: 't1', model: 'chat', guard: { urls: true, allow_hosts: ['example.com'] },
    });
    const model = `agent:${agent.id}`;
    const input = 'Is named.example any good?';
    const whole = await g.client.responses.create({ model, input });
    assert.equal(whole.output_text,
      'See [link removed] and https://docs.example.com/y and https://named.example/z');
    assert.equal(whole.metadata.turnpike_guard_replacements, '1');
    assert.equal(whole.metadata.turnpike_guard_hosts, 'evil.example');

    const stream = await g.client.responses.create({ model, input, stream: true });
    let text = '';
    let done = null;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') done = event.response;
    }
    assert.equal(text, whole.output_text, 'the same text, streamed: nothing retracted');
    assert.equal(done.metadata.turnpike_guard_replacements, '1');
    await eventually(async () => (await g.calls()).filter((c) => c.agent_id === agent.id).length === 2);
    const rows = (await g.calls()).filter((c) => c.agent_id === agent.id);
    assert.deepEqual(rows.map((c) => c.guard_replacements), [1, 1]);
  });
});

for (const engine of ['sqlite', 'postgres']) {
  const skip = engine === 'postgres' ? needsPostgres() : false;
  test(`a warm turn makes no statement before its first token (${engine})`, { skip }, async () => {
    let store = {};
    if (engine === 'postgres') {
      const pg = await startPostgres();
      store = { engine: 'postgres', url: pg.url };
    }
    const g = await agentGateway(`agents-statements-${engine}`, { store });
    const model = `agent:${g.agent.id}`;
    const conv = await g.client.conversations.create();
    const reads0 = await statements(g.gw, 'agent_read');
    await g.client.responses.create({ model, conversation: conv.id, input: 'cold' });
    const reads1 = await statements(g.gw, 'agent_read');
    assert.ok(reads1 - reads0 <= 3, `a cold turn: ${reads1 - reads0} reads`);
    for (let i = 0; i < 5; ++i) {
      await g.client.responses.create({ model, conversation: conv.id, input: `warm ${i}` });
    }
    const reads2 = await statements(g.gw, 'agent_read');
    assert.equal(reads2 - reads1, 0, 'warm turns read nothing');
    const items = (await g.client.conversations.items.list(conv.id, { limit: 100 })).data;
    assert.equal(items.length, 12);
  });
}

// Polls the response until `done` says so.
async function until(client, id, done, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.responses.retrieve(id);
    if (done(r)) return r;
    assert.ok(Date.now() < deadline, `response ${id} still ${r.status}`);
    await sleep(50);
  }
}

// A stream's events, checked to be in order with no gap from `first`.
async function collect(stream, first) {
  const events = [];
  for await (const event of stream) {
    assert.equal(event.sequence_number, first + events.length, JSON.stringify(event));
    events.push(event);
  }
  return events;
}

const TERMINAL = ['response.completed', 'response.incomplete', 'response.failed', 'response.cancelled'];

describe('background and resume', () => {
  const slow = ['--tokens', '50', '--inter-token', '20ms'];

  test('a background turn answers at once, runs detached, and is polled to its end', async () => {
    const g = await agentGateway('agents-bg', { mockFlags: slow });
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;
    const queued = await g.client.responses.create({ model, conversation: conv.id, input: 'Hi', background: true });
    // Answered before the turn ran (its ~1 s of tokens): nothing of the answer yet.
    assert.ok(['queued', 'in_progress'].includes(queued.status), queued.status);
    assert.deepEqual(queued.output, []);
    assert.equal(queued.background, true);
    assert.match(queued.id, /^resp_/);
    // A GET while it runs: its current state.
    const running = await g.client.responses.retrieve(queued.id);
    assert.ok(['queued', 'in_progress'].includes(running.status), running.status);

    const done = await until(g.client, queued.id, (r) => r.status === 'completed');
    assert.ok(done.output_text.length > 0);
    assert.equal(done.background, true);
    const items = (await g.client.conversations.items.list(conv.id, { order: 'asc' })).data;
    assert.deepEqual(items.map((i) => i.role), ['user', 'assistant']);
    assert.equal(items[1].content[0].text, done.output_text);

    // The call log has the turn once, with its usage.
    await eventually(async () => (await g.calls()).some((c) => c.response_id === queued.id));
    const rows = (await g.calls()).filter((c) => c.response_id === queued.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 200);
    assert.ok(rows[0].completion_tokens > 0, JSON.stringify(rows[0]));

    // A background turn is stored: store: false is a 400 (stream: true is served:
    // agents_extras.test.mjs).
    assert.equal(await status(g.client.responses.create({ model, input: 'x', background: true, store: false })), 400);
  });

  for (const engine of ['sqlite', 'postgres']) {
  const skip = engine === 'postgres' ? needsPostgres() : false;
  test(`resume: the events after N, live then to the end; after the end, from the store (${engine})`, { skip }, async () => {
    let store = {};
    if (engine === 'postgres') {
      const pg = await startPostgres();
      store = { engine: 'postgres', url: pg.url };
    }
    const g = await agentGateway(`agents-resume-${engine}`, { mockFlags: slow, store });
    const model = `agent:${g.agent.id}`;
    const queued = await g.client.responses.create({ model, input: 'Hi', background: true });
    // The resume starts while the turn runs: most of its events are made after it began.
    assert.equal((await g.client.responses.retrieve(queued.id)).status, 'in_progress');

    const live = await collect(await g.client.responses.retrieve(queued.id, { stream: true, starting_after: 3 }), 4);
    assert.ok(live.length > 10, `${live.length} events`);
    assert.ok(live.some((e) => e.type === 'response.output_text.delta'));
    assert.equal(live.at(-1).type, 'response.completed');
    assert.equal(live.filter((e) => TERMINAL.includes(e.type)).length, 1);

    // Ended: the same events from the store, and from the first without starting_after.
    const stored = await collect(await g.client.responses.retrieve(queued.id, { stream: true, starting_after: 3 }), 4);
    assert.deepEqual(stored, live);
    const whole = await collect(await g.client.responses.retrieve(queued.id, { stream: true }), 0);
    assert.equal(whole[0].type, 'response.created');
    assert.deepEqual(whole.slice(4), live);

    // A foreground turn keeps no stream.
    const fg = await g.client.responses.create({ model, input: 'x' });
    assert.equal(await status(g.client.responses.retrieve(fg.id, { stream: true })), 400);

    // Another tenant sees nothing: retrieve, stream and cancel are 404s.
    const other = await otherTenant(g);
    assert.equal(await status(other.responses.retrieve(queued.id)), 404);
    assert.equal(await status(other.responses.retrieve(queued.id, { stream: true })), 404);
    assert.equal(await status(other.responses.cancel(queued.id)), 404);
  });
  }

  test('a background turn is cancelled; its resumed stream ends cancelled', async () => {
    const g = await agentGateway('agents-bg-cancel', { mockFlags: ['--tokens', '200', '--inter-token', '20ms'] });
    const conv = await g.client.conversations.create();
    const model = `agent:${g.agent.id}`;
    const queued = await g.client.responses.create({ model, conversation: conv.id, input: 'Long', background: true });
    const stream = g.client.responses.retrieve(queued.id, { stream: true });
    const events = [];
    const reading = (async () => { for await (const e of await stream) events.push(e); })();
    await eventually(() => events.some((e) => e.type === 'response.output_text.delta'), 5000);
    const cancelled = await g.client.responses.cancel(queued.id);
    assert.equal(cancelled.status, 'cancelled');
    await reading;
    assert.equal(events.at(-1).type, 'response.cancelled');
    events.forEach((e, i) => assert.equal(e.sequence_number, i));
    assert.equal((await g.client.responses.retrieve(queued.id)).status, 'cancelled');
    // The conversation is free again.
    const next = await g.client.responses.create({ model, conversation: conv.id, input: 'Short?', background: true });
    assert.ok(['queued', 'in_progress'].includes(next.status));
  });

  test('a background turn whose process is killed ends failed when the gateway starts again', async () => {
    const mock = await startMock(['--tokens', '500', '--inter-token', '20ms']);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnpike-agents-kill-'));
    const store = { path: path.join(dir, 'turnpike.db') };
    const models = { chat: [`http://127.0.0.1:${mock.port}/v1`] };
    const g = await startGovernedGateway({ name: 'agents-kill', models, prices: PRICES, store });
    const agent = await createAgent(g, { tenant: 't1', model: 'chat', instructions: 'Be brief.' });
    const client = new OpenAI({ baseURL: `${g.gw.url}/v1`, apiKey: g.key, maxRetries: 0 });
    const queued = await client.responses.create({ model: `agent:${agent.id}`, input: 'Long', background: true });
    await sleep(200);
    g.gw.kill('SIGKILL');
    await waitExit(g.gw);

    const again = await startGateway(gatewayConfig({
      models,
      governance: { enabled: true, reconcile_interval: '0s' },
      store,
      prices: PRICES,
    }), { env: { TURNPIKE_ADMIN_TOKEN: 'test-admin-token' } });
    const client2 = new OpenAI({ baseURL: `${again.url}/v1`, apiKey: g.key, maxRetries: 0 });
    const failed = await client2.responses.retrieve(queued.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, 'server_error');
    assert.equal(failed.error.message, 'The gateway stopped while this turn ran.');
    assert.equal(await status(client2.responses.retrieve(queued.id, { stream: true })), 400);
  });
});

describe('retention', () => {
  test('stored responses and idle conversations older than agents.retention are purged: 404', async () => {
    const g = await agentGateway('agents-retention', {
      sections: { agents: { retention: '1s', purge_interval: '100ms' } },
    });
    const conv = await g.client.conversations.create({
      items: [{ type: 'message', role: 'user', content: 'Hello' }],
    });
    const stored = await g.client.responses.create({ model: `agent:${g.agent.id}`, conversation: conv.id, input: 'Hi' });
    assert.equal((await g.client.responses.retrieve(stored.id)).status, 'completed');
    const m = await metricsOf(g.gw);
    assert.equal(m['turnpike_agent_turns_total{status="completed"}'], 1);
    // Times are whole seconds: older than 1 s within about 2 s, then the next purge.
    const gone = await eventually(async () => (await status(g.client.responses.retrieve(stored.id))) === 404, 6000, 100);
    assert.ok(gone, 'the stored response was purged');
    assert.ok(await eventually(async () => (await status(g.client.conversations.retrieve(conv.id))) === 404, 6000, 100));
    assert.equal(await status(g.client.conversations.items.list(conv.id)), 404);
    const purged = await metricsOf(g.gw);
    assert.equal(purged['turnpike_agent_purged_total{kind="response"}'], 1);
    assert.equal(purged['turnpike_agent_purged_total{kind="conversation"}'], 1);
    // A turn on the purged conversation is a 404 like any missing one.
    assert.equal(await status(g.client.responses.create({ model: `agent:${g.agent.id}`, conversation: conv.id, input: 'Again' })), 404);
  });
});
