// StreamEvents -> Gemini streamGenerateContent?alt=sse, for clients of the inbound
// /v1beta/models/{model}:streamGenerateContent route, and the whole-answer rendering of
// :generateContent (internal to providers/gemini/).
//
//   kStart         -> remembered (responseId, modelVersion); nothing written
//   kTextDelta     -> one chunk: a candidate with one text part
//   kToolCallStart -> the previous call's chunk if one is open; the call is opened
//   kToolArgsDelta -> appended to the open call's arguments (Gemini sends a call whole:
//                     functionCall.args is an object, never a fragment)
//   kFinish        -> the open call's chunk; the reason remembered
//   kUsage         -> remembered
//   kEnd           -> the open call's chunk, then a last chunk with finishReason and
//                     usageMetadata
//   kError         -> a chunk {"error":{code,message,status}}, as Google's streams end on error
//   kReasoningDelta     -> one chunk: a part {"text", "thought": true}, only when the client
//                          asked for thoughts (thinkingConfig.includeThoughts); else nothing
//   kReasoningSignature -> (same condition) a thought part with empty text and the signature
//                          as `thoughtSignature`, tagged with its issuer (thought_signature.h)
//   kRedactedReasoning  -> nothing: Gemini has no part for an encrypted payload
// usageMetadata.thoughtsTokenCount is reasoning_tokens; candidatesTokenCount excludes them.
//
// Chunks are framed "data: <json>\r\n\r\n" as Gemini's own. State: the ids, the finish reason,
// the usage and the open call's name, id and argument bytes, in strings reused for the stream's
// life (no allocation per chunk once they have grown).
#pragma once

#include <string>

#include "providers/provider.h"

namespace turnpike::providers::gemini {

class GeminiStreamEncoder final : public StreamEncoder {
 public:
  explicit GeminiStreamEncoder(bool include_thoughts = false)
      : include_thoughts_(include_thoughts) {}
  void OnEvent(const StreamEvent& event) override;

 private:
  void OpenChunk();
  void CloseChunk(bool last);
  void FlushCall();
  void RenderError(const Error& error);

  const bool include_thoughts_;
  bool done_ = false;
  bool call_open_ = false;
  std::string id_, model_;                       // escaped
  std::string call_id_, call_name_, call_args_;  // escaped
  std::string args_json_;                        // the open call's arguments, unescaped
  FinishReason finish_ = FinishReason::kNone;
  TokenUsage usage_;
};

// The Gemini name of a neutral finish reason (STOP, MAX_TOKENS, SAFETY).
std::string_view FinishReasonName(FinishReason finish);

// ,"usageMetadata":{...} from neutral usage (nothing when none was reported).
void AppendUsageMetadata(std::string& out, const TokenUsage& usage);

// Whether a client's GenerateContentRequest body asks for thoughts
// (generationConfig.thinkingConfig.includeThoughts true). Parses the body only when it names the
// field; once per request.
bool IncludeThoughts(std::string_view client_body);

// A whole GenerateContentResponse for a neutral answer; the reasoning as a leading thought part
// when `include_thoughts`.
std::string RenderGenerateContent(const Response& response, bool include_thoughts);

}  // namespace turnpike::providers::gemini
