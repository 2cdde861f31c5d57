// Cohere v2 as a client API: the official `cohere-ai` SDK (8.x) -> Turnpike POST /v2/chat ->
// deployments of every upstream dialect (the mock provider speaks them all): plain, streamed
// (Cohere's named events), tools, and errors as the SDK's own error classes. The key travels as
// `Authorization: Bearer`.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CohereClientV2, Cohere, CohereError } from 'cohere-ai';
import { startMock, startGateway, startGovernedGateway, gatewayConfig, stopAll, eventually } from './lib/harness.mjs';
import { DIALECTS } from './lib/dialects.mjs';

const TOKENS = 6;
const words = (text) => text.split(' ').filter(Boolean);
const tools = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
}];

let gw;
let client;
before(async () => {
  const mock = await startMock(['--tokens', String(TOKENS)]);
  const toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  const failMock = await startMock(['--fail-rate', '1']);
  const models = {};
  for (const [dialect, make] of Object.entries(DIALECTS)) {
    models[`m-${dialect}`] = [make(mock)];
    models[`tools-${dialect}`] = [make(toolMock)];
    models[`failing-${dialect}`] = [make(failMock)];
  }
  gw = await startGateway(gatewayConfig({ routing: { max_attempts: 1 }, models }));
  client = new CohereClientV2({ token: 'unused', environment: gw.url, maxRetries: 0 });
});
after(stopAll);

const textOf = (message) => message.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

for (const dialect of Object.keys(DIALECTS)) {
  describe(`cohere-ai -> ${dialect} deployment`, () => {
    test('chat', async () => {
      const r = await client.chat({
        model: `m-${dialect}`, temperature: 0.5, maxTokens: 100,
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }],
      });
      assert.equal(words(textOf(r.message)).length, TOKENS);
      assert.equal(r.finishReason, 'COMPLETE');
      assert.equal(r.usage.tokens.outputTokens, TOKENS);
      assert.ok(r.usage.billedUnits.inputTokens > 0);
    });

    test('chatStream, event by event', async () => {
      const stream = await client.chatStream({ model: `m-${dialect}`, messages: [{ role: 'user', content: 'Hi' }] });
      const types = [];
      let text = '';
      let end;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'content-delta') text += event.delta.message.content.text;
        if (event.type === 'message-end') end = event;
      }
      assert.equal(types[0], 'message-start');
      assert.equal(types[1], 'content-start');
      assert.equal(types.at(-2), 'content-end');
      assert.equal(types.at(-1), 'message-end');
      assert.equal(words(text).length, TOKENS);
      assert.equal(end.delta.finishReason, 'COMPLETE');
      assert.equal(end.delta.usage.tokens.outputTokens, TOKENS);
    });

    test('a tool call, then its result', async () => {
      const r = await client.chat({ model: `tools-${dialect}`, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      assert.equal(r.finishReason, 'TOOL_CALL');
      assert.equal(r.message.toolCalls.length, 1);
      const call = r.message.toolCalls[0];
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
      const next = await client.chat({
        model: `m-${dialect}`, tools,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', toolPlan: r.message.toolPlan, toolCalls: r.message.toolCalls },
          { role: 'tool', toolCallId: call.id, content: [{ type: 'document', document: { data: { temp: 21 } } }] },
        ],
      });
      assert.equal(words(textOf(next.message)).length, TOKENS);
    });

    test('a streamed tool call', async () => {
      const stream = await client.chatStream({ model: `tools-${dialect}`, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      let name;
      let args = '';
      let deltas = 0;
      let finish;
      for await (const event of stream) {
        if (event.type === 'tool-call-start') name = event.delta.message.toolCalls.function.name;
        if (event.type === 'tool-call-delta') { deltas += 1; args += event.delta.message.toolCalls.function.arguments; }
        if (event.type === 'message-end') finish = event.delta.finishReason;
      }
      assert.equal(name, 'get_weather');
      assert.ok(deltas >= 1);
      assert.deepEqual(JSON.parse(args), { location: 'Paris' });
      assert.equal(finish, 'TOOL_CALL');
    });

    test('an upstream failure is a CohereError', async () => {
      await assert.rejects(
        client.chat({ model: `failing-${dialect}`, messages: [{ role: 'user', content: 'Hi' }] }),
        (e) => e instanceof CohereError && e.statusCode >= 500,
      );
    });
  });
}

// Embeddings: the mock's vectors depend only on the text and the size, so every dialect that
// embeds gives the same numbers; Anthropic and the Responses API have no embeddings API (400).
describe('cohere-ai embed -> every dialect', () => {
  const embed = (dialect, extra = {}) => client.embed({
    model: `m-${dialect}`, texts: ['hello', 'world'], inputType: 'search_document',
    embeddingTypes: ['float'], outputDimension: 8, ...extra,
  });
  test('the same vectors from every dialect that embeds', async () => {
    const reference = await embed('cohere');
    assert.equal(reference.embeddings.float.length, 2);
    assert.equal(reference.embeddings.float[0].length, 8);
    for (const dialect of ['openai', 'gemini', 'ollama', 'cohere']) {
      const r = await embed(dialect);
      assert.deepEqual(r.embeddings.float.map((v) => v.map(Math.fround)),
        reference.embeddings.float.map((v) => v.map(Math.fround)), dialect);
    }
  });
  test('what another dialect cannot give is a BadRequestError naming it', async () => {
    await assert.rejects(embed('openai', { embeddingTypes: ['int8'] }),
      (e) => e instanceof Cohere.BadRequestError && /embedding_types/.test(e.body.message));
    for (const dialect of ['anthropic', 'responses']) {
      await assert.rejects(embed(dialect), (e) => e instanceof Cohere.BadRequestError, dialect);
    }
  });
});

describe('cohere-ai: the gateway\'s own answers', () => {
  test('an unknown model is a NotFoundError', async () => {
    await assert.rejects(
      client.chat({ model: 'nope', messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Cohere.NotFoundError && e.statusCode === 404,
    );
  });

  test('a field no upstream can express is a BadRequestError naming it', async () => {
    await assert.rejects(
      client.chat({ model: 'm-openai', k: 5, messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Cohere.BadRequestError && /\bk\b/.test(e.body.message),
    );
  });

  test('bad JSON is a 400 in Cohere\'s error shape', async () => {
    const r = await fetch(`${gw.url}/v2/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(r.status, 400);
    const body = await r.json();
    assert.equal(typeof body.message, 'string');
    assert.equal(typeof body.id, 'string');
  });
});

describe('cohere-ai with governance', () => {
  test('the virtual key as a Bearer token is checked; a wrong one is an UnauthorizedError', async () => {
    const mock = await startMock(['--tokens', String(TOKENS)]);
    const { gw: governed, key, calls } = await startGovernedGateway({
      name: 'cohere-client',
      models: { m: [DIALECTS.anthropic(mock)] },
      prices: { 'claude-up': { input: 1, output: 2, max_output_tokens: 1000 } },
    });
    const good = new CohereClientV2({ token: key, environment: governed.url, maxRetries: 0 });
    const r = await good.chat({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(words(textOf(r.message)).length, TOKENS);
    const bad = new CohereClientV2({ token: 'tp-wrong', environment: governed.url, maxRetries: 0 });
    await assert.rejects(bad.chat({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }),
      (e) => e instanceof Cohere.UnauthorizedError);
    const rows = await eventually(async () => {
      const x = (await calls()).filter((c) => c.status === 200);
      return x.length === 1 ? x : null;
    }, 5000);
    assert.ok(rows, 'one call-log row');
    assert.equal(rows[0].completion_tokens, TOKENS);
    const metrics = await (await fetch(`${governed.url}/metrics`)).text();
    assert.match(metrics, /route="cohere_chat"/);
  });
});
