#include "doors/search/es_error.h"

#include "common/json_escape.h"

namespace turnpike::search {

std::string_view EsErrorType(const Error& error) {
  if (!error.param.empty()) return error.param;
  switch (error.code) {
    case ErrorCode::kNotFound:
      return "resource_not_found_exception";
    case ErrorCode::kUnauthorized:
    case ErrorCode::kForbidden:
      return "security_exception";
    case ErrorCode::kRateLimited:
    case ErrorCode::kQuotaExceeded:
      return "status_exception";
    case ErrorCode::kUpstreamTimeout:
    case ErrorCode::kRequestTimeout:
      return kTimeout;
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kPayloadTooLarge:
    case ErrorCode::kUnsupportedMediaType:
    case ErrorCode::kMethodNotAllowed:
    case ErrorCode::kHeadersTooLarge:
      return kIllegalArgument;
    case ErrorCode::kConflict:
      return kVersionConflict;
    default:
      return "exception";
  }
}

std::string RenderEsError(const Error& error) {
  const std::string_view type = EsErrorType(error);
  std::string cause;
  cause += R"({"type":)";
  AppendJsonQuoted(cause, type);
  cause += R"(,"reason":)";
  AppendJsonQuoted(cause, error.message);
  cause += '}';
  std::string out;
  out.reserve(48 + 2 * cause.size());
  out += R"({"error":{"root_cause":[)";
  out += cause;
  out += "],";
  out.append(cause, 1, cause.size() - 1);  // the cause's fields again, without its '{'
  out.pop_back();
  out += R"(},"status":)";
  out += std::to_string(HttpStatus(error.code));
  out += '}';
  return out;
}

}  // namespace turnpike::search
