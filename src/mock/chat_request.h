// What the mock reads from a chat completion request: a few body fields (simdjson) and the
// `x-mock-*` headers, turned into a ChatPlan that says exactly what to answer.
//
// Errors are values: a malformed body or header gives an Error (kInvalidRequest, with the
// offending field in `param`) that the handler renders as a 400 in the API's own envelope.
// Thread-compatible: a BodyParser is per worker.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "http/exchange.h"
#include "mock/conversation.h"
#include "mock/fault.h"
#include "mock/mock_options.h"

namespace turnpike::mock {

// Which API the request came in on, and so which wire shapes the reply uses.
enum class Wire { kOpenAi, kAnthropic, kOllama, kCohere, kGemini, kResponses };

struct ChatRequest {
  Wire wire = Wire::kOpenAi;
  std::string model;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int64_t max_tokens = -1;     // max_completion_tokens, else max_tokens; -1 = absent
  std::string first_tool;      // tools[0].function.name (Anthropic: tools[0].name); empty when
                               // there are no tools
  uint64_t prompt_tokens = 0;  // estimated from the body size
  // The request asked for reasoning (OpenAI reasoning_effort other than "none", Anthropic
  // thinking enabled, Gemini thinkingConfig.includeThoughts with a budget other than 0, Ollama
  // think true or a level, Cohere thinking enabled): the reply starts with
  // kMockReasoningTokens of it, in the wire's form (the Responses wire renders none).
  bool reasoning = false;
  // --reply describe: the reply's content tokens, the description of the request's
  // conversation (conversation.h) split after each space; empty otherwise.
  std::vector<std::string> description;
  // The conversation's last turn is a tool result (conversation.h's `tool`); read only when the
  // parser was asked to (--tool-calls-until-result), false otherwise.
  bool ends_with_tool_result = false;
};

inline constexpr int kMockReasoningTokens = 3;

// Parses request bodies. Keeps a padded copy buffer and the simdjson parser between requests
// so that a request costs no allocation once they have grown.
class BodyParser {
 public:
  // kDescribe: every Parse* also fills ChatRequest::description (which allocates; kTokens
  // does not).
  // `read_last_turn`: every Parse* also fills ChatRequest::ends_with_tool_result (which reads
  // the conversation, and allocates).
  explicit BodyParser(ReplyMode reply = ReplyMode::kTokens, std::string text = {},
                      bool read_last_turn = false)
      : reply_(reply), text_(std::move(text)), read_last_turn_(read_last_turn) {}

  // An OpenAI /v1/chat/completions body (a Cohere v2 body too: its thinking.type is read).
  Result<ChatRequest> Parse(std::string_view body);
  // An Anthropic /v1/messages body: model, messages and max_tokens (>= 1) are required;
  // stream, tools[0].name are read; thinking {type: enabled, budget_tokens} is checked as
  // Anthropic does (budget_tokens >= 1024 and below max_tokens). Errors name fields the
  // Anthropic way ("max_tokens").
  Result<ChatRequest> ParseMessages(std::string_view body);
  // An Ollama /api/chat body: model and messages are required; stream (default true!),
  // options.num_predict (> 0 is a limit) and tools[0].function.name are read.
  Result<ChatRequest> ParseOllama(std::string_view body);
  // An OpenAI /v1/responses body: model and input (a string or an array) are required; stream,
  // max_output_tokens and tools[0].name (flat function tools) are read. Stricter than the API on
  // one point, to hold the gateway to its stateless promise: `store` must be false.
  Result<ChatRequest> ParseResponses(std::string_view body);
  // A Gemini generateContent body; the model and streaming come from the URL. `contents` (a
  // non-empty array) is required; generationConfig.maxOutputTokens and
  // tools[0].functionDeclarations[0].name are read. The history's function calls must carry
  // the thought signatures the mock gave them, as Gemini 3 wants (CheckThoughtSignatures).
  Result<ChatRequest> ParseGenerateContent(std::string_view body, std::string_view model,
                                           bool stream);

 private:
  // Parses `body` into the reused buffer; the root object or the error to answer.
  Result<simdjson::dom::object> ParseRoot(std::string_view body);
  // ChatRequest::description of the conversation `read` finds in `root`; empty with kTokens.
  std::vector<std::string> Describe(simdjson::dom::object root,
                                    Conversation (*read)(simdjson::dom::object)) const;

  // Whether the conversation `read` finds in `root` ends with a tool result (read_last_turn_).
  bool EndsWithToolResult(simdjson::dom::object root,
                          Conversation (*read)(simdjson::dom::object)) const;

  const ReplyMode reply_;
  const std::string text_;  // kText's reply
  const bool read_last_turn_;
  simdjson::dom::parser parser_;
  std::string padded_;
};

struct ChatPlan {
  int tokens = 0;               // content tokens (or tool-call fragments when tool_call); with
                                // --reply describe, ChatRequest::description's size
  bool truncated = false;       // max_tokens cut the reply: finish_reason "length"
  bool tool_call = false;       // reply with a call to ChatRequest::first_tool
  Millis first_token_delay{0};  // after the head
  Millis inter_token{0};        // between tokens
  Millis slow_headers{0};       // before the head
  FaultKind fault = FaultKind::kNone;
};

// Applies the options (--tool-calls, --tool-calls-until-result, --reply), the request's limits and
// its `x-mock-*` headers; draws a random fault when the request names none.
Result<ChatPlan> MakePlan(const MockOptions& options, const ChatRequest& chat,
                          const http::Request& request, std::mt19937_64& random);

}  // namespace turnpike::mock
