// The settings of one mock provider, as given on the `turnpike mock-provider` command line.
//
// A MockOptions value is immutable once the service is built from it: every worker reads it
// without locks. Parsing helpers return errors as values (Result); the command turns them into
// CLI11 validation errors.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::mock {

using Millis = std::chrono::milliseconds;

inline constexpr uint16_t kDefaultPort = 9000;
inline constexpr int kDefaultTokens = 16;
// Upper bound for --tokens and x-mock-tokens: keeps one request from streaming forever.
inline constexpr int kMaxTokens = 1'000'000;

// What the text of a chat reply says (`--reply`).
enum class ReplyMode {
  // `tok0 tok1 ...`: --tokens (or x-mock-tokens) of them, cut by the request's max_tokens.
  kTokens,
  // A description of the conversation the request carried: one `role: text` per message,
  // tool call and tool result, joined by " | ", e.g.
  //   system: Be terse. | user: hi | assistant: call f({"a":1}) | tool: 42 | user: I am Ann
  // (the whole format: conversation.h). Streamed one token per space-separated word; never
  // cut: --tokens, x-mock-tokens and max_tokens do not apply, and the finish reason is "stop".
  // Tool calls (--tool-calls, x-mock-tool-call) and embeddings are answered as in kTokens.
  kDescribe,
  // `--reply-text TEXT`: that text, streamed and cut like a description (a test's fixed answer,
  // e.g. one naming a URL the conversation never did).
  kText,
};

struct MockOptions {
  std::string host = "127.0.0.1";
  uint16_t port = kDefaultPort;  // 0 = pick a free port
  int workers = 1;
  Millis first_token_delay{0};  // after the response head, before the first token
  int tokens = kDefaultTokens;  // completion tokens per reply (before max_tokens caps it)
  Millis inter_token{0};        // between two tokens of a stream
  double fail_rate = 0;         // share of chat requests answered 500
  double rate_limit_rate = 0;   // share answered 429 with Retry-After
  int retry_after_s = 1;        // the Retry-After value of a 429
  double reset_rate = 0;        // share of streams reset (RST) after half the tokens
  Millis slow_headers{0};       // delay before every response head; also the length of
                                // `x-mock-fault: slow-headers` when non-zero
  uint64_t seed = 1;            // fault draws are reproducible per (seed, worker)
  int cached_tokens = 0;        // prompt tokens reported as read from the prompt cache
  int cache_write_tokens = 0;   // ... as written to it (Anthropic only; OpenAI cannot say)
  bool tool_calls = false;      // answer every request that offers tools with a call to the
                                // first one (as `x-mock-tool-call: 1` does per request: for
                                // clients behind a gateway that does not forward headers)
  bool tool_calls_until_result = false;  // the same, unless the request's conversation ends
                                         // with a tool result: then the reply --reply says (a
                                         // model that calls, then answers with the result)
  // `--embeddings words`: bag-of-words embedding vectors (embeddings.h), so that texts sharing
  // most words are close; false: a random unit vector per text.
  bool word_embeddings = false;
  ReplyMode reply = ReplyMode::kTokens;
  std::string reply_text;  // kText
};

// Parses "0", "250ms", "2s", "1m". Errors name `what` (the option).
Result<Millis> ParseDuration(std::string_view what, std::string_view text);

struct HostPort {
  std::string host;  // without brackets for IPv6
  uint16_t port = 0;
};

// Parses "127.0.0.1:9000", "localhost:0", "[::1]:8080".
Result<HostPort> ParseHostPort(std::string_view text);

// Checks ranges: rates in [0, 1] with fail + rate-limit + reset <= 1, workers >= 1,
// tokens in [0, kMaxTokens], retry_after_s, cached_tokens, cache_write_tokens >= 0.
Status Validate(const MockOptions& options);

}  // namespace turnpike::mock
