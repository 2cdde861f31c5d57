#include "providers/openai_responses/render.h"

#include <algorithm>

#include "providers/json_text.h"

namespace turnpike::providers::openai_responses {

ResponseStatus StatusFor(FinishReason finish) {
  return finish == FinishReason::kLength || finish == FinishReason::kContentFilter
             ? ResponseStatus::kIncomplete
             : ResponseStatus::kCompleted;
}

void AppendTextPart(std::string& out, std::string_view escaped_text) {
  out.append(R"({"type":"output_text","annotations":[],"logprobs":[],"text":)");
  AppendQuotedEscaped(out, escaped_text);
  out.push_back('}');
}

void AppendItem(std::string& out, const OutputItem& item, std::string_view status) {
  out.append(R"({"id":)");
  AppendQuotedEscaped(out, item.id);
  if (item.is_call) {
    out.append(R"(,"type":"function_call","status":")");
    out.append(status);
    out.append(R"(","arguments":)");
    AppendQuotedEscaped(out, item.text);
    out.append(R"(,"call_id":)");
    AppendQuotedEscaped(out, item.call_id);
    out.append(R"(,"name":)");
    AppendQuotedEscaped(out, item.name);
    out.push_back('}');
    return;
  }
  if (item.is_reasoning) {
    out.append(R"(,"type":"reasoning","status":")");
    out.append(status);
    out.append(R"(","summary":[)");
    if (status != "in_progress") AppendSummaryPart(out, item.text);
    out.push_back(']');
    if (!item.encrypted.empty()) {
      out.append(R"(,"encrypted_content":)");
      AppendQuotedEscaped(out, item.encrypted);
    }
    out.push_back('}');
    return;
  }
  out.append(R"(,"type":"message","status":")");
  out.append(status);
  out.append(R"(","role":"assistant","content":[)");
  // An item that has just been added has no part yet; a finished one has its one text part.
  if (status != "in_progress") AppendTextPart(out, item.text);
  out.append("]}");
}

void AppendSummaryPart(std::string& out, std::string_view escaped_text) {
  out.append(R"({"type":"summary_text","text":)");
  AppendQuotedEscaped(out, escaped_text);
  out.push_back('}');
}

std::string_view ErrorCodeFor(const Error& error) {
  if (error.code == ErrorCode::kRateLimited) return "rate_limit_exceeded";
  if (error.code == ErrorCode::kInvalidRequest) return "invalid_prompt";
  return "server_error";
}

std::string_view StatusName(ResponseStatus status) {
  switch (status) {
    case ResponseStatus::kInProgress:
      return "in_progress";
    case ResponseStatus::kIncomplete:
      return "incomplete";
    case ResponseStatus::kFailed:
      return "failed";
    case ResponseStatus::kQueued:
      return "queued";
    case ResponseStatus::kCancelled:
      return "cancelled";
    case ResponseStatus::kCompleted:
      break;
  }
  return "completed";
}
namespace {

void AppendUsage(std::string& out, const TokenUsage& usage) {
  const int64_t input = std::max<int64_t>(usage.prompt_tokens, 0);
  const int64_t output = std::max<int64_t>(usage.completion_tokens, 0);
  out.append(R"({"input_tokens":)");
  AppendInt(out, input);
  out.append(R"(,"input_tokens_details":{"cached_tokens":)");
  AppendInt(out, std::max<int64_t>(usage.cached_tokens, 0));
  out.append(R"(},"output_tokens":)");
  AppendInt(out, output);
  out.append(R"(,"output_tokens_details":{"reasoning_tokens":)");
  AppendInt(out, std::max<int64_t>(usage.reasoning_tokens, 0));
  out.append(R"(},"total_tokens":)");
  AppendInt(out, input + output);
  out.push_back('}');
}

}  // namespace

void AppendResponse(std::string& out, const ResponseHead& head, ResponseStatus status,
                    FinishReason finish, const std::vector<OutputItem>& items,
                    const TokenUsage* usage, const Error* error) {
  out.append(R"({"id":)");
  AppendQuotedEscaped(out, head.id);
  out.append(R"(,"object":"response","created_at":)");
  AppendInt(out, head.created_at);
  out.append(R"(,"status":")");
  out.append(StatusName(status));
  out.append(head.background ? R"(","background":true,"error":)"
                             : R"(","background":false,"error":)");
  if (status == ResponseStatus::kFailed && error != nullptr) {
    out.append(R"({"code":)");
    AppendJsonQuoted(out, ErrorCodeFor(*error));
    out.append(R"(,"message":)");
    AppendJsonQuoted(out, error->message);
    out.push_back('}');
  } else {
    out.append("null");
  }
  out.append(R"(,"incomplete_details":)");
  if (status == ResponseStatus::kIncomplete) {
    out.append(finish == FinishReason::kContentFilter ? R"({"reason":"content_filter"})"
                                                      : R"({"reason":"max_output_tokens"})");
  } else {
    out.append("null");
  }
  out.append(R"(,"model":)");
  AppendQuotedEscaped(out, head.model);
  out.append(R"(,"output":[)");
  const std::string_view item_status =
      status == ResponseStatus::kCompleted                                         ? "completed"
      : status == ResponseStatus::kInProgress || status == ResponseStatus::kQueued ? "in_progress"
                                                                                   : "incomplete";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    const bool whole = items[i].is_call || items[i].is_reasoning;  // never cut: completed
    AppendItem(out, items[i], whole ? "completed" : item_status);
  }
  out.append("],");
  out.append(head.echo);
  out.append(R"(,"usage":)");
  if (usage != nullptr) {
    AppendUsage(out, *usage);
  } else {
    out.append("null");
  }
  out.push_back('}');
}

}  // namespace turnpike::providers::openai_responses
