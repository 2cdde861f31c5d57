// Renders the mock's replies in OpenAI's exact wire shapes, by appending to strings (no JSON
// DOM): chat.completion objects, chat.completion.chunk SSE events, the model list and the
// error envelope.
//
// ChunkRenderer precomputes the parts every chunk of one stream repeats (id, created, model)
// once per stream; each chunk is then assembled in a buffer it reuses, so a token costs no
// allocation. The string_view a ChunkRenderer returns stays valid until its next call.
// Thread-compatible: one renderer per stream.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"

namespace turnpike::mock {

// The tool-call reply's arguments {"location":"Paris"}, as JSON-string-escaped fragments.
inline constexpr std::array<std::string_view, 5> kToolArgumentFragments = {
    R"({\")", "location", R"(\":\")", "Paris", R"(\"})"};

// What every part of one reply repeats.
struct ReplyIdentity {
  std::string id;       // "chatcmpl-mock-..."
  std::string call_id;  // "call_mock_...", for tool calls
  int64_t created = 0;  // unix seconds
  std::string_view model;
  // --reply describe: the texts of the content tokens (ChatRequest::description, which
  // outlives the reply); empty: token i reads "tok<i> ".
  std::span<const std::string> description;
};

// prompt_tokens counts every input token; cached_tokens and cache_write_tokens are parts of
// it (read from / written to the prompt cache). OpenAI reports only the first part
// (prompt_tokens_details.cached_tokens), Anthropic both, outside input_tokens.
struct Usage {
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
  uint64_t cached_tokens = 0;
  uint64_t cache_write_tokens = 0;
  // Output tokens spent reasoning, part of completion_tokens. When > 0 the reply starts with
  // that many reasoning tokens ("think<i> "), in the wire's reasoning form.
  uint64_t reasoning_tokens = 0;
};

// Appends the content of token `index`, as it is: identity.description[index] when the reply
// describes, else "tok<index> ".
void AppendTokenText(std::string& out, const ReplyIdentity& identity, int index);
// The same, escaped to sit inside a JSON string.
void AppendTokenJson(std::string& out, const ReplyIdentity& identity, int index);
// Appends the reasoning token `index`: "think<index> ".
void AppendReasoningText(std::string& out, int index);

// {"error":{"message":..,"type":..,"param":..|null,"code":..}}
std::string RenderErrorBody(const Error& error);

// The non-stream reply: `tokens` content tokens, or a tool call to `tool` when it is set.
std::string RenderCompletion(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage);

// GET /v1/models.
std::string RenderModelList();

// The SSE events of one streamed reply, in a provider's dialect. finish_reason is OpenAI's
// ("stop", "length", "tool_calls"); a dialect with other names maps it.
class StreamRenderer {
 public:
  virtual ~StreamRenderer() = default;
  // The first event(s): the assistant role (and, for a tool call to `tool`, its name and id).
  virtual std::string_view Opening(std::string_view tool) = 0;
  // One content token.
  virtual std::string_view Token(int index) = 0;
  // One fragment of the tool call's arguments; index in [0, kToolArgumentFragments.size()).
  virtual std::string_view ToolFragment(int index) = 0;
  // Everything after the last token: finish reason, usage, end of stream.
  virtual std::string_view Closing(std::string_view finish_reason, const Usage& usage) = 0;
};

class ChunkRenderer final : public StreamRenderer {
 public:
  // `include_usage`: every chunk carries "usage":null and Closing() adds a usage chunk.
  // `reasoning_tokens`: Opening() adds that many delta.reasoning_content chunks (the form vLLM,
  // DeepSeek and llama.cpp stream).
  ChunkRenderer(const ReplyIdentity& identity, bool include_usage, int reasoning_tokens = 0);

  std::string_view Opening(std::string_view tool) override;
  std::string_view Token(int index) override;
  std::string_view ToolFragment(int index) override;
  // The finish chunk, the usage chunk when asked for, and `data: [DONE]`.
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  void StartChoice();
  void EndChoice(std::string_view finish_reason);

  const ReplyIdentity& identity_;
  const bool include_usage_;
  const int reasoning_tokens_;
  std::string
      prefix_;  // `data: {"id":..,"object":..,"created":..,"model":..,"system_fingerprint":..,`
  std::string buffer_;
};

}  // namespace turnpike::mock
