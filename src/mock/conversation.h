// Internal to mock/: what `--reply describe` answers. Reads the conversation a chat request
// carries as (role, text) turns, once per wire, and renders it as one line of text that the
// reply then streams word by word, so that a test can see which messages reached the mock.
//
// The description: one `role: text` per turn, in order, joined by " | ", e.g.
//   system: You are terse. | user: hi | assistant: call get_weather({"city":"Paris"}) |
//   tool: sunny | assistant: It is sunny. | user: thanks
// Roles are the mock's four words whatever the wire calls them:
//   system     OpenAI/Cohere/Ollama role system or developer, Anthropic `system`, Responses
//              `instructions` and role system or developer, Gemini `systemInstruction`;
//   user       role user (Gemini: also a content without a role);
//   assistant  role assistant (Gemini: model), and one `call <name>(<arguments>)` turn per tool
//              call: OpenAI tool_calls, Anthropic tool_use, Responses function_call, Gemini
//              functionCall; arguments as sent (a JSON string as is, an object minified);
//   tool       one turn per tool result: role tool (or function), Anthropic tool_result,
//              Responses function_call_output, Gemini functionResponse (its `response`
//              minified); the text is the result's output.
// A role the mock does not know is kept as sent. Text given as parts is concatenated (text,
// input_text, output_text parts and blocks; Cohere documents as their data); other parts
// (images, audio, files, thinking, Gemini thought parts) are left out. A message's text comes
// before its calls and results; text after them is a turn of its own. A message with nothing
// describable still shows as `role:` (empty text, no space after the colon).
//
// Readers never fail: the request parser has already checked what the mock needs, and a field
// of an unexpected shape is skipped. Thread-compatible; everything is returned by value.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace turnpike::mock {

struct Turn {
  std::string role;  // "system", "user", "assistant", "tool", or an unknown role as sent
  std::string text;
};

using Conversation = std::vector<Turn>;

// `messages` of OpenAI chat, Cohere v2 (tool_plan is assistant text) and Ollama (arguments
// are objects).
Conversation ReadChatConversation(simdjson::dom::object root);
// Anthropic Messages: `system` (a string or text blocks), then `messages`.
Conversation ReadMessagesConversation(simdjson::dom::object root);
// OpenAI Responses: `instructions`, then `input` (a string: one user turn; or items).
Conversation ReadResponsesConversation(simdjson::dom::object root);
// Gemini generateContent: `systemInstruction`, then `contents`.
Conversation ReadGeminiConversation(simdjson::dom::object root);

// The description line (format above).
std::string DescribeConversation(const Conversation& turns);

// The reply's content tokens for `description`: split after each space, so that every token
// but the last ends with its space and the tokens concatenate back to `description` exactly.
// Empty text gives no token.
std::vector<std::string> SplitReplyTokens(std::string_view description);

}  // namespace turnpike::mock
