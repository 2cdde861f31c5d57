// Request translation from an OpenAI chat completion request (the pivot, provider.h) to a
// Cohere v2 Chat request (internal to providers/cohere/). Walks a DOM once per request. See
// README.md for the field mapping and what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`, in the
// pivot's (OpenAI) style: "messages[1].content[0].type", "tool_choice".
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "providers/provider.h"
#include "providers/request_fields.h"

namespace turnpike::providers::cohere {

// The pivot -> a Cohere POST /v2/chat body.
Result<std::string> BuildChatRequest(const boost::json::object& chat,
                                     const UpstreamRequestOptions& options);

// One pivot message -> one Cohere message, made in `sp` (the request's scratch storage,
// providers/scratch_json.h); `param` is its path ("messages[2]").
Result<boost::json::object> MessageFromChat(const boost::json::object& message,
                                            const std::string& param,
                                            const boost::json::storage_ptr& sp);

// Shared by the translation files (providers/request_fields.h, and Cohere's wording).
using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;
Error Unsupported(const std::string& param);  // "not supported by ... (Cohere)"

}  // namespace turnpike::providers::cohere
