// Malformed and hostile requests: each gets the right status and OpenAI's error envelope, and
// the server stays up. Run under ASan in CI to catch leaks and memory errors on these paths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, gatewayConfig, stopAll, rawRequest } from './lib/harness.mjs';

let gw;
before(async () => {
  const mock = await startMock(['--tokens', '2']);
  gw = await startGateway(gatewayConfig({
    models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] },
    server: { max_header_bytes: '4KiB', max_body_bytes: '64KiB', timeouts: '{read_headers: 500ms, read_body: 500ms, idle: 5s, drain: 5s}' },
  }));
});
after(stopAll);

const H = 'Host: t\r\n';
const chat = (body, headers = 'Content-Type: application/json\r\n') =>
  `POST /v1/chat/completions HTTP/1.1\r\n${H}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const chatBuf = (bodyBuf) => Buffer.concat([
  Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${bodyBuf.length}\r\n\r\n`),
  bodyBuf,
]);
const msgs = '"messages":[{"role":"user","content":"hi"}]';
// `n` small header fields (~14 bytes each), named `${prefix}${i}`.
const fields = (n, prefix = 'X-F') => Array.from({ length: n }, (_, i) => `${prefix}${i}: v\r\n`).join('');

// [name, request (string | Buffer | steps), expected status, expected param (optional)]
const cases = [
  ['truncated JSON', chat('{"model":"mock-model",'), 400],
  ['not JSON at all', chat('hello'), 400],
  ['top level is an array', chat('[1,2,3]'), 400],
  ['trailing garbage', chat(`{"model":"mock-model",${msgs}} xyz`), 400],
  ['bad literal deep inside', chat('{"model":"mock-model","messages":[{"role":"user","content":tru}]}'), 400],
  ['unquoted key', chat(`{model:"mock-model",${msgs}}`), 400],
  ['empty body', chat(''), 400],
  ['missing model', chat(`{${msgs}}`), 400, 'model'],
  ['model is a number', chat(`{"model":42,${msgs}}`), 400, 'model'],
  ['model is empty', chat(`{"model":"",${msgs}}`), 400, 'model'],
  ['missing messages', chat('{"model":"mock-model"}'), 400, 'messages'],
  ['messages is empty', chat('{"model":"mock-model","messages":[]}'), 400, 'messages'],
  ['messages is a string', chat('{"model":"mock-model","messages":"hi"}'), 400, 'messages'],
  ['stream is a string', chat(`{"model":"mock-model",${msgs},"stream":"yes"}`), 400, 'stream'],
  ['stream_options is a list', chat(`{"model":"mock-model",${msgs},"stream":true,"stream_options":[1]}`), 400, 'stream_options'],
  ['include_usage is a number', chat(`{"model":"mock-model",${msgs},"stream":true,"stream_options":{"include_usage":1}}`), 400],
  ['max_tokens negative', chat(`{"model":"mock-model",${msgs},"max_tokens":-5}`), 400, 'max_tokens'],
  ['invalid UTF-8 in content', chatBuf(Buffer.concat([Buffer.from('{"model":"mock-model","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}]}')])), 400],
  ['nesting 100000 deep', chat(`{"model":"mock-model",${msgs},"x":${'['.repeat(100000)}${']'.repeat(100000)}}`), 413],
  ['deep nesting within limits', chat(`{"model":"mock-model",${msgs},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`), 400],
  ['unknown model', chat(`{"model":"nope",${msgs}}`), 404, 'model'],
  ['unknown path', `GET /v1/nope HTTP/1.1\r\n${H}\r\n`, 404],
  ['GET on chat', `GET /v1/chat/completions HTTP/1.1\r\n${H}\r\n`, 405],
  ['PUT on chat', `PUT /v1/chat/completions HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\n`, 405],
  ['POST on models', `POST /v1/models HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\n`, 405],
  ['body on GET', `GET /v1/models HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`, 400],
  ['text/plain body', chat(`{"model":"mock-model",${msgs}}`, 'Content-Type: text/plain\r\n'), 415],
  ['form body', chat('a=b', 'Content-Type: application/x-www-form-urlencoded\r\n'), 415],
  ['declared body over the limit', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{`, 413],
  ['sent body over the limit', chat(`{"model":"mock-model",${msgs},"pad":"${'x'.repeat(70 * 1024)}"}`), 413],
  ['chunked body over the limit', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` + `4000\r\n${'x'.repeat(0x4000)}\r\n`.repeat(5), 413],
  ['chunk size not hex', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`, 400],
  ['chunk size overflow', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nabc\r\n`, 400],
  ['chunked and content-length', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400],
  ['content-length not a number', `POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`, 400],
  ['huge header', `GET /healthz HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(8000)}\r\n\r\n`, 431],
  // Small fields arriving in pieces, each piece under the limit: the head's sum counts.
  ['header fields over max_header_bytes in sum', [[`GET /healthz HTTP/1.1\r\n${H}`, 0], ...[0, 1, 2, 3].map((i) => [fields(120, `X-${i}-`), 30])], 431],
  ['one header field more than max_header_fields', `GET /healthz HTTP/1.1\r\n${H}${fields(100)}\r\n`, 431],
  ['huge URL', `GET /${'a'.repeat(8000)} HTTP/1.1\r\n${H}\r\n`, 431],
  ['garbage request line', 'GARBAGE\r\n\r\n', 400],
  ['bad HTTP version', `GET /healthz HTTP/7.1\r\n${H}\r\n`, 400],
  ['NUL in a header value', `GET /healthz HTTP/1.1\r\n${H}X-A: a\0b\r\n\r\n`, 400],
  ['slow headers', [[`GET /healthz HTTP/1.1\r\n`, 0], [`X-Slow: 1\r\n`, 50]], 408],
  ['slow body', [[`POST /v1/chat/completions HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model"`, 0]], 408],
];

for (const [name, request, status, param] of cases) {
  test(`${name} -> ${status}`, async () => {
    const r = await rawRequest(gw.port, request);
    assert.equal(r.status, status, `${name}: got ${r.status} ${r.body ?? r.raw}`);
    const body = JSON.parse(r.body);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.message.length > 0);
    assert.equal(typeof body.error.type, 'string');
    assert.ok('param' in body.error && 'code' in body.error);
    if (param) assert.equal(body.error.param, param);
  });
}

test('a head of exactly max_header_fields fields (the default, 100) is served', async () => {
  const r = await rawRequest(gw.port, `GET /healthz HTTP/1.1\r\n${H}${fields(99)}\r\n`);
  assert.equal(r.status, 200, r.raw);
});

test('the server is still up and still serving after all of that', async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(r.status, 200);
  assert.equal(gw.exitCode, null);
});

test('2,000 small header fields in one write (22.9 KB) under the default 16 KiB: 431 for their sum', async () => {
  const mock = await startMock(['--tokens', '2']);
  const plain = await startGateway(gatewayConfig({ models: { 'mock-model': [`http://127.0.0.1:${mock.port}/v1`] } }));
  const r = await rawRequest(plain.port, `GET /healthz HTTP/1.1\r\n${H}${fields(2000)}\r\n`);
  assert.equal(r.status, 431, r.raw);
  assert.equal(JSON.parse(r.body).error.message, 'request header fields too large');
});
