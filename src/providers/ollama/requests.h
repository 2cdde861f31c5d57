// Request translation from an OpenAI chat completion request (the pivot, provider.h) to an
// Ollama /api/chat request body (internal to providers/ollama/). Walks a DOM once per request.
// See README.md for the field mapping and what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`, OpenAI
// style ("messages[1].content[0].image_url.url").
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "common/result.h"
#include "providers/provider.h"

namespace turnpike::providers::ollama {

Result<std::string> BuildChatRequest(const boost::json::object& chat,
                                     const UpstreamRequestOptions& options);

}  // namespace turnpike::providers::ollama
