#include "providers/ollama/wire.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "providers/json_text.h"

namespace turnpike::providers::ollama {

FinishReason ParseDoneReason(std::string_view reason, bool called_tools) {
  if (reason == "length") return FinishReason::kLength;
  return called_tools ? FinishReason::kToolCalls : FinishReason::kStop;
}

ErrorCode CodeForStatus(int status) { return ErrorCodeForStatus(status); }

Error ParseErrorBody(int status, std::string_view body) {
  Error error{CodeForStatus(status),
              "The upstream provider answered HTTP " + std::to_string(status) + ".", ""};
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object()) return error;
  const boost::json::value* message = doc.as_object().if_contains("error");
  if (message != nullptr && message->is_string() && !message->as_string().empty()) {
    error.message = std::string(message->as_string());
  }
  return error;
}

void AppendAnswerId(std::string& out, std::string_view created_at) {
  out.append("ollama-");
  out.append(created_at);
}

void AppendCallId(std::string& out, int32_t index) {
  out.append("call_");
  AppendInt(out, index);
}

}  // namespace turnpike::providers::ollama
