#include "mock/gemini_render.h"

#include <charconv>

#include "common/json_escape.h"

namespace turnpike::mock {
namespace {

constexpr std::string_view kModelsPrefix = "/v1beta/models/";
constexpr std::string_view kGenerate = "generateContent";
constexpr std::string_view kStreamGenerate = "streamGenerateContent";
constexpr std::string_view kBatchEmbed = "batchEmbedContents";
constexpr std::string_view kCountTokens = "countTokens";
constexpr std::string_view kSseQuery = "alt=sse";
constexpr std::string_view kEventEnd = "\r\n\r\n";  // Gemini frames its SSE with CRLF
constexpr size_t kMaxDigits = 24;

// Thought signatures: FNV-1a over a salt and the function's name, twice, as 16 bytes.
constexpr std::string_view kBase64Digits =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint32_t kSixBits = 0x3f;  // one base64 digit
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr std::string_view kSignatureSalt = "turnpike-mock-thought-signature:";
constexpr size_t kHashBytes = 8;
constexpr size_t kBitsPerByte = 8;
constexpr std::string_view kSignatureDocs =
    "https://ai.google.dev/gemini-api/docs/thought-signatures";

void AppendUint(std::string& out, uint64_t value) {
  char digits[kMaxDigits];
  auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  out.append(digits, end);
}

std::string_view StatusName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidRequest:
      return "INVALID_ARGUMENT";
    case ErrorCode::kNotFound:
    case ErrorCode::kMethodNotAllowed:
      return "NOT_FOUND";
    case ErrorCode::kRateLimited:
      return "RESOURCE_EXHAUSTED";
    case ErrorCode::kUnavailable:
      return "UNAVAILABLE";
    default:
      return "INTERNAL";
  }
}

// promptTokenCount includes the cached part; totalTokenCount is prompt + output.
void AppendUsageMetadata(std::string& out, const Usage& usage, bool with_output) {
  out.append(R"("usageMetadata":{"promptTokenCount":)");
  AppendUint(out, usage.prompt_tokens);
  if (with_output) {
    // candidatesTokenCount excludes thoughts, which Gemini counts apart.
    out.append(R"(,"candidatesTokenCount":)");
    AppendUint(out, usage.completion_tokens - usage.reasoning_tokens);
    if (usage.reasoning_tokens > 0) {
      out.append(R"(,"thoughtsTokenCount":)");
      AppendUint(out, usage.reasoning_tokens);
    }
  }
  out.append(R"(,"totalTokenCount":)");
  AppendUint(out, usage.prompt_tokens + (with_output ? usage.completion_tokens : 0));
  if (usage.cached_tokens > 0) {
    out.append(R"(,"cachedContentTokenCount":)");
    AppendUint(out, usage.cached_tokens);
  }
  out.push_back('}');
}

// A thought summary part: `{"text":"think0 ... ","thought":true},`.
void AppendThoughtPart(std::string& out, uint64_t tokens) {
  out.append(R"({"text":")");
  for (uint64_t i = 0; i < tokens; ++i) AppendReasoningText(out, static_cast<int>(i));
  out.append(R"(","thought":true})");
}

uint64_t Fnv1a(uint64_t hash, std::string_view bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

// Standard base64 with padding.
void AppendBase64(std::string& out, const unsigned char* bytes, size_t size) {
  for (size_t i = 0; i < size; i += 3) {
    uint32_t group = static_cast<uint32_t>(bytes[i]) << 16;
    if (i + 1 < size) group |= static_cast<uint32_t>(bytes[i + 1]) << 8;
    if (i + 2 < size) group |= bytes[i + 2];
    out.push_back(kBase64Digits[(group >> 18) & kSixBits]);
    out.push_back(kBase64Digits[(group >> 12) & kSixBits]);
    out.push_back(i + 1 < size ? kBase64Digits[(group >> 6) & kSixBits] : '=');
    out.push_back(i + 2 < size ? kBase64Digits[group & kSixBits] : '=');
  }
}

void AppendFunctionCall(std::string& out, std::string_view tool) {
  out.append(R"({"functionCall":{"name":)");
  AppendJsonQuoted(out, tool);
  out.append(R"(,"args":{"location":"Paris"}},"thoughtSignature":")");
  AppendThoughtSignature(out, tool);
  out.append("\"}");
}

// "... function call `default_api:<name>` , position <n>. ...", in Gemini's words.
Error SignatureError(std::string_view problem, std::string_view name, size_t position) {
  return Error{ErrorCode::kInvalidRequest,
               std::string(problem) + " Additional data, function call `default_api:" +
                   std::string(name) + "` , position " + std::to_string(position) +
                   ". Please refer to " + std::string(kSignatureDocs) + " for more details.",
               ""};
}

std::string_view RoleOf(const simdjson::dom::element& content) {
  std::string_view role;
  // Gemini reads a content without a role as the user's.
  if (content["role"].get_string().get(role) != simdjson::SUCCESS) return "user";
  return role;
}

// `],"role":"model"},"finishReason":..,"index":0}],"usageMetadata":..,"modelVersion":..,
// "responseId":..}`: everything after a candidate's parts.
void AppendTail(std::string& out, const ReplyIdentity& identity, std::string_view finish_reason,
                const Usage& usage, bool with_output) {
  out.append(R"(],"role":"model"})");
  if (!finish_reason.empty()) {
    out.append(R"(,"finishReason":)");
    AppendJsonQuoted(out, GeminiFinishReasonFor(finish_reason));
  }
  out.append(R"(,"index":0}],)");
  AppendUsageMetadata(out, usage, with_output);
  out.append(R"(,"modelVersion":)");
  AppendJsonQuoted(out, identity.model);
  out.append(R"(,"responseId":)");
  AppendJsonQuoted(out, identity.id);
  out.push_back('}');
}

}  // namespace

void AppendThoughtSignature(std::string& out, std::string_view tool) {
  const uint64_t first = Fnv1a(Fnv1a(kFnvOffset, kSignatureSalt), tool);
  const uint64_t second = Fnv1a(first, tool);
  unsigned char bytes[2 * kHashBytes];
  for (size_t i = 0; i < kHashBytes; ++i) {
    bytes[i] = static_cast<unsigned char>(first >> (kBitsPerByte * i));
    bytes[kHashBytes + i] = static_cast<unsigned char>(second >> (kBitsPerByte * i));
  }
  AppendBase64(out, bytes, sizeof(bytes));
}

Status CheckThoughtSignatures(const simdjson::dom::array& contents) {
  // The current turn begins at the last user content that is not only function responses.
  size_t turn = 0;
  size_t index = 0;
  for (const simdjson::dom::element content : contents) {
    const size_t at = index++;
    simdjson::dom::array parts;
    if (RoleOf(content) != "user" || content["parts"].get_array().get(parts)) continue;
    for (const simdjson::dom::element part : parts) {
      if (part["functionResponse"].error() == simdjson::NO_SUCH_FIELD) turn = at;
    }
  }
  index = 0;
  for (const simdjson::dom::element content : contents) {
    const size_t position = ++index;  // Gemini counts contents from 1
    simdjson::dom::array parts;
    if (position - 1 <= turn || RoleOf(content) != "model") continue;
    if (content["parts"].get_array().get(parts)) continue;
    for (const simdjson::dom::element part : parts) {
      simdjson::dom::object call;
      if (part["functionCall"].get_object().get(call)) continue;
      // Only the first call of a step is signed (parallel calls share its signature).
      std::string_view name;
      if (call["name"].get_string().get(name) != simdjson::SUCCESS) name = {};
      std::string_view given;
      if (part["thoughtSignature"].get_string().get(given)) {
        return SignatureError(
            "Function call is missing a thought_signature in functionCall parts. This is "
            "required for tools to work correctly, and missing thought_signature may lead to "
            "degraded model performance.",
            name, position);
      }
      std::string expected;
      AppendThoughtSignature(expected, name);
      if (given != expected) {
        return SignatureError("Function call has a thought_signature that is not valid. (mock)",
                              name, position);
      }
      break;
    }
  }
  return Ok{};
}

bool IsGeminiPath(std::string_view path) { return path.starts_with(kModelsPrefix); }

Result<GeminiRoute> ParseGeminiTarget(std::string_view target) {
  const size_t query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
  const std::string_view name = path.substr(kModelsPrefix.size());
  const size_t colon = name.rfind(':');
  GeminiRoute route;
  const std::string_view method = colon == std::string_view::npos ? "" : name.substr(colon + 1);
  route.model = colon == std::string_view::npos ? name : name.substr(0, colon);
  if (route.model.empty() || (method != kGenerate && method != kStreamGenerate &&
                              method != kBatchEmbed && method != kCountTokens)) {
    return Error{ErrorCode::kNotFound, "Unknown request URL: " + std::string(path) + ".", ""};
  }
  route.stream = method == kStreamGenerate;
  route.embed = method == kBatchEmbed;
  route.count = method == kCountTokens;
  if (route.stream && query.find(kSseQuery) == std::string_view::npos) {
    return Error{ErrorCode::kNotFound,
                 "The mock streams only server-sent events: add ?alt=sse. (mock)", ""};
  }
  return route;
}

unsigned GeminiStatus(ErrorCode code) {
  return code == ErrorCode::kMethodNotAllowed ? 404u : static_cast<unsigned>(HttpStatus(code));
}

std::string RenderGeminiError(const Error& error) {
  std::string out = R"({"error":{"code":)";
  AppendUint(out, GeminiStatus(error.code));
  out.append(R"(,"message":")");
  if (!error.param.empty()) {
    AppendJsonEscaped(out, error.param);
    out.append(": ");
  }
  AppendJsonEscaped(out, error.message);
  out.append(R"(","status":)");
  AppendJsonQuoted(out, StatusName(error.code));
  out.append("}}");
  return out;
}

std::string_view GeminiFinishReasonFor(std::string_view finish_reason) {
  return finish_reason == "length" ? "MAX_TOKENS" : "STOP";
}

std::string RenderGenerateContent(const ReplyIdentity& identity, int tokens, std::string_view tool,
                                  std::string_view finish_reason, const Usage& usage) {
  std::string out = R"({"candidates":[{"content":{"parts":[)";
  if (usage.reasoning_tokens > 0) {
    AppendThoughtPart(out, usage.reasoning_tokens);
    out.push_back(',');
  }
  if (tool.empty()) {
    out.append(R"({"text":")");
    for (int i = 0; i < tokens; ++i) AppendTokenJson(out, identity, i);
    out.append("\"}");
  } else {
    AppendFunctionCall(out, tool);
  }
  AppendTail(out, identity, finish_reason, usage, true);
  return out;
}

GeminiStreamRenderer::GeminiStreamRenderer(const ReplyIdentity& identity, const Usage& usage)
    : identity_(identity), usage_(usage) {}

void GeminiStreamRenderer::StartChunk() {
  buffer_.assign(R"(data: {"candidates":[{"content":{"parts":[)");
}

void GeminiStreamRenderer::EndChunk(std::string_view finish_reason, const Usage& usage,
                                    bool with_output) {
  AppendTail(buffer_, identity_, finish_reason, usage, with_output);
  buffer_.append(kEventEnd);
}

std::string_view GeminiStreamRenderer::Opening(std::string_view tool) {
  tool_ = tool;
  if (usage_.reasoning_tokens == 0) return {};
  StartChunk();
  AppendThoughtPart(buffer_, usage_.reasoning_tokens);
  EndChunk({}, usage_, false);
  return buffer_;
}

std::string_view GeminiStreamRenderer::Token(int index) {
  StartChunk();
  buffer_.append(R"({"text":")");
  AppendTokenJson(buffer_, identity_, index);
  buffer_.append("\"}");
  EndChunk({}, usage_, false);
  return buffer_;
}

std::string_view GeminiStreamRenderer::ToolFragment(int index) {
  if (static_cast<size_t>(index) + 1 < kToolArgumentFragments.size()) return {};
  StartChunk();
  AppendFunctionCall(buffer_, tool_);
  EndChunk({}, usage_, false);
  return buffer_;
}

std::string_view GeminiStreamRenderer::Closing(std::string_view finish_reason, const Usage& usage) {
  StartChunk();
  buffer_.append(R"({"text":""})");
  EndChunk(finish_reason, usage, true);
  return buffer_;
}

}  // namespace turnpike::mock
