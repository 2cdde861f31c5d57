// Errors on the request path are values, never exceptions (Envoy's rule, LevelDB's Status).
//
// One enum names every way a request can fail. Each code maps to exactly one HTTP status and
// one OpenAI error `type`, so a front door can render any error in its own API's envelope
// without knowing where it came from. Exceptions are only for abandoning start-up or config
// loading as a whole.
#pragma once

#include <string>
#include <string_view>

namespace turnpike {

enum class ErrorCode {
  kInvalidRequest,        // 400: malformed JSON, missing or mistyped fields
  kUnauthorized,          // 401: missing or unknown credentials
  kForbidden,             // 403: credentials valid but not allowed
  kNotFound,              // 404: unknown route or model
  kMethodNotAllowed,      // 405
  kRequestTimeout,        // 408: client too slow sending the request
  kPayloadTooLarge,       // 413: body over the configured limit
  kHeadersTooLarge,       // 431: header block over the configured limit
  kUnsupportedMediaType,  // 415: body is not JSON
  kConflict,              // 409: the resource exists already (admin API)
  kRateLimited,           // 429: a rate limit refused admission
  kQuotaExceeded,         // 429: a budget is spent (OpenAI's "insufficient_quota")
  kInternal,              // 500: a bug; never the client's fault
  kUpstreamBadResponse,   // 502: the provider answered with something unusable
  kUpstreamUnavailable,   // 502: could not connect, or every deployment failed
  kUnavailable,           // 503: draining, or nothing to route to
  kUpstreamTimeout,       // 504: connect, first byte or idle-between-chunks timeout
};

// HTTP status for a code.
int HttpStatus(ErrorCode code);

// The reverse, for an error status a provider answered: 400, 401, 403, 404, 413, 429, 503 and
// 504 map to their code; any other 4xx is kInvalidRequest, anything else kUpstreamBadResponse.
ErrorCode ErrorCodeForStatus(int status);

// OpenAI's `error.type` for a code (e.g. "invalid_request_error").
std::string_view OpenAiErrorType(ErrorCode code);

// A short stable machine-readable name (e.g. "upstream_timeout"), used as OpenAI's
// `error.code`, in logs and in metric labels.
std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;  // for people; safe to show to the client
  std::string param;    // the offending request field, or empty
};

}  // namespace turnpike
