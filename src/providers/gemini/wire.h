// Gemini's wire vocabulary (internal to providers/gemini/): finish reasons, prompt block
// reasons, and the error shape of Google APIs
//   {"error":{"code":429,"message":"...","status":"RESOURCE_EXHAUSTED","details":[...]}}
// (https://ai.google.dev/gemini-api/docs/troubleshooting,
// https://cloud.google.com/apis/design/errors). Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::providers::gemini {

// Candidate.finishReason -> neutral. STOP is kStop (the caller turns it into kToolCalls when
// the answer called functions); MAX_TOKENS kLength; the safety, recitation, blocklist,
// prohibited-content, SPII and image-safety reasons kContentFilter; anything else
// (MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE, unknown) kStop. Empty (still generating): kNone.
FinishReason ParseFinishReason(std::string_view reason);

// The neutral code for a Google RPC status name ("RESOURCE_EXHAUSTED"); the HTTP status (or,
// when 0, kUpstreamBadResponse) decides for unknown names.
ErrorCode CodeForStatusName(std::string_view status_name, int http_status);

// The Google RPC status name and HTTP status a Gemini client would get for a neutral code.
std::string_view StatusNameForCode(ErrorCode code);

// Parses an error answer (any body, even not JSON) into a neutral error. `http_status` is the
// answer's status (a 2xx one for an error object found in a 2xx body). An INVALID_ARGUMENT
// whose details give reason API_KEY_INVALID is kUnauthorized: the deployment's key is wrong.
Error ParseErrorBody(int http_status, std::string_view body);

// {"error":{"code":..,"message":..,"status":..}}, Gemini's own envelope.
ErrorReply RenderErrorReply(const Error& error);

}  // namespace turnpike::providers::gemini
