#include "mock/cohere_render.h"

#include <charconv>

#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

constexpr size_t kMaxDigits = 24;
constexpr std::string_view kErrorId = "00000000-0000-4000-8000-000000000000";

void AppendUint(std::string& out, uint64_t value) {
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

// "usage":{"billed_units":{..},"tokens":{..}[,"cached_tokens":N]}
void AppendUsage(std::string& out, const Usage& usage) {
  out.append(R"("usage":{"billed_units":{"input_tokens":)");
  AppendUint(out, usage.prompt_tokens);
  out.append(R"(,"output_tokens":)");
  AppendUint(out, usage.completion_tokens);
  out.append(R"(},"tokens":{"input_tokens":)");
  AppendUint(out, usage.prompt_tokens + kPromptTemplateTokens);
  out.append(R"(,"output_tokens":)");
  AppendUint(out, usage.completion_tokens);
  out.push_back('}');
  if (usage.cached_tokens > 0) {
    out.append(R"(,"cached_tokens":)");
    AppendUint(out, usage.cached_tokens);
  }
  out.push_back('}');
}

void AppendPlan(std::string& out, std::string_view tool) {
  out.append("I will call ");
  AppendJsonEscaped(out, tool);
  out.push_back('.');
}

}  // namespace

unsigned CohereStatus(ErrorCode code) { return static_cast<unsigned>(HttpStatus(code)); }

std::string RenderCohereError(const Error& error) {
  std::string out = R"({"id":)";
  AppendJsonQuoted(out, kErrorId);
  out.append(R"(,"message":")");
  if (!error.param.empty()) {
    AppendJsonEscaped(out, error.param);
    out.append(": ");
  }
  AppendJsonEscaped(out, error.message);
  out.append("\"}");
  return out;
}

std::string_view CohereFinishReason(std::string_view finish_reason) {
  if (finish_reason == "length") return "MAX_TOKENS";
  if (finish_reason == "tool_calls") return "TOOL_CALL";
  return "COMPLETE";
}

std::string RenderCohereChat(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage) {
  std::string out = R"({"id":)";
  AppendJsonQuoted(out, identity.id);
  out.append(R"(,"finish_reason":)");
  AppendJsonQuoted(out, CohereFinishReason(finish_reason));
  out.append(R"(,"message":{"role":"assistant",)");
  if (tool.empty()) {
    out.append(R"("content":[)");
    if (usage.reasoning_tokens > 0) {
      out.append(R"({"type":"thinking","thinking":")");
      for (uint64_t i = 0; i < usage.reasoning_tokens; ++i) {
        AppendReasoningText(out, static_cast<int>(i));
      }
      out.append(R"("},)");
    }
    out.append(R"({"type":"text","text":")");
    for (int i = 0; i < tokens; ++i) AppendTokenJson(out, identity, i);
    out.append("\"}]");
  } else {
    out.append(R"("tool_plan":")");
    AppendPlan(out, tool);
    out.append(R"(","tool_calls":[{"id":)");
    AppendJsonQuoted(out, identity.call_id);
    out.append(R"(,"type":"function","function":{"name":)");
    AppendJsonQuoted(out, tool);
    out.append(R"(,"arguments":")");
    for (std::string_view fragment : kToolArgumentFragments) out.append(fragment);
    out.append("\"}}]");
  }
  out.append("},");
  AppendUsage(out, usage);
  out.push_back('}');
  return out;
}

void CohereStreamRenderer::StartEvent(std::string_view type) {
  buffer_.append("event: ");
  buffer_.append(type);
  buffer_.append("\ndata: {\"type\":\"");
  buffer_.append(type);
  buffer_.push_back('"');
}

std::string_view CohereStreamRenderer::Opening(std::string_view tool) {
  tool_ = !tool.empty();
  buffer_.clear();
  buffer_.append("event: message-start\ndata: {\"id\":");
  AppendJsonQuoted(buffer_, identity_.id);
  buffer_.append(R"(,"type":"message-start","delta":{"message":{"role":"assistant",)"
                 R"("content":[],"tool_plan":"","tool_calls":[],"citations":[]}}})"
                 "\n\n");
  if (!tool_) {
    if (reasoning_tokens_ > 0) {
      StartEvent("content-start");
      buffer_.append(
          R"(,"index":0,"delta":{"message":{"content":{"type":"thinking","thinking":""}}}})"
          "\n\n");
      for (int i = 0; i < reasoning_tokens_; ++i) {
        StartEvent("content-delta");
        buffer_.append(R"(,"index":0,"delta":{"message":{"content":{"thinking":")");
        AppendReasoningText(buffer_, i);
        buffer_.append("\"}}}}\n\n");
      }
      StartEvent("content-end");
      buffer_.append(R"(,"index":0})"
                     "\n\n");
      index_ = 1;
    }
    StartEvent("content-start");
    buffer_.append(R"(,"index":)");
    AppendUint(buffer_, static_cast<uint64_t>(index_));
    buffer_.append(R"(,"delta":{"message":{"content":{"type":"text","text":""}}}})"
                   "\n\n");
    return buffer_;
  }
  StartEvent("tool-plan-delta");
  buffer_.append(R"(,"delta":{"message":{"tool_plan":")");
  AppendPlan(buffer_, tool);
  buffer_.append("\"}}}\n\n");
  StartEvent("tool-call-start");
  buffer_.append(R"(,"index":0,"delta":{"message":{"tool_calls":{"id":)");
  AppendJsonQuoted(buffer_, identity_.call_id);
  buffer_.append(R"(,"type":"function","function":{"name":)");
  AppendJsonQuoted(buffer_, tool);
  buffer_.append(R"(,"arguments":""}}}}})"
                 "\n\n");
  return buffer_;
}

std::string_view CohereStreamRenderer::Token(int index) {
  buffer_.clear();
  StartEvent("content-delta");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  buffer_.append(R"(,"delta":{"message":{"content":{"text":")");
  AppendTokenJson(buffer_, identity_, index);
  buffer_.append("\"}}}}\n\n");
  return buffer_;
}

std::string_view CohereStreamRenderer::ToolFragment(int index) {
  buffer_.clear();
  StartEvent("tool-call-delta");
  buffer_.append(R"(,"index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":")");
  buffer_.append(kToolArgumentFragments[static_cast<size_t>(index)]);
  buffer_.append("\"}}}}}\n\n");
  return buffer_;
}

std::string_view CohereStreamRenderer::Closing(std::string_view finish_reason, const Usage& usage) {
  buffer_.clear();
  StartEvent(tool_ ? "tool-call-end" : "content-end");
  buffer_.append(R"(,"index":)");
  AppendUint(buffer_, static_cast<uint64_t>(index_));
  buffer_.append("}\n\n");
  StartEvent("message-end");
  buffer_.append(R"(,"delta":{"finish_reason":)");
  AppendJsonQuoted(buffer_, CohereFinishReason(finish_reason));
  buffer_.push_back(',');
  AppendUsage(buffer_, usage);
  buffer_.append("}}\n\n");
  return buffer_;
}

}  // namespace turnpike::mock
