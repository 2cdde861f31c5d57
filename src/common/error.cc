#include "common/error.h"

namespace turnpike {

int HttpStatus(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
      return 400;
    case ErrorCode::kUnauthorized:
      return 401;
    case ErrorCode::kForbidden:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kMethodNotAllowed:
      return 405;
    case ErrorCode::kRequestTimeout:
      return 408;
    case ErrorCode::kPayloadTooLarge:
      return 413;
    case ErrorCode::kHeadersTooLarge:
      return 431;
    case ErrorCode::kUnsupportedMediaType:
      return 415;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kRateLimited:
    case ErrorCode::kQuotaExceeded:
      return 429;
    case ErrorCode::kInternal:
      return 500;
    case ErrorCode::kUpstreamBadResponse:
    case ErrorCode::kUpstreamUnavailable:
      return 502;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kUpstreamTimeout:
      return 504;
  }
  return 500;
}

std::string_view OpenAiErrorType(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kNotFound:
    case ErrorCode::kMethodNotAllowed:
    case ErrorCode::kRequestTimeout:
    case ErrorCode::kPayloadTooLarge:
    case ErrorCode::kHeadersTooLarge:
    case ErrorCode::kUnsupportedMediaType:
    case ErrorCode::kConflict:
      return "invalid_request_error";
    case ErrorCode::kUnauthorized:
      return "authentication_error";
    case ErrorCode::kForbidden:
      return "permission_error";
    case ErrorCode::kRateLimited:
      return "rate_limit_error";
    case ErrorCode::kQuotaExceeded:
      return "insufficient_quota";
    case ErrorCode::kInternal:
    case ErrorCode::kUpstreamBadResponse:
    case ErrorCode::kUpstreamUnavailable:
    case ErrorCode::kUnavailable:
    case ErrorCode::kUpstreamTimeout:
      return "server_error";
  }
  return "server_error";
}

ErrorCode ErrorCodeForStatus(int status) {
  switch (status) {
    case 400:
      return ErrorCode::kInvalidRequest;
    case 401:
      return ErrorCode::kUnauthorized;
    case 403:
      return ErrorCode::kForbidden;
    case 404:
      return ErrorCode::kNotFound;
    case 413:
      return ErrorCode::kPayloadTooLarge;
    case 429:
      return ErrorCode::kRateLimited;
    case 503:
      return ErrorCode::kUnavailable;
    case 504:
      return ErrorCode::kUpstreamTimeout;
    default:
      return status >= 400 && status < 500 ? ErrorCode::kInvalidRequest
                                           : ErrorCode::kUpstreamBadResponse;
  }
}

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
      return "invalid_request";
    case ErrorCode::kUnauthorized:
      return "unauthorized";
    case ErrorCode::kForbidden:
      return "forbidden";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kMethodNotAllowed:
      return "method_not_allowed";
    case ErrorCode::kRequestTimeout:
      return "request_timeout";
    case ErrorCode::kPayloadTooLarge:
      return "payload_too_large";
    case ErrorCode::kHeadersTooLarge:
      return "headers_too_large";
    case ErrorCode::kUnsupportedMediaType:
      return "unsupported_media_type";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kQuotaExceeded:
      return "insufficient_quota";
    case ErrorCode::kInternal:
      return "internal_error";
    case ErrorCode::kUpstreamBadResponse:
      return "upstream_bad_response";
    case ErrorCode::kUpstreamUnavailable:
      return "upstream_unavailable";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kUpstreamTimeout:
      return "upstream_timeout";
  }
  return "internal_error";
}

}  // namespace turnpike
