// The pivot (an OpenAI chat completions request, provider.h) -> a Responses API request body
// (POST /v1/responses), for deployments that speak the Responses API (`provider: openai` with
// `api: responses`). Internal to providers/openai_responses/; README.md in this folder has the
// field mapping and what is refused. Walks a DOM once per request.
//
// Stateless; thread-safe. Errors: kInvalidRequest with `param` naming the client's (pivot) field,
// OpenAI style ("messages[2].content[0].type", "stop").
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "common/result.h"
#include "providers/provider.h"

namespace turnpike::providers::openai_responses {

// Always `"store": false` (the gateway is stateless); `stream` only when the pivot asks for it.
Result<std::string> BuildResponsesRequest(const boost::json::object& chat,
                                          const UpstreamRequestOptions& options);

}  // namespace turnpike::providers::openai_responses
