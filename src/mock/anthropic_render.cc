#include "mock/anthropic_render.h"

#include <charconv>

#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

constexpr unsigned kOverloaded = 529;
constexpr size_t kMaxDigits = 24;

void AppendUint(std::string& out, uint64_t value) {
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

// `"input_tokens":N` without the cache's parts, then the cache counts when there are any.
void AppendInputUsage(std::string& out, const Usage& usage) {
  out.append(R"("input_tokens":)");
  AppendUint(out, usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens);
  if (usage.cached_tokens == 0 && usage.cache_write_tokens == 0) return;
  out.append(R"(,"cache_creation_input_tokens":)");
  AppendUint(out, usage.cache_write_tokens);
  out.append(R"(,"cache_read_input_tokens":)");
  AppendUint(out, usage.cached_tokens);
}

std::string_view ErrorType(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
      return "invalid_request_error";
    case ErrorCode::kNotFound:
      return "not_found_error";
    case ErrorCode::kRateLimited:
      return "rate_limit_error";
    case ErrorCode::kUnavailable:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

}  // namespace

unsigned AnthropicStatus(ErrorCode code) {
  return code == ErrorCode::kUnavailable ? kOverloaded : static_cast<unsigned>(HttpStatus(code));
}

std::string RenderAnthropicError(const Error& error) {
  std::string out = R"({"type":"error","error":{"type":)";
  AppendJsonQuoted(out, ErrorType(error.code));
  out.append(R"(,"message":")");
  if (!error.param.empty()) {
    AppendJsonEscaped(out, error.param);
    out.append(": ");
  }
  AppendJsonEscaped(out, error.message);
  out.append("\"}}");
  return out;
}

std::string_view StopReasonFor(std::string_view finish_reason) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls") return "tool_use";
  return "end_turn";
}

std::string RenderMessage(const ReplyIdentity& identity, int tokens, std::string_view tool,
                          std::string_view finish_reason, const Usage& usage) {
  std::string out = R"({"id":)";
  AppendJsonQuoted(out, identity.id);
  out.append(R"(,"type":"message","role":"assistant","model":)");
  AppendJsonQuoted(out, identity.model);
  out.append(R"(,"content":[)");
  if (usage.reasoning_tokens > 0) {
    out.append(R"({"type":"thinking","thinking":")");
    for (uint64_t i = 0; i < usage.reasoning_tokens; ++i) {
      AppendReasoningText(out, static_cast<int>(i));
    }
    out.append(R"(","signature":)");
    AppendJsonQuoted(out, kMockThinkingSignature);
    out.append("},");
  }
  if (tool.empty()) {
    out.append(R"({"type":"text","text":")");
    for (int i = 0; i < tokens; ++i) AppendTokenJson(out, identity, i);
    out.append("\"}");
  } else {
    out.append(R"({"type":"tool_use","id":)");
    AppendJsonQuoted(out, identity.call_id);
    out.append(R"(,"name":)");
    AppendJsonQuoted(out, tool);
    out.append(R"(,"input":{"location":"Paris"}})");
  }
  out.append(R"(],"stop_reason":)");
  AppendJsonQuoted(out, StopReasonFor(finish_reason));
  out.append(R"(,"stop_sequence":null,"usage":{)");
  AppendInputUsage(out, usage);
  out.append(R"(,"output_tokens":)");
  AppendUint(out, usage.completion_tokens);
  out.append("}}");
  return out;
}

MessageStreamRenderer::MessageStreamRenderer(const ReplyIdentity& identity, const Usage& usage)
    : identity_(identity), usage_(usage) {}

void MessageStreamRenderer::StartEvent(std::string_view type) {
  buffer_.append("event: ");
  buffer_.append(type);
  buffer_.append("\ndata: {\"type\":\"");
  buffer_.append(type);
  buffer_.push_back('"');
}

std::string_view MessageStreamRenderer::Opening(std::string_view tool) {
  buffer_.clear();
  StartEvent("message_start");
  buffer_.append(R"(,"message":{"id":)");
  AppendJsonQuoted(buffer_, identity_.id);
  buffer_.append(R"(,"type":"message","role":"assistant","model":)");
  AppendJsonQuoted(buffer_, identity_.model);
  buffer_.append(R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{)");
  AppendInputUsage(buffer_, usage_);
  buffer_.append(R"(,"output_tokens":1}}})"
                 "\n\n");
  if (usage_.reasoning_tokens > 0) {
    StartEvent("content_block_start");
    buffer_.append(R"(,"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})"
                   "\n\n");
    for (uint64_t i = 0; i < usage_.reasoning_tokens; ++i) {
      StartEvent("content_block_delta");
      buffer_.append(R"(,"index":0,"delta":{"type":"thinking_delta","thinking":")");
      AppendReasoningText(buffer_, static_cast<int>(i));
      buffer_.append("\"}}\n\n");
    }
    StartEvent("content_block_delta");
    buffer_.append(R"(,"index":0,"delta":{"type":"signature_delta","signature":)");
    AppendJsonQuoted(buffer_, kMockThinkingSignature);
    buffer_.append("}}\n\n");
    StartEvent("content_block_stop");
    buffer_.append(R"(,"index":0})"
                   "\n\n");
    index_ = 1;
  }
  StartEvent("content_block_start");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  if (tool.empty()) {
    buffer_.append(R"(,"content_block":{"type":"text","text":""}})");
  } else {
    buffer_.append(R"(,"content_block":{"type":"tool_use","id":)");
    AppendJsonQuoted(buffer_, identity_.call_id);
    buffer_.append(R"(,"name":)");
    AppendJsonQuoted(buffer_, tool);
    buffer_.append(R"(,"input":{}}})");
  }
  buffer_.append("\n\n");
  StartEvent("ping");
  buffer_.append("}\n\n");
  return buffer_;
}

std::string_view MessageStreamRenderer::Token(int index) {
  buffer_.clear();
  StartEvent("content_block_delta");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  buffer_.append(R"(,"delta":{"type":"text_delta","text":")");
  AppendTokenJson(buffer_, identity_, index);
  buffer_.append("\"}}\n\n");
  return buffer_;
}

std::string_view MessageStreamRenderer::ToolFragment(int index) {
  buffer_.clear();
  StartEvent("content_block_delta");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  buffer_.append(R"(,"delta":{"type":"input_json_delta","partial_json":")");
  buffer_.append(kToolArgumentFragments[static_cast<size_t>(index)]);
  buffer_.append("\"}}\n\n");
  return buffer_;
}

std::string_view MessageStreamRenderer::Closing(std::string_view finish_reason,
                                                const Usage& usage) {
  buffer_.clear();
  StartEvent("content_block_stop");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  buffer_.append("}\n\n");
  StartEvent("message_delta");
  buffer_.append(R"(,"delta":{"stop_reason":)");
  AppendJsonQuoted(buffer_, StopReasonFor(finish_reason));
  buffer_.append(R"(,"stop_sequence":null},"usage":{"output_tokens":)");
  AppendUint(buffer_, usage.completion_tokens);
  buffer_.append("}}\n\n");
  StartEvent("message_stop");
  buffer_.append("}\n\n");
  return buffer_;
}

}  // namespace turnpike::mock
