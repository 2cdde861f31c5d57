// Reading the Responses API's answers in the upstream role (internal to
// providers/openai_responses/): the whole `response` object, and the vocabulary the stream
// decoder shares with it (statuses, incomplete reasons, error codes).
//
// Stateless functions; thread-safe. Errors: kUpstreamBadResponse for an answer that is not a
// Responses object; a failed response (status "failed" or an `error` object) is returned as
// that error (CodeForResponseError).
#pragma once

#include <string_view>

#include "common/result.h"
#include "providers/events.h"

namespace turnpike::providers::openai_responses {

// A finished response's finish reason: "incomplete" with reason "max_output_tokens" is kLength,
// "content_filter" kContentFilter; "completed" is kToolCalls when the answer called a function,
// else kStop.
FinishReason FinishFor(std::string_view status, std::string_view incomplete_reason,
                       bool called_tools);

// The code of a Responses error object's `code` (response.failed, the `error` event):
// rate_limit_exceeded -> kRateLimited, invalid_prompt -> kInvalidRequest (the inverse of
// render.h's ErrorCodeFor), anything else kUpstreamBadResponse.
ErrorCode CodeForResponseError(std::string_view code);

// A whole 2xx answer body: output message text (output_text and refusal parts, concatenated),
// function_call items, usage (input_tokens_details.cached_tokens as cached). Reasoning items
// are skipped.
Result<Response> ParseResponseBody(std::string_view body);

}  // namespace turnpike::providers::openai_responses
