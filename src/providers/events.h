// The dialect-neutral model that every provider dialect translates through.
//
// A stream is a sequence of StreamEvents: a dialect's StreamDecoder turns each upstream SSE
// event into zero or more of them, and the client dialect's StreamEncoder renders them. A
// non-stream answer is one Response. Keeping this model small is what lets a dialect be added
// by writing one decoder and one encoder instead of one translator per pair.
//
// Strings in a StreamEvent are views in JSON-escaped form (the bytes between the quotes of a
// JSON string token): every dialect speaks JSON, so a text delta is copied from the upstream's
// token to the client's without being unescaped and escaped again. The views live only for the
// duration of the sink call that receives the event.
//
// Token counts follow the governance layer's convention (OpenAI's): prompt_tokens counts every
// input token, cached ones included; cached_tokens is the part of prompt read from a cache;
// cache_creation_tokens the part written to one. -1 means "not reported".
//
// Reasoning (a model's thinking before it answers) is its own event kind, not text: a client
// dialect renders it where its API puts thinking (Anthropic thinking blocks, OpenAI-compatible
// `reasoning_content`), or drops it where the API has no place for it (see each dialect's
// README). Its signature and redacted payloads are opaque bytes the issuing upstream wants back
// on the next turn; they are passed on as they came. reasoning_tokens is the part of
// completion_tokens spent thinking (OpenAI's convention: output counts include reasoning).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace turnpike::providers {

enum class FinishReason : uint8_t {
  kNone,           // not known yet
  kStop,           // natural end of turn
  kStopSequence,   // a stop sequence matched (OpenAI reports this as "stop")
  kLength,         // the max tokens limit cut the answer
  kToolCalls,      // the model called tools
  kContentFilter,  // refused or filtered
};

struct TokenUsage {
  int64_t prompt_tokens = -1;          // all input tokens, cached and cache-written included
  int64_t completion_tokens = -1;      // output tokens
  int64_t cached_tokens = -1;          // input tokens read from the prompt cache
  int64_t cache_creation_tokens = -1;  // input tokens written to the prompt cache
  int64_t reasoning_tokens = -1;       // output tokens spent reasoning (in completion_tokens)

  bool present() const { return prompt_tokens >= 0 || completion_tokens >= 0; }
};

enum class EventKind : uint8_t {
  kStart,               // the answer begins: id, model; usage may hold the prompt counts
  kTextDelta,           // text: a fragment of the assistant's text
  kToolCallStart,       // tool_index, id, name: a new tool call
  kToolArgsDelta,       // tool_index, text: a fragment of that call's JSON arguments
  kReasoningDelta,      // text: a fragment of the model's reasoning (thinking) text
  kReasoningSignature,  // text: the signature closing the current reasoning (opaque, whole)
  kRedactedReasoning,   // text: one encrypted reasoning payload (opaque, whole)
  kFinish,              // finish (and stop_sequence when known)
  kUsage,               // usage: the counts known so far (cumulative, not increments)
  kError,               // error: the upstream failed mid-stream; nothing follows
  kEnd,                 // the answer is complete; nothing follows
};

struct StreamEvent {
  EventKind kind = EventKind::kEnd;
  FinishReason finish = FinishReason::kNone;
  int32_t tool_index = 0;          // 0-based position of the call among the answer's tool calls
  std::string_view text;           // escaped; kTextDelta, kToolArgsDelta, kReasoning*, kRedacted*
  std::string_view id;             // escaped; kStart (message id), kToolCallStart (call id)
  std::string_view name;           // escaped; kToolCallStart
  std::string_view model;          // escaped; kStart
  std::string_view stop_sequence;  // escaped; kFinish with kStopSequence, when reported
  TokenUsage usage;                // kStart, kUsage
  const Error* error = nullptr;    // kError
};

// Receives decoded events in order. Implemented by every StreamEncoder.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const StreamEvent& event) = 0;
};

// A complete non-stream answer. Strings here are unescaped (owned, built once per request).
struct ToolCall {
  std::string id, name;
  std::string arguments;  // the arguments as JSON text
};

struct Response {
  std::string id, model;
  std::string text;                 // the assistant's text blocks, concatenated
  std::string reasoning;            // the reasoning text, concatenated; empty: none
  std::string reasoning_signature;  // the signature of that reasoning, as issued; empty: none
  std::vector<std::string> redacted_reasoning;  // encrypted reasoning payloads, in order
  std::vector<ToolCall> tool_calls;
  FinishReason finish = FinishReason::kNone;
  std::string stop_sequence;  // the matched sequence, when the upstream reports it
  TokenUsage usage;
};

// An error rendered for a client: the status to answer with and the body in its dialect.
struct ErrorReply {
  int status = 500;
  std::string body;
};

}  // namespace turnpike::providers
