// OpenAI /v1/chat/completions request bodies: read the few fields the gateway needs, forward
// the rest byte for byte.
//
// The gateway never re-serializes a client's body: it validates it, reads model / stream /
// stream_options / max tokens, then splices the upstream model name (and, when it must count
// tokens, stream_options.include_usage) into the original bytes.
//
// Validation is complete: any malformed byte anywhere (truncation, trailing garbage, a bad
// literal deep inside messages, bad escapes, unescaped control characters, invalid UTF-8) is a
// 400. How, and why: one simdjson On-Demand pass that visits every value. On-Demand's first
// stage (run-time dispatched SIMD) checks UTF-8, string termination and control characters for
// the whole body; visiting each value then checks structure, literals, numbers and escapes,
// and the same pass yields the byte ranges of model / stream_options (raw_json_token), which a
// DOM cannot give. Measured with bench/chat_request_bench.cc (2 cores, CPU time, median of 6):
//                                2 KB      40 KB
//   InspectChatRequest           0.89 us   12.1 us   (the walk + copy + field rules)
//   On-Demand full walk alone    0.78 us   11.4 us
//   DOM parse alone              1.1 us    10.6 us   (validates, but gives no byte ranges, so
//   On-Demand top level alone    0.41 us    5.3 us    it would need this second pass too)
// DOM + a range pass would cost ~1.5 us / ~16 us and parse twice; the single walk wins.
// Numbers are held to simdjson's limits: a float beyond double range (1e400) is rejected as
// invalid JSON; documents nested deeper than 128 levels are rejected too.
//
// Duplicate keys: a body with `model`, `stream`, `stream_options`, `max_tokens`,
// `max_completion_tokens` (or `include_usage` inside stream_options) twice is rejected, since
// the gateway and the provider could otherwise read different values (e.g. bill one model and
// call another). Keys are compared unescaped ("mod\u0065l" is `model`).
//
// null: OpenAI's optional fields accept null, so `stream`, `stream_options`, `include_usage`,
// `max_tokens` and `max_completion_tokens` set to null count as not set.
//
// Thread safety: both functions are reentrant. InspectChatRequest copies the body into a padded
// buffer (simdjson reads past the end) held with its parser per calling thread: created on first
// use, reused; a body over 1 MiB gets a parser of its own so it does not pin memory to the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::openai {

struct ChatRequestInfo {
  std::string model;  // unescaped
  bool stream = false;
  bool has_stream_options = false;        // the `stream_options` key is present (object or null)
  bool include_usage = false;             // stream_options.include_usage is true: the client asked
  size_t model_begin = 0, model_end = 0;  // byte range of model's string token, quotes included
  // Byte range of the stream_options value when has_stream_options (`{...}` or `null`).
  size_t stream_options_begin = 0, stream_options_end = 0;
  // Byte range of the stream_options.include_usage value token, if that member is present.
  size_t include_usage_begin = 0, include_usage_end = 0;
  int64_t max_tokens = -1;  // max_completion_tokens, else max_tokens; -1 if neither is set
};

// Validates `body` and reads the fields above. Errors are ErrorCode::kInvalidRequest (400)
// with `param` naming the offending field (empty when the body as a whole is not valid JSON or
// not an object): model missing / not a string / empty; messages missing / not an array; stream
// not a bool; stream_options not an object; stream_options.include_usage not a bool;
// max_tokens / max_completion_tokens not a non-negative integer; a duplicated key (see above).
Result<ChatRequestInfo> InspectChatRequest(std::string_view body);

// InspectChatRequest's two readers; it asks the first, then the second. ScanChatRequest reads
// the usual request in one forward pass with no copy and no simdjson: true and `info` filled
// exactly as ParseChatRequest fills it, or false for "not decided here". It decides only valid
// JSON that breaks no field rule (every error, every duplicated or escaped key, a number with an
// exponent, nesting deeper than 64 is left to ParseChatRequest). A body longer than
// kScanBodyBytes is scanned only if it is plain (no backslash, control character or byte above
// 0x7F): the scanner checks such strings a character at a time, and measured slower than
// simdjson's 32-byte stage 1 past about 512 bytes of escaped, accented prose, while on plain
// text it stays ahead at every size (bench/chat_request_bench.cc, docs/BENCHMARKS.md).
// ParseChatRequest is the simdjson On-Demand walk described above, with the final say.
// tests/providers/openai/chat_request_test.cc and the chat request fuzz target compare the two.
inline constexpr size_t kScanBodyBytes = 512;
bool ScanChatRequest(std::string_view body, ChatRequestInfo& info);
Result<ChatRequestInfo> ParseChatRequest(std::string_view body);

// The body to send upstream: `body` with the model token replaced by the JSON-escaped
// `upstream_model`. When force_include_usage and info.stream are true and the client did not
// set include_usage, the result also carries stream_options.include_usage = true, keeping any
// other stream_options members: spliced after the body's opening '{' when there is no
// stream_options, replacing the include_usage value or a null stream_options otherwise.
// Nothing else is re-serialized. `info` must come from InspectChatRequest(body).
std::string BuildUpstreamChatBody(std::string_view body, const ChatRequestInfo& info,
                                  std::string_view upstream_model, bool force_include_usage);

}  // namespace turnpike::providers::openai
