#include "mock/openai_render.h"

#include <charconv>

#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

constexpr std::string_view kFingerprint = "fp_mock";
constexpr std::string_view kTokenStem = "tok";
constexpr std::string_view kReasoningStem = "think";
// Fits any int64 in decimal.
constexpr size_t kMaxDigits = 24;
// The `created` of the mock models (a fixed date: replies must be reproducible).
constexpr int64_t kModelsCreated = 1'700'000'000;
constexpr std::array<std::string_view, 2> kModels = {"mock-gpt-4o", "mock-gpt-4o-mini"};
constexpr std::string_view kDone = "data: [DONE]\n\n";

void AppendInt(std::string& out, int64_t value) {
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

void AppendUsage(std::string& out, const Usage& usage) {
  out.append(R"("usage":{"prompt_tokens":)");
  AppendInt(out, static_cast<int64_t>(usage.prompt_tokens));
  out.append(R"(,"completion_tokens":)");
  AppendInt(out, static_cast<int64_t>(usage.completion_tokens));
  out.append(R"(,"total_tokens":)");
  AppendInt(out, static_cast<int64_t>(usage.prompt_tokens + usage.completion_tokens));
  if (usage.cached_tokens > 0) {
    out.append(R"(,"prompt_tokens_details":{"cached_tokens":)");
    AppendInt(out, static_cast<int64_t>(usage.cached_tokens));
    out.push_back('}');
  }
  if (usage.reasoning_tokens > 0) {
    out.append(R"(,"completion_tokens_details":{"reasoning_tokens":)");
    AppendInt(out, static_cast<int64_t>(usage.reasoning_tokens));
    out.push_back('}');
  }
  out.push_back('}');
}

// `"id":..,"object":..,"created":..,"model":..,"system_fingerprint":..,` shared by both shapes.
void AppendIdentity(std::string& out, const ReplyIdentity& identity, std::string_view object) {
  out.append(R"("id":)");
  AppendJsonQuoted(out, identity.id);
  out.append(R"(,"object":)");
  AppendJsonQuoted(out, object);
  out.append(R"(,"created":)");
  AppendInt(out, identity.created);
  out.append(R"(,"model":)");
  AppendJsonQuoted(out, identity.model);
  out.append(R"(,"system_fingerprint":)");
  AppendJsonQuoted(out, kFingerprint);
  out.push_back(',');
}

void AppendToolCallHead(std::string& out, const ReplyIdentity& identity, std::string_view tool) {
  out.append(R"("id":)");
  AppendJsonQuoted(out, identity.call_id);
  out.append(R"(,"type":"function","function":{"name":)");
  AppendJsonQuoted(out, tool);
}

}  // namespace

void AppendTokenText(std::string& out, const ReplyIdentity& identity, int index) {
  const auto at = static_cast<size_t>(index);
  if (at < identity.description.size()) {
    out.append(identity.description[at]);
    return;
  }
  out.append(kTokenStem);
  AppendInt(out, index);
  out.push_back(' ');
}

void AppendTokenJson(std::string& out, const ReplyIdentity& identity, int index) {
  const auto at = static_cast<size_t>(index);
  if (at < identity.description.size()) {
    AppendJsonEscaped(out, identity.description[at]);
    return;
  }
  AppendTokenText(out, identity, index);
}

void AppendReasoningText(std::string& out, int index) {
  out.append(kReasoningStem);
  AppendInt(out, index);
  out.push_back(' ');
}

std::string RenderErrorBody(const Error& error) {
  std::string out = R"({"error":{"message":)";
  AppendJsonQuoted(out, error.message);
  out.append(R"(,"type":)");
  AppendJsonQuoted(out, OpenAiErrorType(error.code));
  out.append(R"(,"param":)");
  if (error.param.empty()) {
    out.append("null");
  } else {
    AppendJsonQuoted(out, error.param);
  }
  out.append(R"(,"code":)");
  AppendJsonQuoted(out, ErrorCodeName(error.code));
  out.append("}}");
  return out;
}

std::string RenderCompletion(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage) {
  std::string out = "{";
  AppendIdentity(out, identity, "chat.completion");
  out.append(R"("choices":[{"index":0,"message":{"role":"assistant",)");
  if (usage.reasoning_tokens > 0) {
    out.append(R"("reasoning_content":")");
    for (uint64_t i = 0; i < usage.reasoning_tokens; ++i) {
      AppendReasoningText(out, static_cast<int>(i));
    }
    out.append(R"(",)");
  }
  out.append(R"("content":)");
  if (tool.empty()) {
    out.push_back('"');
    for (int i = 0; i < tokens; ++i) AppendTokenJson(out, identity, i);
    out.push_back('"');
  } else {
    out.append(R"(null,"tool_calls":[{)");
    AppendToolCallHead(out, identity, tool);
    out.append(R"(,"arguments":")");
    for (std::string_view fragment : kToolArgumentFragments) out.append(fragment);
    out.append(R"("}}])");
  }
  out.append(R"(,"refusal":null},"logprobs":null,"finish_reason":)");
  AppendJsonQuoted(out, finish_reason);
  out.append("}],");
  AppendUsage(out, usage);
  out.push_back('}');
  return out;
}

std::string RenderModelList() {
  std::string out = R"({"object":"list","data":[)";
  for (size_t i = 0; i < kModels.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(R"({"id":)");
    AppendJsonQuoted(out, kModels[i]);
    out.append(R"(,"object":"model","created":)");
    AppendInt(out, kModelsCreated);
    out.append(R"(,"owned_by":"turnpike-mock"})");
  }
  out.append("]}");
  return out;
}

ChunkRenderer::ChunkRenderer(const ReplyIdentity& identity, bool include_usage,
                             int reasoning_tokens)
    : identity_(identity), include_usage_(include_usage), reasoning_tokens_(reasoning_tokens) {
  prefix_ = "data: {";
  AppendIdentity(prefix_, identity_, "chat.completion.chunk");
}

void ChunkRenderer::StartChoice() {
  buffer_.append(prefix_);
  buffer_.append(R"("choices":[{"index":0,"delta":)");
}

void ChunkRenderer::EndChoice(std::string_view finish_reason) {
  buffer_.append(R"(,"logprobs":null,"finish_reason":)");
  if (finish_reason.empty()) {
    buffer_.append("null");
  } else {
    AppendJsonQuoted(buffer_, finish_reason);
  }
  buffer_.append("}]");
  if (include_usage_) buffer_.append(R"(,"usage":null)");
  buffer_.append("}\n\n");
}

std::string_view ChunkRenderer::Opening(std::string_view tool) {
  buffer_.clear();
  StartChoice();
  if (tool.empty()) {
    buffer_.append(R"({"role":"assistant","content":""})");
  } else {
    buffer_.append(R"({"role":"assistant","content":null,"tool_calls":[{"index":0,)");
    AppendToolCallHead(buffer_, identity_, tool);
    buffer_.append(R"(,"arguments":""}}]})");
  }
  EndChoice({});
  for (int i = 0; i < reasoning_tokens_; ++i) {
    StartChoice();
    buffer_.append(R"({"reasoning_content":")");
    AppendReasoningText(buffer_, i);
    buffer_.append(R"("})");
    EndChoice({});
  }
  return buffer_;
}

std::string_view ChunkRenderer::Token(int index) {
  buffer_.clear();
  StartChoice();
  buffer_.append(R"({"content":")");
  AppendTokenJson(buffer_, identity_, index);
  buffer_.append(R"("})");
  EndChoice({});
  return buffer_;
}

std::string_view ChunkRenderer::ToolFragment(int index) {
  buffer_.clear();
  StartChoice();
  buffer_.append(R"({"tool_calls":[{"index":0,"function":{"arguments":")");
  buffer_.append(kToolArgumentFragments[static_cast<size_t>(index)]);
  buffer_.append(R"("}}]})");
  EndChoice({});
  return buffer_;
}

std::string_view ChunkRenderer::Closing(std::string_view finish_reason, const Usage& usage) {
  buffer_.clear();
  StartChoice();
  buffer_.append("{}");
  EndChoice(finish_reason);
  if (include_usage_) {
    buffer_.append(prefix_);
    buffer_.append(R"("choices":[],)");
    AppendUsage(buffer_, usage);
    buffer_.append("}\n\n");
  }
  buffer_.append(kDone);
  return buffer_;
}

}  // namespace turnpike::mock
