// Request translation from an OpenAI chat completion request (the pivot, provider.h) to a
// Gemini generateContent request body (internal to providers/gemini/). Walks a DOM once per
// request. See README.md for the field mapping and what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`, OpenAI
// style ("messages[1].content[0].image_url").
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "common/result.h"
#include "providers/provider.h"

namespace turnpike::providers::gemini {

// The pivot -> a GenerateContentRequest body. The model goes in the URL, not the body, and so
// does streaming (streamGenerateContent): neither appears here.
Result<std::string> BuildGenerateContentRequest(const boost::json::object& chat,
                                                const UpstreamRequestOptions& options);

}  // namespace turnpike::providers::gemini
