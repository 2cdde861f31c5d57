// Ollama /api/chat NDJSON lines -> StreamEvents (internal to providers/ollama/). The relay
// splits the body into lines (stream::NdjsonParser) and hands each as an SseEvent whose `data`
// is the line.
//
//   first line             -> kStart (id "ollama-<created_at>", model)
//   message.content        -> kTextDelta (when not empty)
//   message.tool_calls[i]  -> kToolCallStart (id "call_<n>", name) + one kToolArgsDelta with
//                             the call's whole `arguments` object as JSON text (Ollama sends
//                             each call complete, in one line)
//   done: true             -> kFinish (done_reason), kUsage (prompt_eval_count, eval_count),
//                             kEnd; a line after it is an error
//   {"error": "..."}       -> kError
//   message.thinking       -> nothing (see README.md: reasoning is not forwarded)
//
// State is O(1) per stream: whether the start was sent, the tool calls numbered so far, and two
// small buffers reused for every line (no allocation per line once they have grown).
#pragma once

#include <string>

#include "providers/provider.h"
#include "stream/padded_json.h"

namespace turnpike::providers::ollama {

class OllamaStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

 private:
  stream::PaddedJsonParser parser_;
  TokenUsage usage_;
  Error error_;          // the last in-stream error, kept alive for its event
  std::string id_;       // the answer id, made from the first line
  std::string call_id_;  // the current tool call's id
  std::string args_;     // the current tool call's arguments, as escaped JSON text
  int32_t tools_ = 0;    // tool calls started so far
  bool started_ = false;
  bool done_ = false;
};

}  // namespace turnpike::providers::ollama
