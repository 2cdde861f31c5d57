// The identity path of the Responses API (internal to providers/openai_responses/): a client's
// /v1/responses body forwarded to a deployment that speaks the Responses API itself, bytes
// untouched but for two splices, as the chat identity path does (openai/chat_request.h):
//   - the `model` token becomes the deployment's model;
//   - `store` becomes false when the client left it out or null (the API stores by default;
//     this gateway is stateless, and a body saying `store: true` was refused before).
// The body must already have been accepted by ParseResponsesRequest (so it is a valid JSON
// object with a string model); this walk only finds the byte ranges (simdjson On-Demand, one
// pass over the top level).
//
// Stateless; thread-safe (a parser per call: once per request, not per chunk). Errors:
// kInvalidRequest for a duplicated `model` or `store` (the gateway and the provider could
// otherwise read different values), or a `store` that is not false or null.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace turnpike::providers::openai_responses {

Result<std::string> ForwardResponsesBody(std::string_view body, std::string_view upstream_model);

}  // namespace turnpike::providers::openai_responses
