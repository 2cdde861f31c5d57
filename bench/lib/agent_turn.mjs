// The agent benches' two client calls (bench/agent-cancel-latency.mjs and
// agent-cancel-fleet-latency.mjs), each on a fresh connection to 127.0.0.1:`port` with `headers`.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

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
