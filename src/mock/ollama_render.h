// Renders the mock's replies in Ollama's /api/chat wire shapes
// (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion) by
// appending to strings: the whole answer, the NDJSON stream (Content-Type
// application/x-ndjson, one object per line, the last with "done":true, done_reason and the
// counts) and the error object {"error":"..."}.
//
// Written independently of providers/ollama/ on purpose: the mock is the fake upstream the
// translator is tested against, so it must not share the translator's parsing or rendering.
// Ollama has no message id and no tool-call ids; a tool call arrives whole, in one line, with
// `arguments` an object ({"location":"Paris"}), and done_reason stays "stop" after a call.
// OllamaStreamRenderer renders into one reused buffer, so a token costs no allocation; the view
// it returns stays valid until its next call. Thread-compatible: one renderer per stream.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "mock/openai_render.h"

namespace turnpike::mock {

inline constexpr std::string_view kOllamaChatPath = "/api/chat";
inline constexpr std::string_view kNdjsonContentType = "application/x-ndjson";
// A model name with this suffix is "not pulled": 404, as Ollama answers for an unknown model.
inline constexpr std::string_view kOllamaMissingModelSuffix = ":missing";

// Ollama's status for an error: HttpStatus(code).
unsigned OllamaStatus(ErrorCode code);

// {"error":"<param>: <message>"} (the param prefix only when set).
std::string RenderOllamaError(const Error& error);

// The error Ollama answers for a model it does not have.
Error OllamaModelNotFound(std::string_view model);

// The non-stream reply: `tokens` text tokens, or a call to `tool` when it is set; with
// usage.reasoning_tokens > 0, message.thinking too.
std::string RenderOllamaChat(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage);

class OllamaStreamRenderer final : public StreamRenderer {
 public:
  // `reasoning_tokens`: Opening() gives that many lines of message.thinking.
  explicit OllamaStreamRenderer(const ReplyIdentity& identity, int reasoning_tokens = 0);

  // The thinking lines, if any; else nothing (Ollama's first line already carries content).
  std::string_view Opening(std::string_view tool) override;
  // One line with the token as message.content.
  std::string_view Token(int index) override;
  // The whole call in one line at the last fragment; nothing for the others (the fragments
  // stand for the time the model takes to generate the call).
  std::string_view ToolFragment(int index) override;
  // The done line: done_reason ("stop", "length"; "stop" after a tool call), the counts.
  std::string_view Closing(std::string_view finish_reason, const Usage& usage) override;

 private:
  void StartLine();  // {"model":..,"created_at":..,"message":{"role":"assistant","content":

  const ReplyIdentity& identity_;
  const int reasoning_tokens_;
  std::string tool_;
  std::string buffer_;
};

}  // namespace turnpike::mock
