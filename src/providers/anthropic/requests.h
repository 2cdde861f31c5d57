// Request translation between an OpenAI chat completion request (the pivot, provider.h) and
// an Anthropic Messages request (internal to providers/anthropic/). Both walk a DOM once per
// request. See README.md for the field mapping and what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the client's field in `param`
// (OpenAI style "messages[1].content[0].image_url" for the pivot, Anthropic style
// "messages.1.content.0.source" for an Anthropic body).
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "providers/provider.h"

namespace turnpike::providers::anthropic {

// (a) The pivot (an OpenAI chat request) -> an Anthropic Messages request body.
Result<std::string> BuildMessagesRequest(const boost::json::object& chat,
                                         const UpstreamRequestOptions& options);

// (c) An Anthropic Messages request body -> the pivot.
Result<boost::json::object> ParseMessagesRequest(std::string_view body);

}  // namespace turnpike::providers::anthropic
