#include "providers/gemini/stream_encoder.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "providers/gemini/wire.h"
#include "providers/json_text.h"
#include "providers/reasoning.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

constexpr std::string_view kFrameEnd = "}\r\n\r\n";
// A call's argument buffers, reserved when a stream's first call opens: arguments up to this
// size never allocate again; longer ones grow the buffers once per doubling.
constexpr size_t kArgsReserve = 4096;
constexpr int kHexDigits = 4;
constexpr uint32_t kSurrogateHigh = 0xD800, kSurrogateLow = 0xDC00, kSurrogateEnd = 0xE000;
constexpr uint32_t kSurrogateBase = 0x10000;
constexpr int kSurrogateShift = 10;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The text of an escaped JSON string token (events.h: decoders checked it is well formed);
// false on a malformed escape.
bool Unescape(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\') {
      out.push_back(in[i]);
      continue;
    }
    if (++i >= in.size()) return false;
    switch (in[i]) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'u': {
        auto read = [&](size_t at, uint32_t& cp) {
          if (at + kHexDigits > in.size()) return false;
          cp = 0;
          for (int k = 0; k < kHexDigits; ++k) {
            const int h = Hex(in[at + k]);
            if (h < 0) return false;
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          return true;
        };
        uint32_t cp = 0;
        if (!read(i + 1, cp)) return false;
        i += kHexDigits;
        if (cp >= kSurrogateHigh && cp < kSurrogateLow && i + 2 < in.size() && in[i + 1] == '\\' &&
            in[i + 2] == 'u') {
          uint32_t low = 0;
          if (read(i + 3, low) && low >= kSurrogateLow && low < kSurrogateEnd) {
            cp =
                kSurrogateBase + ((cp - kSurrogateHigh) << kSurrogateShift) + (low - kSurrogateLow);
            i += 2 + kHexDigits;
          }
        }
        AppendUtf8(out, cp);
        break;
      }
      default:
        out.push_back(in[i]);
        break;  // \" \\ \/
    }
  }
  return true;
}

void AppendCount(std::string& out, std::string_view key, int64_t value, bool& first) {
  if (value < 0) return;
  if (!first) out.push_back(',');
  first = false;
  out.push_back('"');
  out.append(key);
  out.append("\":");
  AppendInt(out, value);
}

}  // namespace

std::string_view FinishReasonName(FinishReason finish) {
  switch (finish) {
    case FinishReason::kLength:
      return "MAX_TOKENS";
    case FinishReason::kContentFilter:
      return "SAFETY";
    default:
      return "STOP";
  }
}

void AppendUsageMetadata(std::string& out, const TokenUsage& usage) {
  if (!usage.present()) return;
  out.append(R"(,"usageMetadata":{)");
  bool first = true;
  const int64_t prompt = std::max<int64_t>(usage.prompt_tokens, 0);
  const int64_t output = std::max<int64_t>(usage.completion_tokens, 0);
  // Gemini's candidatesTokenCount excludes thoughts (README.md, Usage).
  const int64_t thoughts = std::clamp<int64_t>(usage.reasoning_tokens, -1, output);
  AppendCount(out, "promptTokenCount", prompt, first);
  AppendCount(out, "candidatesTokenCount", output - std::max<int64_t>(thoughts, 0), first);
  AppendCount(out, "totalTokenCount", prompt + output, first);
  AppendCount(out, "cachedContentTokenCount", usage.cached_tokens, first);
  if (thoughts > 0) AppendCount(out, "thoughtsTokenCount", thoughts, first);
  out.push_back('}');
}

bool IncludeThoughts(std::string_view client_body) {
  if (client_body.find("includeThoughts") == std::string_view::npos) return false;
  ScratchJson scratch;
  boost::system::error_code ec;
  const json::value body = scratch.Parse(client_body, ec);
  if (ec || !body.is_object()) return false;
  const json::value* config = body.as_object().if_contains("generationConfig");
  if (config == nullptr || !config->is_object()) return false;
  const json::value* thinking = config->as_object().if_contains("thinkingConfig");
  if (thinking == nullptr || !thinking->is_object()) return false;
  const json::value* include = thinking->as_object().if_contains("includeThoughts");
  return include != nullptr && *include == true;
}

void GeminiStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  switch (event.kind) {
    case EventKind::kStart:
      id_.assign(event.id);
      model_.assign(event.model);
      if (event.usage.present()) usage_ = event.usage;
      break;
    case EventKind::kTextDelta:
      FlushCall();
      OpenChunk();
      out().append(R"({"text":)");
      AppendQuotedEscaped(out(), event.text);
      out().push_back('}');
      CloseChunk(false);
      break;
    case EventKind::kReasoningDelta:
      if (!include_thoughts_) break;
      FlushCall();
      OpenChunk();
      out().append(R"({"text":)");
      AppendQuotedEscaped(out(), event.text);
      out().append(R"(,"thought":true})");
      CloseChunk(false);
      break;
    case EventKind::kReasoningSignature:
      if (!include_thoughts_) break;
      FlushCall();
      OpenChunk();
      out().append(R"({"text":"","thought":true,"thoughtSignature":")");
      out().append(reasoning::kStreamIssuer);
      out().push_back(':');
      out().append(event.text);
      out().append(R"("})");
      CloseChunk(false);
      break;
    case EventKind::kToolCallStart:
      FlushCall();
      if (call_args_.capacity() < kArgsReserve) {
        call_args_.reserve(kArgsReserve);
        args_json_.reserve(kArgsReserve);
      }
      call_open_ = true;
      call_id_.assign(event.id);
      call_name_.assign(event.name);
      call_args_.clear();
      break;
    case EventKind::kToolArgsDelta:
      if (call_open_) call_args_.append(event.text);
      break;
    case EventKind::kFinish:
      FlushCall();
      finish_ = event.finish;
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd:
      FlushCall();
      if (done_) return;
      OpenChunk();
      out().append(R"({"text":""})");
      CloseChunk(true);
      done_ = true;
      break;
    case EventKind::kError:
      RenderError(*event.error);
      break;
    default:
      break;  // kinds this encoder does not map yet render nothing
  }
}

void GeminiStreamEncoder::OpenChunk() {
  out().append(R"(data: {"candidates":[{"content":{"parts":[)");
}

void GeminiStreamEncoder::CloseChunk(bool last) {
  std::string& o = out();
  o.append(R"(],"role":"model"},)");
  if (last) {
    o.append(R"("finishReason":")");
    o.append(FinishReasonName(finish_));
    o.append("\",");
  }
  o.append(R"("index":0}])");
  if (last) AppendUsageMetadata(o, usage_);
  o.append(R"(,"modelVersion":)");
  AppendQuotedEscaped(o, model_);
  o.append(R"(,"responseId":)");
  AppendQuotedEscaped(o, id_);
  o.append(kFrameEnd);
}

void GeminiStreamEncoder::FlushCall() {
  if (!call_open_) return;
  call_open_ = false;
  if (!Unescape(call_args_, args_json_)) args_json_.clear();
  if (args_json_.find_first_not_of(" \t\r\n") == std::string::npos) args_json_ = "{}";
  // functionCall.args must be an object: checked once per call, in a scratch buffer.
  ScratchJson scratch;
  boost::system::error_code ec;
  const json::value args = scratch.Parse(args_json_, ec);
  if (ec || !args.is_object()) {
    RenderError(Error{ErrorCode::kUpstreamBadResponse,
                      "The upstream's function call arguments are not a JSON object.", ""});
    return;
  }
  // Raw line breaks in valid JSON are whitespace between tokens (inside strings they are
  // escaped); an SSE data line must not contain one.
  std::replace_if(
      args_json_.begin(), args_json_.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  OpenChunk();
  std::string& o = out();
  o.append(R"({"functionCall":{"id":)");
  AppendQuotedEscaped(o, call_id_);
  o.append(R"(,"name":)");
  AppendQuotedEscaped(o, call_name_);
  o.append(R"(,"args":)");
  o.append(args_json_);
  o.append("}}");
  CloseChunk(false);
}

void GeminiStreamEncoder::RenderError(const Error& error) {
  done_ = true;
  const ErrorReply reply = RenderErrorReply(error);
  std::string& o = out();
  o.append("data: ");
  o.append(reply.body);
  o.append("\r\n\r\n");
}

std::string RenderGenerateContent(const Response& response, bool include_thoughts) {
  json::array parts;
  if (include_thoughts && !response.reasoning.empty()) {
    json::object thought{{"text", response.reasoning}, {"thought", true}};
    if (!response.reasoning_signature.empty()) {
      thought["thoughtSignature"] =
          std::string(reasoning::kStreamIssuer) + ":" + response.reasoning_signature;
    }
    parts.push_back(std::move(thought));
  }
  if (!response.text.empty()) parts.push_back(json::object{{"text", response.text}});
  for (const ToolCall& call : response.tool_calls) {
    boost::system::error_code ec;
    json::value args = json::parse(call.arguments.empty() ? "{}" : call.arguments, ec);
    if (ec || !args.is_object()) args = json::object{};
    parts.push_back(json::object{
        {"functionCall", json::object{{"id", call.id}, {"name", call.name}, {"args", args}}}});
  }
  if (parts.empty()) parts.push_back(json::object{{"text", ""}});
  json::object candidate{{"content", json::object{{"parts", std::move(parts)}, {"role", "model"}}},
                         {"finishReason", FinishReasonName(response.finish)},
                         {"index", 0}};
  json::object answer{{"candidates", json::array{std::move(candidate)}}};
  if (response.usage.present()) {
    const int64_t prompt = std::max<int64_t>(response.usage.prompt_tokens, 0);
    const int64_t output = std::max<int64_t>(response.usage.completion_tokens, 0);
    const int64_t thoughts = std::clamp<int64_t>(response.usage.reasoning_tokens, -1, output);
    json::object usage{{"promptTokenCount", prompt},
                       {"candidatesTokenCount", output - std::max<int64_t>(thoughts, 0)},
                       {"totalTokenCount", prompt + output}};
    if (response.usage.cached_tokens >= 0) {
      usage["cachedContentTokenCount"] = response.usage.cached_tokens;
    }
    if (thoughts > 0) usage["thoughtsTokenCount"] = thoughts;
    answer["usageMetadata"] = std::move(usage);
  }
  answer["modelVersion"] = response.model;
  answer["responseId"] = response.id;
  return json::serialize(answer);
}

}  // namespace turnpike::providers::gemini
