#include "providers/cohere/wire.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <string>

namespace turnpike::providers::cohere {
namespace {

constexpr int kPaymentRequired = 402;

}  // namespace

FinishReason ParseFinishReason(std::string_view reason) {
  if (reason == "MAX_TOKENS") return FinishReason::kLength;
  if (reason == "STOP_SEQUENCE") return FinishReason::kStopSequence;
  if (reason == "TOOL_CALL") return FinishReason::kToolCalls;
  return FinishReason::kStop;
}

bool IsFailure(std::string_view reason) { return reason == "ERROR" || reason == "TIMEOUT"; }

Error FailureError(std::string_view reason, std::string_view message) {
  const bool timeout = reason == "TIMEOUT";
  Error error{timeout ? ErrorCode::kUpstreamTimeout : ErrorCode::kUpstreamBadResponse,
              std::string(message), ""};
  if (error.message.empty()) {
    error.message = timeout ? "The upstream provider timed out while generating."
                            : "The upstream provider failed while generating.";
  }
  return error;
}

TokenUsage ToTokenUsage(const UsageCounts& counts) {
  TokenUsage usage;
  usage.prompt_tokens = counts.billed_input >= 0 ? counts.billed_input : counts.input;
  usage.completion_tokens = counts.billed_output >= 0 ? counts.billed_output : counts.output;
  if (counts.cached >= 0) {
    usage.cached_tokens =
        usage.prompt_tokens >= 0 ? std::min(counts.cached, usage.prompt_tokens) : counts.cached;
  }
  return usage;
}

ErrorCode CodeForStatus(int status) {
  if (status == kPaymentRequired) return ErrorCode::kForbidden;
  return ErrorCodeForStatus(status);
}

Error ParseErrorBody(int status, std::string_view body) {
  Error error{CodeForStatus(status),
              "The upstream provider answered HTTP " + std::to_string(status) + ".", ""};
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object()) return error;
  const boost::json::value* message = doc.as_object().if_contains("message");
  if (message != nullptr && message->is_string() && !message->as_string().empty()) {
    error.message = std::string(message->as_string());
  }
  return error;
}

}  // namespace turnpike::providers::cohere
