// OpenAI's error shape: the LLM door's errors on its OpenAI routes, and the gateway's default
// dialect (the router's fallback for unknown paths, the ops door):
//   {"error":{"message":"...","type":"invalid_request_error","param":"model","code":"..."}}
// and the in-stream form sent once a stream has started: `data: {"error":{...}}\n\n`.
#pragma once

#include <string>

#include "common/error.h"

namespace turnpike::core {

std::string OpenAiErrorBody(const Error& error);
// The same with `code` in place of the error code's name (an API's own: "conversation_busy").
std::string OpenAiErrorBody(const Error& error, std::string_view code);
std::string OpenAiStreamErrorEvent(const Error& error);

}  // namespace turnpike::core
