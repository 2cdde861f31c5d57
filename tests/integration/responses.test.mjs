// The inbound OpenAI Responses API (stateless) and legacy completions API through the real
// gateway, with the official `openai` SDK, over both upstream dialects the mock provider speaks:
//   client.responses.create    -> Turnpike /v1/responses   -> `provider: openai` | `anthropic`
//   client.completions.create  -> Turnpike /v1/completions -> `provider: openai` | `anthropic`
// Every request is translated through the pivot (these APIs have no identity path).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock, startGateway, gatewayConfig, stopAll } from './lib/harness.mjs';

const TOKENS = 6;
const SHORT = 2;  // < TOKENS: max_output_tokens cuts the answer
const CACHED = 4;
const words = (text) => text.split(' ').filter(Boolean);
const tools = [{
  type: 'function', name: 'get_weather', description: 'Weather', strict: null,
  parameters: { type: 'object', properties: { location: { type: 'string' } } },
}];

let gw;
let client;
before(async () => {
  const mock = await startMock(['--tokens', String(TOKENS), '--cached-tokens', String(CACHED)]);
  const toolMock = await startMock(['--tokens', String(TOKENS), '--tool-calls']);
  const failMock = await startMock(['--fail-rate', '1']);
  const limitMock = await startMock(['--rate-limit-rate', '1', '--retry-after', '0']);
  const anthropic = (m) => [{ provider: 'anthropic', base_url: `http://127.0.0.1:${m.port}`, api_key: 'sk-ant-test', model: 'claude-upstream' }];
  const openai = (m) => [{ provider: 'openai', base_url: `http://127.0.0.1:${m.port}/v1`, model: 'gpt-upstream' }];
  gw = await startGateway(gatewayConfig({
    routing: { max_attempts: 1 },
    models: {
      claude: anthropic(mock),
      'claude-tools': anthropic(toolMock),
      'claude-failing': anthropic(failMock),
      'claude-limited': anthropic(limitMock),
      gpt: openai(mock),
      'gpt-tools': openai(toolMock),
      'gpt-failing': openai(failMock),
      'gpt-limited': openai(limitMock),
    },
  }));
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(stopAll);

// Collects a Responses stream's events, checking what every event must carry.
async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  events.forEach((event, i) => assert.equal(event.sequence_number, i, `${event.type} is number ${i}`));
  return events;
}

for (const [label, model, upstreamModel] of [['openai deployment', 'gpt', 'gpt-upstream'], ['anthropic deployment', 'claude', 'claude-upstream']]) {
  describe(`responses -> ${label}`, () => {
    test('a response: output_text, items, usage with cached tokens', async () => {
      const r = await client.responses.create({ model, input: 'Hi', instructions: 'Be brief.', store: false, metadata: { team: 'a' } });
      assert.equal(r.object, 'response');
      assert.ok(r.id.startsWith('resp_'), r.id);
      assert.equal(r.status, 'completed');
      assert.equal(r.model, upstreamModel);
      assert.equal(words(r.output_text).length, TOKENS);
      assert.equal(r.output.length, 1);
      assert.equal(r.output[0].type, 'message');
      assert.equal(r.output[0].role, 'assistant');
      assert.equal(r.output[0].content[0].type, 'output_text');
      assert.equal(r.output[0].content[0].text, r.output_text);
      assert.equal(r.usage.output_tokens, TOKENS);
      assert.equal(r.usage.input_tokens_details.cached_tokens, CACHED);
      assert.ok(r.usage.input_tokens > CACHED);
      assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
      assert.equal(r.instructions, 'Be brief.');
      assert.deepEqual(r.metadata, { team: 'a' });
      assert.equal(r.store, false);
    });

    test('max_output_tokens cuts the answer: status incomplete', async () => {
      const r = await client.responses.create({ model, input: 'Hi', max_output_tokens: SHORT });
      assert.equal(r.status, 'incomplete');
      assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(words(r.output_text).length, SHORT);
    });

    test('a stream: the event sequence, deltas, and response.completed with usage', async () => {
      const events = await collect(await client.responses.create({ model, input: 'Hi', stream: true }));
      const types = events.map((e) => e.type);
      const deltas = events.filter((e) => e.type === 'response.output_text.delta');
      assert.deepEqual(types.filter((t) => t !== 'response.output_text.delta'), [
        'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
        'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
      ]);
      assert.equal(deltas.length, TOKENS, 'one event per upstream text delta');
      const text = deltas.map((e) => e.delta).join('');
      const item = events.find((e) => e.type === 'response.output_item.added').item;
      assert.ok(deltas.every((e) => e.item_id === item.id && e.output_index === 0 && e.content_index === 0));
      assert.equal(events.find((e) => e.type === 'response.output_text.done').text, text);
      const done = events.at(-1).response;
      assert.equal(done.status, 'completed');
      assert.equal(done.output[0].content[0].text, text);
      assert.equal(done.usage.output_tokens, TOKENS);
      assert.equal(done.usage.input_tokens_details.cached_tokens, CACHED);
      assert.equal(events[0].response.status, 'in_progress');
      assert.equal(events[0].response.id, done.id);
    });

    test('a stream cut by max_output_tokens ends with response.incomplete', async () => {
      const events = await collect(await client.responses.create({ model, input: 'Hi', max_output_tokens: SHORT, stream: true }));
      const last = events.at(-1);
      assert.equal(last.type, 'response.incomplete');
      assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(last.response.output[0].status, 'incomplete');
      assert.equal(last.response.usage.output_tokens, SHORT);
    });

    test('the SDK stream helper assembles the final response', async () => {
      const stream = client.responses.stream({ model, input: 'Hi' });
      let text = '';
      stream.on('response.output_text.delta', (e) => { text += e.delta; });
      const final = await stream.finalResponse();
      // (finalResponse() does not add the output_text convenience; create() does.)
      assert.equal(final.status, 'completed');
      assert.equal(final.output[0].content[0].text, text);
      assert.equal(words(text).length, TOKENS);
    });

    test('a streamed function call: arguments in deltas, then done', async () => {
      const events = await collect(await client.responses.create({
        model: `${model}-tools`, input: 'Weather?', tools, stream: true,
      }));
      const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
      assert.ok(added, events.map((e) => e.type).join(' '));
      assert.equal(added.item.name, 'get_weather');
      assert.ok(added.item.call_id.length > 0);
      const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
      assert.ok(deltas.length >= 2, `arguments arrived in ${deltas.length} events`);
      assert.ok(deltas.every((e) => e.item_id === added.item.id && e.output_index === added.output_index));
      const argsDone = events.find((e) => e.type === 'response.function_call_arguments.done');
      assert.equal(argsDone.arguments, deltas.map((e) => e.delta).join(''));
      assert.deepEqual(JSON.parse(argsDone.arguments), { location: 'Paris' });
      const final = events.at(-1);
      assert.equal(final.type, 'response.completed');
      const call = final.response.output.find((o) => o.type === 'function_call');
      assert.equal(call.call_id, added.item.call_id);
      assert.equal(call.arguments, argsDone.arguments);
      assert.equal(call.status, 'completed');
    });

    test('a function call round trip: function_call and function_call_output as input', async () => {
      const first = await client.responses.create({ model: `${model}-tools`, input: 'Weather?', tools });
      const call = first.output.find((o) => o.type === 'function_call');
      assert.deepEqual(JSON.parse(call.arguments), { location: 'Paris' });
      const second = await client.responses.create({
        model,
        input: [{ role: 'user', content: 'Weather?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny' }],
      });
      assert.equal(second.status, 'completed');
      assert.equal(words(second.output_text).length, TOKENS);
    });

    test('store: true is a BadRequestError naming store', async () => {
      await assert.rejects(client.responses.create({ model, input: 'Hi', store: true }),
        (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'store' && /store/.test(e.message));
      await assert.rejects(client.responses.create({ model, input: 'Hi', previous_response_id: 'resp_1' }),
        (e) => e instanceof OpenAI.BadRequestError && e.param === 'previous_response_id');
      await assert.rejects(client.responses.create({ model, input: 'Hi', tools: [{ type: 'web_search' }] }),
        (e) => e instanceof OpenAI.BadRequestError && e.param === 'tools[0].type');
    });

    test('upstream errors become the SDK error classes', async () => {
      await assert.rejects(client.responses.create({ model: `${model}-failing`, input: 'Hi' }),
        (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
      await assert.rejects(client.responses.create({ model: `${model}-failing`, input: 'Hi', stream: true }),
        (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
      await assert.rejects(client.responses.create({ model: `${model}-limited`, input: 'Hi' }),
        (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    });

    test('completions: a text_completion', async () => {
      const c = await client.completions.create({ model, prompt: 'Say hi', max_tokens: 100 });
      assert.equal(c.object, 'text_completion');
      assert.ok(c.id.startsWith('cmpl-'), c.id);
      assert.equal(c.model, upstreamModel);
      assert.equal(c.choices.length, 1);
      assert.equal(words(c.choices[0].text).length, TOKENS);
      assert.equal(c.choices[0].finish_reason, 'stop');
      assert.equal(c.choices[0].logprobs, null);
      assert.equal(c.usage.completion_tokens, TOKENS);
      assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
    });

    test('completions: max_tokens defaults to 16 and cuts with finish_reason length', async () => {
      const cut = await client.completions.create({ model, prompt: 'Say hi', max_tokens: SHORT });
      assert.equal(words(cut.choices[0].text).length, SHORT);
      assert.equal(cut.choices[0].finish_reason, 'length');
    });

    test('completions: a stream with the usage chunk, ending with [DONE]', async () => {
      const stream = await client.completions.create({
        model, prompt: 'Say hi', max_tokens: 100, stream: true, stream_options: { include_usage: true },
      });
      let text = '';
      let finish = null;
      let usage = null;
      let chunks = 0;
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'text_completion');
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices) {
          if (choice.text) chunks += 1;
          text += choice.text;
          finish = choice.finish_reason ?? finish;
        }
      }
      assert.equal(chunks, TOKENS);
      assert.equal(words(text).length, TOKENS);
      assert.equal(finish, 'stop');
      assert.equal(usage.completion_tokens, TOKENS);
    });

    test('completions: upstream errors become the SDK error classes', async () => {
      await assert.rejects(client.completions.create({ model: `${model}-failing`, prompt: 'Hi' }),
        (e) => e instanceof OpenAI.InternalServerError && e.status === 502);
      await assert.rejects(client.completions.create({ model: `${model}-limited`, prompt: 'Hi', stream: true }),
        (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
    });

    test('completions: several prompts are a BadRequestError naming prompt', async () => {
      await assert.rejects(client.completions.create({ model, prompt: ['a', 'b'] }),
        (e) => e instanceof OpenAI.BadRequestError && e.param === 'prompt');
      await assert.rejects(client.completions.create({ model, prompt: 'a', echo: true }),
        (e) => e instanceof OpenAI.BadRequestError && e.param === 'echo');
    });
  });
}

test('a GET on /v1/responses is a 405 in OpenAI\'s shape', async () => {
  const res = await fetch(`${gw.url}/v1/responses`);
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'POST');
  assert.equal((await res.json()).error.type, 'invalid_request_error');
});

test('SSE events carry their type as the event name', async () => {
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt', input: 'Hi', stream: true }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const frames = (await res.text()).split('\n\n').filter((f) => f.trim() && !f.startsWith(':'));
  for (const frame of frames) {
    const name = /^event: (.*)$/m.exec(frame)?.[1];
    const data = JSON.parse(/^data: (.*)$/m.exec(frame)[1]);
    assert.equal(name, data.type);
  }
  assert.equal(JSON.parse(/^data: (.*)$/m.exec(frames.at(-1))[1]).type, 'response.completed');
});

test('a deployment cannot use a client-only dialect as its provider', async () => {
  await assert.rejects(
    startGateway(gatewayConfig({ models: { m: [{ provider: 'openai_completions', base_url: 'http://127.0.0.1:1' }] } })),
    /provider: "openai_completions" is a client API only/,
  );
});
