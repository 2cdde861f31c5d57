// OpenAI's error shape, for every error the LLM front door answers itself:
//   {"error":{"message":"...","type":"invalid_request_error","param":"model","code":"..."}}
// and the in-stream form sent once a stream has started: `data: {"error":{...}}\n\n`.
#pragma once

#include <string>

#include "common/error.h"

namespace turnpike::gateway {

std::string OpenAiErrorBody(const Error& error);
std::string OpenAiStreamErrorEvent(const Error& error);

}  // namespace turnpike::gateway
