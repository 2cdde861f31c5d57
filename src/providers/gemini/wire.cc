#include "providers/gemini/wire.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "providers/json_text.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

struct StatusEntry {
  std::string_view name;
  ErrorCode code;
};

// google.rpc.Code names as the Gemini API uses them, with the gateway's code for each.
constexpr StatusEntry kStatuses[] = {
    {"INVALID_ARGUMENT", ErrorCode::kInvalidRequest},
    {"FAILED_PRECONDITION", ErrorCode::kInvalidRequest},  // e.g. free tier not in the region
    {"OUT_OF_RANGE", ErrorCode::kInvalidRequest},
    {"UNAUTHENTICATED", ErrorCode::kUnauthorized},
    {"PERMISSION_DENIED", ErrorCode::kForbidden},
    {"NOT_FOUND", ErrorCode::kNotFound},
    {"ALREADY_EXISTS", ErrorCode::kConflict},
    {"RESOURCE_EXHAUSTED", ErrorCode::kRateLimited},
    {"INTERNAL", ErrorCode::kUpstreamBadResponse},
    {"UNKNOWN", ErrorCode::kUpstreamBadResponse},
    {"DATA_LOSS", ErrorCode::kUpstreamBadResponse},
    {"UNIMPLEMENTED", ErrorCode::kUpstreamBadResponse},
    {"UNAVAILABLE", ErrorCode::kUnavailable},
    {"DEADLINE_EXCEEDED", ErrorCode::kUpstreamTimeout},
};

constexpr std::string_view kApiKeyInvalid = "API_KEY_INVALID";

bool HasReason(const json::value* details, std::string_view reason) {
  if (details == nullptr || !details->is_array()) return false;
  for (const json::value& detail : details->as_array()) {
    if (!detail.is_object()) continue;
    const json::value* value = detail.as_object().if_contains("reason");
    if (value != nullptr && value->is_string() && value->as_string() == reason) return true;
  }
  return false;
}

}  // namespace

FinishReason ParseFinishReason(std::string_view reason) {
  if (reason.empty()) return FinishReason::kNone;
  if (reason == "MAX_TOKENS") return FinishReason::kLength;
  if (reason == "SAFETY" || reason == "RECITATION" || reason == "BLOCKLIST" ||
      reason == "PROHIBITED_CONTENT" || reason == "SPII" || reason == "IMAGE_SAFETY" ||
      reason == "IMAGE_PROHIBITED_CONTENT" || reason == "IMAGE_RECITATION") {
    return FinishReason::kContentFilter;
  }
  return FinishReason::kStop;
}

ErrorCode CodeForStatusName(std::string_view status_name, int http_status) {
  for (const StatusEntry& entry : kStatuses) {
    if (entry.name == status_name) return entry.code;
  }
  return http_status > 0 ? ErrorCodeForStatus(http_status) : ErrorCode::kUpstreamBadResponse;
}

std::string_view StatusNameForCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
    case ErrorCode::kMethodNotAllowed:
    case ErrorCode::kRequestTimeout:
    case ErrorCode::kPayloadTooLarge:
    case ErrorCode::kHeadersTooLarge:
    case ErrorCode::kUnsupportedMediaType:
      return "INVALID_ARGUMENT";
    case ErrorCode::kConflict:
      return "ALREADY_EXISTS";
    case ErrorCode::kUnauthorized:
      return "UNAUTHENTICATED";
    case ErrorCode::kForbidden:
      return "PERMISSION_DENIED";
    case ErrorCode::kNotFound:
      return "NOT_FOUND";
    case ErrorCode::kRateLimited:
    case ErrorCode::kQuotaExceeded:
      return "RESOURCE_EXHAUSTED";
    case ErrorCode::kUnavailable:
    case ErrorCode::kUpstreamUnavailable:
      return "UNAVAILABLE";
    case ErrorCode::kUpstreamTimeout:
      return "DEADLINE_EXCEEDED";
    case ErrorCode::kInternal:
    case ErrorCode::kUpstreamBadResponse:
      return "INTERNAL";
  }
  return "INTERNAL";
}

Error ParseErrorBody(int http_status, std::string_view body) {
  const bool ok_status = http_status / 100 == 2;
  Error error{ok_status ? ErrorCode::kUpstreamBadResponse : ErrorCodeForStatus(http_status),
              "The upstream provider answered HTTP " + std::to_string(http_status) + ".", ""};
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec || !doc.is_object()) return error;
  const json::value* inner = doc.as_object().if_contains("error");
  if (inner == nullptr || !inner->is_object()) return error;
  const json::object& object = inner->as_object();
  // In a 2xx body the HTTP status says nothing: the error's own `code` stands for it.
  int status_for_code = http_status;
  if (ok_status) {
    const json::value* code = object.if_contains("code");
    status_for_code = code && code->is_int64() ? static_cast<int>(code->as_int64()) : 0;
    if (status_for_code > 0) error.code = ErrorCodeForStatus(status_for_code);
  }
  if (const json::value* status = object.if_contains("status"); status && status->is_string()) {
    error.code = CodeForStatusName(status->as_string(), status_for_code);
  }
  if (error.code == ErrorCode::kInvalidRequest &&
      HasReason(object.if_contains("details"), kApiKeyInvalid)) {
    error.code = ErrorCode::kUnauthorized;
  }
  if (const json::value* message = object.if_contains("message"); message && message->is_string()) {
    error.message = std::string(message->as_string());
  }
  return error;
}

ErrorReply RenderErrorReply(const Error& error) {
  const int status = HttpStatus(error.code);
  std::string body = R"({"error":{"code":)";
  AppendInt(body, status);
  body.append(R"(,"message":")");
  if (!error.param.empty()) {
    AppendJsonEscaped(body, error.param);
    body.append(": ");
  }
  AppendJsonEscaped(body, error.message);
  body.append(R"(","status":)");
  AppendJsonQuoted(body, StatusNameForCode(error.code));
  body.append("}}");
  return ErrorReply{status, std::move(body)};
}

}  // namespace turnpike::providers::gemini
