#include "mock/ollama_render.h"

#include <charconv>
#include <ctime>

#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

constexpr size_t kMaxDigits = 24;
// The nanosecond durations of the done line: fixed, the mock does not time itself.
constexpr std::string_view kDurations =
    R"("total_duration":1000000,"load_duration":1000,"prompt_eval_duration":1000,)";
constexpr std::string_view kToolArguments = R"({"location":"Paris"})";
constexpr size_t kTimestampBytes = 32;

void AppendUint(std::string& out, uint64_t value) {
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

// `created` as Ollama's RFC 3339 timestamp (UTC).
void AppendCreatedAt(std::string& out, int64_t created) {
  const std::time_t seconds = static_cast<std::time_t>(created);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[kTimestampBytes];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  out.push_back('"');
  out.append(text, n);
  out.push_back('"');
}

void AppendToolCall(std::string& out, std::string_view tool) {
  out.append(R"(,"tool_calls":[{"function":{"name":)");
  AppendJsonQuoted(out, tool);
  out.append(R"(,"arguments":)");
  out.append(kToolArguments);
  out.append("}}]");
}

std::string_view DoneReason(std::string_view finish_reason) {
  return finish_reason == "length" ? "length" : "stop";
}

void AppendDone(std::string& out, std::string_view finish_reason, const Usage& usage) {
  out.append(R"(,"done":true,"done_reason":)");
  AppendJsonQuoted(out, DoneReason(finish_reason));
  out.push_back(',');
  out.append(kDurations);
  out.append(R"("prompt_eval_count":)");
  AppendUint(out, usage.prompt_tokens);
  out.append(R"(,"eval_count":)");
  AppendUint(out, usage.completion_tokens);
  out.append(R"(,"eval_duration":1000})");
}

void AppendHead(std::string& out, const ReplyIdentity& identity) {
  out.append(R"({"model":)");
  AppendJsonQuoted(out, identity.model);
  out.append(R"(,"created_at":)");
  AppendCreatedAt(out, identity.created);
  out.append(R"(,"message":{"role":"assistant","content":)");
}

}  // namespace

unsigned OllamaStatus(ErrorCode code) { return static_cast<unsigned>(HttpStatus(code)); }

std::string RenderOllamaError(const Error& error) {
  std::string out = R"({"error":")";
  if (!error.param.empty()) {
    AppendJsonEscaped(out, error.param);
    out.append(": ");
  }
  AppendJsonEscaped(out, error.message);
  out.append("\"}");
  return out;
}

Error OllamaModelNotFound(std::string_view model) {
  return Error{ErrorCode::kNotFound,
               "model \"" + std::string(model) + "\" not found, try pulling it first", ""};
}

std::string RenderOllamaChat(const ReplyIdentity& identity, int tokens, std::string_view tool,
                             std::string_view finish_reason, const Usage& usage) {
  std::string out;
  AppendHead(out, identity);
  out.push_back('"');
  if (tool.empty()) {
    for (int i = 0; i < tokens; ++i) AppendTokenJson(out, identity, i);
  }
  out.push_back('"');
  if (usage.reasoning_tokens > 0) {
    out.append(R"(,"thinking":")");
    for (uint64_t i = 0; i < usage.reasoning_tokens; ++i) {
      AppendReasoningText(out, static_cast<int>(i));
    }
    out.push_back('"');
  }
  if (!tool.empty()) AppendToolCall(out, tool);
  out.push_back('}');
  AppendDone(out, finish_reason, usage);
  return out;
}

OllamaStreamRenderer::OllamaStreamRenderer(const ReplyIdentity& identity, int reasoning_tokens)
    : identity_(identity), reasoning_tokens_(reasoning_tokens) {}

void OllamaStreamRenderer::StartLine() {
  buffer_.clear();
  AppendHead(buffer_, identity_);
}

std::string_view OllamaStreamRenderer::Opening(std::string_view tool) {
  tool_.assign(tool);
  buffer_.clear();
  for (int i = 0; i < reasoning_tokens_; ++i) {
    AppendHead(buffer_, identity_);
    buffer_.append(R"("","thinking":")");
    AppendReasoningText(buffer_, i);
    buffer_.append("\"},\"done\":false}\n");
  }
  return buffer_;
}

std::string_view OllamaStreamRenderer::Token(int index) {
  StartLine();
  buffer_.push_back('"');
  AppendTokenJson(buffer_, identity_, index);
  buffer_.append("\"},\"done\":false}\n");
  return buffer_;
}

std::string_view OllamaStreamRenderer::ToolFragment(int index) {
  if (static_cast<size_t>(index) + 1 != kToolArgumentFragments.size()) return {};
  StartLine();
  buffer_.append(R"("")");
  AppendToolCall(buffer_, tool_);
  buffer_.append("},\"done\":false}\n");
  return buffer_;
}

std::string_view OllamaStreamRenderer::Closing(std::string_view finish_reason, const Usage& usage) {
  StartLine();
  buffer_.append(R"(""})");
  AppendDone(buffer_, finish_reason, usage);
  buffer_.push_back('\n');
  return buffer_;
}

}  // namespace turnpike::mock
