// The mock provider as a library: an OpenAI- and Anthropic-compatible fake LLM that the
// `mock-provider` command serves and tests start in-process.
//
//   MockService service(options);                        // options passed Validate()
//   http::Server server(service.server_options(), service.MakeHandlerFactory());
//   server.Bind(); server.Run();
//
// Routes: POST /v1/chat/completions (OpenAI), POST /v1/messages (Anthropic), POST /api/chat
// (Ollama: NDJSON streams, `stream` defaults to true; a model named "*:missing" is a 404 as for
// a model Ollama has not pulled; see ollama_render.h) and POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse (Gemini; no key
// check, as for the others; see gemini_render.h) and POST /v1/responses (the OpenAI Responses
// API, stateless: a body without `store: false` is a 400; see responses_render.h), each stream or
// not, with tool calls and faults, in that API's wire shapes and error envelope; GET /v1/models,
// GET /mock/stats, POST /mock/stats/reset, GET /healthz. Anything else: OpenAI's 404 envelope.
// Every route is served over HTTP/1.1 and over cleartext HTTP/2 by prior knowledge (same port);
// /mock/stats of the mock command also counts HTTP/2 connections, streams and client resets.
// POST /v1/embeddings (OpenAI, float or base64) and POST /api/embed (Ollama) answer
// deterministic unit vectors seeded by each input (embeddings.h; `--embeddings words`: bag-of-
// words vectors, close for texts sharing most words), `dimensions` honoured, with the same
// x-mock-* delays and faults as a non-stream chat reply.
// On /v1/messages the 503 fault answers Anthropic's overload status, 529 overloaded_error, and
// a stream counts as completed once message_stop is sent.
// POST /v2/chat answers in Cohere's v2 Chat shapes (cohere_render.h), stream or not; its errors
// are Cohere's {"id","message"} with the fault's status; --cached-tokens is reported as
// usage.cached_tokens (--cache-write-tokens cannot be: Cohere has no such count).
//
// Per-request overrides (request headers), so tests inject faults without a restart:
//   x-mock-fault: 500|503|429|reset|reset-before-head|slow-headers|close-without-done
//   x-mock-tokens: N   x-mock-first-token-delay-ms: N   x-mock-inter-token-ms: N
//   x-mock-slow-headers-ms: N (length of the slow-headers fault; default --slow-headers or 5s)
//   x-mock-tool-call: 1 (with `tools` in the body: reply with a call to the first tool)
// A malformed body or x-mock-* header is answered 400 in the route's API error envelope, and so
// is a /v1/messages request without the `anthropic-version` header (the real API requires it).
// --tool-calls makes every request that offers tools answer with a call (x-mock-tool-call: 1).
// --reply describe makes every chat reply's text a description of the conversation the request
// carried (`system: ... | user: ... | assistant: ...`; conversation.h), whole, in every wire.
// --cached-tokens / --cache-write-tokens report that part of the prompt as read from / written
// to the prompt cache (OpenAI: prompt_tokens_details.cached_tokens; Anthropic:
// cache_read_input_tokens / cache_creation_input_tokens, outside input_tokens).
// Random faults (--fail-rate, --rate-limit-rate, --reset-rate) are drawn only for requests
// without x-mock-fault. /mock/stats counts every delayed head as a "slow-headers" fault, so
// with --slow-headers set every request counts.
//
// Ownership: the service owns the options and the stats board; the handlers it makes borrow
// both, so the service must outlive the Server. Thread safety: options are immutable; stats()
// may be read from any thread (see mock_stats.h).
#pragma once

#include "http/handler.h"
#include "http/server.h"
#include "mock/mock_options.h"
#include "mock/mock_stats.h"

namespace turnpike::mock {

class MockService {
 public:
  explicit MockService(MockOptions options);
  MockService(const MockService&) = delete;
  MockService& operator=(const MockService&) = delete;

  const MockOptions& options() const { return options_; }
  StatsBoard& stats() { return stats_; }

  // The server settings the options ask for (listen address, workers).
  http::ServerOptions server_options() const;

  // One MockHandler per worker; worker i writes only stats().worker(i).
  http::HandlerFactory MakeHandlerFactory();

 private:
  const MockOptions options_;
  StatsBoard stats_;
};

}  // namespace turnpike::mock
