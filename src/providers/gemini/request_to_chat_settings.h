// The settings of a Gemini GenerateContentRequest read into the pivot, for the client role
// (internal to providers/gemini/; request_to_chat.cc reads the contents and calls this):
// `tools` (functionDeclarations), `toolConfig` (tool_choice) and `generationConfig` (sampling,
// maxOutputTokens, stopSequences, candidateCount, thinkingConfig -> reasoning_effort,
// responseMimeType and the response schemas -> response_format). See README.md ("Client role")
// for the mapping and what is refused.
//
// Stateless; thread-safe. Errors: kInvalidRequest naming the Gemini field in `param`, as
// client_requests.h says.
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::gemini::client_request {

// Adds to `pivot` (the chat request being built) the fields for `request`'s tools, toolConfig
// and generationConfig, in this order: tools, tool_choice, sampling, max_completion_tokens,
// stop, reasoning_effort, response_format; absent settings add nothing. Written straight into
// the pivot, not through an object of their own: this runs on every Gemini client request.
Status AddSettings(const boost::json::object& request, boost::json::object& pivot);

// The two refusals both halves of the translation give: a field the pivot cannot carry, and a
// value of the wrong type ("Invalid value at 'param': expected <expected>.").
Error Unsupported(const std::string& param);
Error WrongType(const std::string& param, std::string_view expected);

}  // namespace turnpike::providers::gemini::client_request
