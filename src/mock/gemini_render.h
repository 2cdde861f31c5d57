// Renders the mock's replies in the Gemini API's wire shapes
// (https://ai.google.dev/api/generate-content,
// https://ai.google.dev/gemini-api/docs/troubleshooting) by appending to strings: the
// GenerateContentResponse, the `alt=sse` stream of them, and the Google error envelope; and reads
// the Gemini route from a request target.
//
// Written independently of providers/gemini/ on purpose: the mock is the fake upstream the
// translator is tested against, so it must not share the translator's reading or rendering.
// Shapes follow the real API: no response or call ids besides `responseId` (Gemini's
// generateContent sends function calls without ids), a function call whole in one chunk with
// `args` an object and a `thoughtSignature` on its part, as Gemini 3 sends
// (https://ai.google.dev/gemini-api/docs/thought-signatures), usageMetadata on every chunk (counts
// so far), SSE events framed with CRLF and no end marker: the chunk with a finishReason is the
// last. GeminiStreamRenderer renders into one reused buffer, so a token costs no allocation; the
// view it returns stays valid until its next call. Thread-compatible: one renderer per stream.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "common/error.h"
#include "common/result.h"
#include "mock/openai_render.h"

namespace turnpike::mock {

// The Gemini route of a request target: /v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse (the mock speaks only the SSE form of the stream).
struct GeminiRoute {
  std::string_view model;
  bool stream = false;
  bool embed = false;  // :batchEmbedContents
  bool count = false;  // :countTokens
};

// True when the path is under /v1beta/models/ (a Gemini request, well formed or not).
bool IsGeminiPath(std::string_view path);

// The route, or the error to answer (kNotFound for an unknown method or a stream without
// alt=sse, as the real API answers 404 for unknown methods).
Result<GeminiRoute> ParseGeminiTarget(std::string_view target);

// The thoughtSignature the mock gives a call to `tool`: standard base64, with padding, of a
// 16-byte hash of the function's name. Deterministic, so that a later request can be checked
// without keeping state (CheckThoughtSignatures).
void AppendThoughtSignature(std::string& out, std::string_view tool);

// Gemini 3's check of a request's history: in the current turn (the contents after the last
// user content with a part that is not a functionResponse), the first functionCall part of each
// model content must carry the thoughtSignature the mock gave that call. Earlier turns are not
// checked, as Gemini does not check them. A missing signature is the 400 INVALID_ARGUMENT
// Gemini answers ("Function call is missing a thought_signature in functionCall parts..."); a
// different one is a 400 too. Allocates only for the error.
Status CheckThoughtSignatures(const simdjson::dom::array& contents);

// Gemini's HTTP status for an error: HttpStatus(code), except that an internal error stays 500.
unsigned GeminiStatus(ErrorCode code);

// {"error":{"code":N,"message":"...","status":"INVALID_ARGUMENT"}}; a `param` prefixes the
// message.
std::string RenderGeminiError(const Error& error);

// Gemini's finishReason for the mock's OpenAI finish reason (length: MAX_TOKENS, else STOP).
std::string_view GeminiFinishReasonFor(std::string_view finish_reason);

// The non-stream reply: `tokens` text tokens, or a functionCall to `tool` when it is set.
std::string RenderGenerateContent(const ReplyIdentity& identity, int tokens, std::string_view tool,
                                  std::string_view finish_reason, const Usage& usage);

class GeminiStreamRenderer final : public StreamRenderer {
 public:
  // `usage`'s prompt counts go on every chunk.
  GeminiStreamRenderer(const ReplyIdentity& identity, const Usage& usage);

  // Nothing: Gemini's first chunk already carries content.
  std::string_view Opening(std::string_view tool) override;
  // A chunk with one text part.
  std::string_view Token(int index) override;
  // Nothing until the last fragment, then the whole functionCall in one chunk.
  std::string_view ToolFragment(int index) override;
  // A chunk with an empty text part, the finishReason and the final usageMetadata.
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  void StartChunk();  // `data: {"candidates":[{"content":{"parts":[`
  void EndChunk(std::string_view finish_reason, const Usage& usage, bool with_output);

  const ReplyIdentity& identity_;
  const Usage usage_;
  std::string_view tool_;  // set by Opening; the request outlives the renderer
  std::string buffer_;
};

}  // namespace turnpike::mock
