// OpenAI chat.completion.chunk SSE <-> StreamEvents.
//
// OpenAiStreamDecoder (upstream role): each `data:` payload is a chunk, "[DONE]" or an
// in-stream {"error":{...}}. The first chunk gives kStart (id, model); delta.content gives
// kTextDelta; a tool_calls entry with an id or a name gives kToolCallStart and any argument
// text gives kToolArgsDelta, with the entry's own `index`; finish_reason gives kFinish; a
// `usage` object gives kUsage (prompt_tokens_details.cached_tokens as cached); [DONE] gives
// kEnd. A refusal delta is passed on as text. delta.reasoning_content (DeepSeek, llama.cpp,
// older vLLM) or delta.reasoning (newer vLLM) gives kReasoningDelta, and
// completion_tokens_details.reasoning_tokens the usage's reasoning count. Only choice 0 can be
// carried (n > 1 is refused when the request is translated); another choice is an error.
//
// OpenAiStreamEncoder (client role): renders chunks the way OpenAI sends them: the first
// carries the assistant role and empty content, a tool call's first delta carries its index,
// id, type and function name, later ones only index and argument text; the finish chunk has
// an empty delta; with include_usage every chunk carries "usage":null and a usage-only chunk
// (empty choices, prompt_tokens_details.cached_tokens) precedes `data: [DONE]`. Reasoning is
// rendered as delta.reasoning_content chunks; signatures and redacted reasoning have no place
// in a chat chunk and are dropped (README.md). The parts
// every chunk repeats are rendered once per stream.
//
// The decoder reads a chunk that repeats the last content-only chunk's bytes around other content
// by reading that content alone (stream/content_template.h; before SSE framing too, through
// DecodeFramed), any other with the one-pass scanner (stream/chunk_scan.h), and leaves what the
// scanner declines to simdjson (ReadChunk).
//
// Thread safety: none; one per stream. Memory: the decoder keeps its parser, a chunk whose
// vector of tool call deltas keeps its capacity, one chunk's bytes (the template) and a scratch
// string; the encoder a prefix string.
#pragma once

#include <string>
#include <string_view>

#include "providers/provider.h"
#include "stream/chunk_scan.h"
#include "stream/content_template.h"
#include "stream/padded_json.h"

namespace turnpike::providers::openai {

class OpenAiStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  // Takes an event whose chunk repeats the template around other content (framed as
  // "data: <chunk>\n\n"): the template path before framing.
  size_t DecodeFramed(std::string_view bytes, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

 private:
  // Whether `body` is a valid JSON string body (one with escapes is decoded into scratch_).
  bool IsStringBody(std::string_view body);

  stream::PaddedJsonParser parser_;
  stream::ContentTemplate template_;  // the last content-only chunk
  stream::EscapedChunk chunk_;        // the chunk being decoded (its vector's capacity is reused)
  stream::ChunkLead lead_;            // the last scanned chunk's (stream/chunk_scan.h)
  std::string scratch_;               // escaped strings are checked by decoding them here
  TokenUsage usage_;
  Error error_;
  bool started_ = false;
};

// An {"error": ...} chunk's type and message (unescaped), as ReadChunk found them.
struct ChunkError {
  bool present = false;
  std::string_view type, message;
};

// The decoder's simdjson read of one chunk, the final say where stream::ScanEscapedChunk
// declines (errors, unusual JSON). `skip_head` leaves id and model unread (the answer has
// started). Views point into `payload` and the parser's buffers.
simdjson::error_code ReadChunk(stream::PaddedJsonParser& parser, std::string_view payload,
                               bool skip_head, stream::EscapedChunk& chunk, ChunkError& error);

class OpenAiStreamEncoder final : public StreamEncoder {
 public:
  explicit OpenAiStreamEncoder(const EncoderOptions& options) : options_(options) {}
  void OnEvent(const StreamEvent& event) override;

 private:
  void Start(const StreamEvent& event);
  void OpenChunk();
  void CloseChunk(FinishReason finish);

  const EncoderOptions options_;
  std::string prefix_;  // `data: {"id":..,"object":..,"created":..,"model":..,`
  TokenUsage usage_;
  bool started_ = false;
  bool done_ = false;
};

// OpenAI's finish_reason for a neutral one, and back (unknown reasons read as kStop).
std::string_view FinishReasonName(FinishReason finish);
FinishReason ParseFinishReason(std::string_view reason);

// {"message":..,"type":..,"param":..|null,"code":..}, the inside of OpenAI's error envelope.
std::string ErrorObject(const Error& error);

// A non-2xx OpenAI answer (any body, even not JSON) as a neutral error: the code from the
// status, the message and param from the {"error":{..}} envelope when there is one. Shared by
// the chat and Responses dialects, whose errors have the same shape.
Error ParseErrorEnvelope(int status, std::string_view body);

}  // namespace turnpike::providers::openai
