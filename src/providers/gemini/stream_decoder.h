// Gemini streamGenerateContent?alt=sse events -> StreamEvents (internal to
// providers/gemini/). Every `data:` is one whole GenerateContentResponse chunk; there are no
// event names and no end marker, so the chunk carrying a finishReason ends the answer.
//
//   first chunk                        -> kStart (responseId, modelVersion, usage so far)
//   candidates[0].content.parts[].text -> kTextDelta (thought summaries are skipped)
//   ...parts[].functionCall            -> kToolCallStart + one kToolArgsDelta (args as JSON text)
//   candidates[0].finishReason         -> kFinish, kUsage, kEnd
//   promptFeedback.blockReason, no candidates -> kFinish (content_filter), kUsage, kEnd
//   {"error":{...}}                    -> kError
//
// Gemini sends each function call whole in one part, its `args` an object: the decoder escapes
// that object's JSON text into one arguments delta. Calls are numbered in order of appearance;
// the call id is functionCall.id when Gemini sends one (without escapes), else
// "call_<responseId>_<n>", and it carries the part's thoughtSignature (thought_signature.h), so
// that the client's next request can give it back. A signature that is not base64 ends the
// stream with an error; a part with only a signature is skipped.
// usageMetadata counts are cumulative; the last one seen is the stream's (see README.md for how
// thoughts and tool-use prompts are counted). Chunks after the end are ignored.
//
// Memory: the parser, a vector of the current chunk's parts and two strings (arguments text,
// call id with its signature), all reused: no allocation per chunk once they have grown (a
// call id grows once to the longest signature seen). One per stream.
#pragma once

#include <string>
#include <vector>

#include "providers/provider.h"
#include "stream/padded_json.h"

namespace turnpike::providers::gemini {

class GeminiStreamDecoder final : public StreamDecoder {
 public:
  Status Decode(const stream::SseEvent& event, EventSink& sink) override;
  const TokenUsage& usage() const override { return usage_; }

  // One part of a chunk's candidate, as read (views into the parser's document).
  struct Part {
    std::string_view text;              // escaped
    std::string_view name;              // functionCall.name, escaped; empty for a text part
    std::string_view call_id;           // functionCall.id, escaped; may be empty
    std::string_view signature;         // thoughtSignature, escaped; may be empty
    size_t args_at = 0, args_size = 0;  // the escaped arguments, in args_
    bool thought = false;               // a thought summary, not the answer
    bool call = false;                  // a functionCall part
  };

 private:
  Status Emit(EventSink& sink);

  stream::PaddedJsonParser parser_;
  std::vector<Part> parts_;
  std::string args_;
  std::string call_id_;
  std::string response_id_;  // escaped; from the first chunk
  TokenUsage usage_;
  Error error_;  // the in-stream error, kept alive for its event
  bool started_ = false;
  bool ended_ = false;
  int32_t tools_ = 0;  // function calls so far
};

}  // namespace turnpike::providers::gemini
