// What the agent benches share: the turn benches' set-up (startAgentGateway: bench/agent-turn-
// bench.mjs, agent-turn-callgrind.mjs, agent-turn-syscalls.mjs), and the cancel benches' two
// client calls (agent-cancel-latency.mjs and agent-cancel-fleet-latency.mjs), each on a fresh
// connection to 127.0.0.1:`port` with `headers`.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startMock, startGovernedGateway } from '../../tests/integration/lib/harness.mjs';

// One replica (SQLite, governance on, `bin` when given) over the mock provider (--tokens 16) as
// model `chat`, and an agent of tenant t1 on it with `tools` (function tools). Resolves with
// {g, agent, headers, drain}: the harness's gateway, the agent, a request's headers with the
// key, and a function that reads a fetch response to its end.
export async function startAgentGateway({ name, bin, tools = [] }) {
  const mock = await startMock(['--tokens', '16']);
  const g = await startGovernedGateway({
    name, bin,
    models: { chat: [`http://127.0.0.1:${mock.port}/v1`] },
    prices: { chat: { input: 1, output: 2, max_output_tokens: 1000 } },
  });
  const agent = (await g.admin('POST', 'agents', { tenant: 't1', model: 'chat', instructions: 'Be brief.', tools })).body;
  const headers = { authorization: `Bearer ${g.key}`, 'content-type': 'application/json' };
  const drain = async (r) => { const rd = r.body.getReader(); while (!(await rd.read()).done) { /* all */ } };
  return { g, agent, headers, drain };
}

// POSTs `body` (a streamed /v1/responses turn) and resolves with {id, req, res, firstDelta}
// once response.created has arrived; firstDelta resolves at the first output_text delta.
export function startTurn({ port, headers }, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/responses', headers, agent: false });
    req.on('error', () => {});
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`turn: ${res.statusCode}`));
      let text = '';
      let id = null;
      let deltaSeen;
      const firstDelta = new Promise((r) => { deltaSeen = r; });
      res.on('error', () => {});
      res.on('data', (d) => {
        text += d;
        if (id === null) {
          const m = /"id":"(resp_[^"]+)"/.exec(text);
          if (m) { id = m[1]; resolve({ id, req, res, firstDelta }); }
        }
        if (text.includes('response.output_text.delta')) deltaSeen();
      });
    });
    req.end(JSON.stringify(body));
  });
}

// `method path` (a POST sends '{}'); resolves with {sentAt, answeredAt, status, body}, sentAt
// when the connection is up and the request goes out.
export function timed({ port, headers }, method, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    let sentAt = 0;
    req.on('socket', (s) => s.once('connect', () => { sentAt = performance.now(); req.end(method === 'POST' ? '{}' : undefined); }));
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ sentAt, answeredAt: performance.now(), status: res.statusCode, body }));
    });
    req.on('error', reject);
  });
}
