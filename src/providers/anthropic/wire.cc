#include "providers/anthropic/wire.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "providers/json_text.h"

namespace turnpike::providers::anthropic {
namespace {

constexpr int kOverloadedStatus = 529;

struct TypeEntry {
  std::string_view type;
  ErrorCode code;
};

constexpr TypeEntry kTypes[] = {
    {"invalid_request_error", ErrorCode::kInvalidRequest},
    {"authentication_error", ErrorCode::kUnauthorized},
    {"permission_error", ErrorCode::kForbidden},
    {"billing_error", ErrorCode::kForbidden},
    {"not_found_error", ErrorCode::kNotFound},
    {"request_too_large", ErrorCode::kPayloadTooLarge},
    {"rate_limit_error", ErrorCode::kRateLimited},
    {"api_error", ErrorCode::kUpstreamBadResponse},
    {"overloaded_error", ErrorCode::kUnavailable},
    {"timeout_error", ErrorCode::kUpstreamTimeout},
};

// Anthropic's extras over the common mapping: 402 (billing) and 529 (overloaded).
ErrorCode CodeForStatus(int status) {
  if (status == 402) return ErrorCode::kForbidden;
  if (status == kOverloadedStatus) return ErrorCode::kUnavailable;
  return ErrorCodeForStatus(status);
}

}  // namespace

FinishReason ParseStopReason(std::string_view reason) {
  if (reason == "max_tokens" || reason == "model_context_window_exceeded")
    return FinishReason::kLength;
  if (reason == "stop_sequence") return FinishReason::kStopSequence;
  if (reason == "tool_use") return FinishReason::kToolCalls;
  if (reason == "refusal") return FinishReason::kContentFilter;
  return FinishReason::kStop;
}

std::string_view StopReasonName(FinishReason finish) {
  switch (finish) {
    case FinishReason::kLength:
      return "max_tokens";
    case FinishReason::kStopSequence:
      return "stop_sequence";
    case FinishReason::kToolCalls:
      return "tool_use";
    case FinishReason::kContentFilter:
      return "refusal";
    default:
      return "end_turn";
  }
}

ErrorCode CodeForType(std::string_view type, int status) {
  for (const TypeEntry& entry : kTypes) {
    if (entry.type == type) return entry.code;
  }
  return status > 0 ? CodeForStatus(status) : ErrorCode::kUpstreamBadResponse;
}

std::string_view TypeForCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kMethodNotAllowed:
    case ErrorCode::kRequestTimeout:
    case ErrorCode::kHeadersTooLarge:
    case ErrorCode::kUnsupportedMediaType:
    case ErrorCode::kConflict:
      return "invalid_request_error";
    case ErrorCode::kUnauthorized:
      return "authentication_error";
    case ErrorCode::kForbidden:
      return "permission_error";
    case ErrorCode::kNotFound:
      return "not_found_error";
    case ErrorCode::kPayloadTooLarge:
      return "request_too_large";
    case ErrorCode::kRateLimited:
    case ErrorCode::kQuotaExceeded:  // a spent budget: Anthropic has no quota type; 429 either way
      return "rate_limit_error";
    case ErrorCode::kUnavailable:
      return "overloaded_error";
    case ErrorCode::kUpstreamTimeout:
      return "timeout_error";
    case ErrorCode::kInternal:
    case ErrorCode::kUpstreamBadResponse:
    case ErrorCode::kUpstreamUnavailable:
      return "api_error";
  }
  return "api_error";
}

int StatusForCode(ErrorCode code) {
  return code == ErrorCode::kUnavailable ? kOverloadedStatus : HttpStatus(code);
}

std::string ErrorObject(const Error& error) {
  std::string out = R"({"type":)";
  AppendJsonQuoted(out, TypeForCode(error.code));
  out.append(R"(,"message":")");
  if (!error.param.empty()) {
    AppendJsonEscaped(out, error.param);
    out.append(": ");
  }
  AppendJsonEscaped(out, error.message);
  out.append("\"}");
  return out;
}

Error ParseErrorBody(int status, std::string_view body) {
  const ErrorCode by_status = CodeForStatus(status);
  Error error{by_status, "The upstream provider answered HTTP " + std::to_string(status) + ".", ""};
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object()) return error;
  const boost::json::value* inner = doc.as_object().if_contains("error");
  if (inner == nullptr || !inner->is_object()) return error;
  const boost::json::object& object = inner->as_object();
  if (const auto* type = object.if_contains("type"); type && type->is_string()) {
    error.code = CodeForType(type->as_string(), status);
  }
  if (const auto* message = object.if_contains("message"); message && message->is_string()) {
    error.message = std::string(message->as_string());
  }
  return error;
}

ErrorReply RenderErrorReply(const Error& error) {
  std::string body = R"({"type":"error","error":)";
  body.append(ErrorObject(error));
  body.push_back('}');
  return ErrorReply{StatusForCode(error.code), std::move(body)};
}

}  // namespace turnpike::providers::anthropic
