// Anthropic's wire vocabulary, both ways (internal to providers/anthropic/): stop reasons, and
// the error shape
//   {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":..}
// with the statuses of https://docs.claude.com/en/api/errors (400 invalid_request_error,
// 401 authentication_error, 403 permission_error, 404 not_found_error, 413 request_too_large,
// 429 rate_limit_error, 500 api_error, 529 overloaded_error). Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "providers/events.h"

namespace turnpike::providers::anthropic {

// stop_reason -> neutral (end_turn and pause_turn read as kStop, refusal as kContentFilter,
// model_context_window_exceeded as kLength), and back.
FinishReason ParseStopReason(std::string_view reason);
std::string_view StopReasonName(FinishReason finish);

// The neutral code for an Anthropic error type; the HTTP status decides for unknown types.
ErrorCode CodeForType(std::string_view type, int status);

// Anthropic's error type for a neutral code.
std::string_view TypeForCode(ErrorCode code);

// The status an Anthropic client expects for a neutral code (overload is 529, not 503).
int StatusForCode(ErrorCode code);

// The `error` object's body text: {"type":"...","message":"..."}; `param`, when set, prefixes
// the message the way Anthropic names fields ("messages.0.content: ...").
std::string ErrorObject(const Error& error);

// Parses a non-2xx answer (any body) into a neutral error.
Error ParseErrorBody(int status, std::string_view body);

ErrorReply RenderErrorReply(const Error& error);

}  // namespace turnpike::providers::anthropic
