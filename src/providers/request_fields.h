// Helpers every dialect uses while translating a request: the client errors, worded the same
// in every dialect (kInvalidRequest with `param` naming the client's field), and small readers
// over a boost::json request with field paths for those errors.
//
// Pure functions; thread-safe.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/result.h"

namespace turnpike::providers::request {

// A 400 (kInvalidRequest) about the client's field `param`.
Error Invalid(std::string message, std::string param);
// "'<param>' is not supported by this model's provider (<provider>)."
Error UnsupportedBy(const std::string& param, std::string_view provider);
// "Invalid type for '<param>': expected <expected>."
Error WrongType(const std::string& param, std::string_view expected);

// Whether `key` is in `object` with a value other than null.
bool Present(const boost::json::object& object, std::string_view key);

// The token limit the client set for the answer: max_completion_tokens, else the older
// max_tokens; nullopt when neither is set. Each that is set must be a positive integer (else a
// 400 naming it).
Result<std::optional<int64_t>> MaxOutputTokens(const boost::json::object& chat);

// The pivot's `stop` as an array of strings (a single string becomes one); nullopt when absent
// or null. Anything else is a 400 naming `stop`.
Result<std::optional<boost::json::array>> StopSequences(const boost::json::object& chat);

// `n` absent, null or 1; anything else is a 400 naming `n` with `message`.
Status OneChoice(const boost::json::object& chat, std::string_view message);

// The first member of `object` that is not null and not named in `handled`: the field a
// dialect must refuse rather than drop (nothing is dropped silently). nullopt: none.
std::optional<std::string> FirstUnhandled(const boost::json::object& object,
                                          std::span<const std::string_view> handled);

// "<base>[<index>]", the OpenAI way of naming an array element in `param`.
std::string At(const std::string& base, size_t index);

// The URL of an OpenAI image_url content part, checked: `image_url` is an object with a string
// `url`, and its `detail` is absent, null or "auto" (the upstreams here choose the resolution
// themselves; `detail_refusal` is the message for any other value, naming the dialect).
Result<std::string_view> ImageUrlOf(const boost::json::object& part, const std::string& param,
                                    std::string_view detail_refusal);

// A data URL ("data:..."), base64 or not.
bool IsDataUrl(std::string_view url);
// "data:<media type>;base64,<data>", split; nullopt for anything else.
struct DataUrl {
  std::string_view media_type, data;
};
std::optional<DataUrl> ParseBase64DataUrl(std::string_view url);

// One function tool of the pivot's `tools`, checked: its type is "function", its name a string.
// Views into the request, which must outlive it.
struct FunctionTool {
  std::string param;                                // "tools[i]", for errors about this tool
  const boost::json::value* name = nullptr;         // a string
  const boost::json::value* description = nullptr;  // nullptr when absent or null
  const boost::json::value* parameters = nullptr;   // nullptr when absent or null
  bool strict = false;                              // function.strict is true
};

// The pivot's `tools` (absent or null: none). Any other tool type is refused as unsupported by
// `provider`; what a dialect does with `strict` is its own decision.
Result<std::vector<FunctionTool>> ReadFunctionTools(const boost::json::object& chat,
                                                    std::string_view provider);

// Calls on_message(message, param) for each object of chat.messages, param being
// "messages[i]"; the first error stops. A missing or non-array `messages`, or a message that
// is not an object, is a 400 naming it.
template <typename F>
Status ForEachMessage(const boost::json::object& chat, F&& on_message) {
  const boost::json::value* messages = chat.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return WrongType("messages", "an array");
  size_t i = 0;
  for (const boost::json::value& message : messages->as_array()) {
    const std::string param = At("messages", i++);
    if (!message.is_object()) return WrongType(param, "an object");
    if (Status s = on_message(message.as_object(), param); !s.ok()) return s;
  }
  return Ok{};
}

}  // namespace turnpike::providers::request
