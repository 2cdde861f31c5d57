#include "providers/openai/stream_codec.h"

#include <algorithm>
#include <optional>

#include "providers/json_text.h"
#include "stream/byte_scan.h"
#include "stream/json_string.h"

namespace turnpike::providers::openai {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

constexpr std::string_view kDone = "[DONE]";

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

ErrorCode CodeForErrorType(std::string_view type) {
  if (type == "invalid_request_error") return ErrorCode::kInvalidRequest;
  if (type == "authentication_error") return ErrorCode::kUnauthorized;
  if (type == "permission_error") return ErrorCode::kForbidden;
  if (type == "rate_limit_error") return ErrorCode::kRateLimited;
  return ErrorCode::kUpstreamBadResponse;
}

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace

std::string_view FinishReasonName(FinishReason finish) {
  switch (finish) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kToolCalls:
      return "tool_calls";
    case FinishReason::kContentFilter:
      return "content_filter";
    default:
      return "stop";
  }
}

FinishReason ParseFinishReason(std::string_view reason) {
  if (reason == "length") return FinishReason::kLength;
  if (reason == "tool_calls" || reason == "function_call") return FinishReason::kToolCalls;
  if (reason == "content_filter") return FinishReason::kContentFilter;
  return FinishReason::kStop;
}

std::string ErrorObject(const Error& error) {
  std::string_view code = ErrorCodeName(error.code);
  if (error.code == ErrorCode::kNotFound && error.param == "model") code = "model_not_found";
  std::string out = R"({"message":)";
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
  AppendJsonQuoted(out, code);
  out.push_back('}');
  return out;
}

simdjson::error_code ReadChunk(stream::PaddedJsonParser& parser, std::string_view payload,
                               bool skip_head, stream::EscapedChunk& c, ChunkError& error) {
  od::document doc;
  od::value root;
  auto read_usage = [&](od::value v) -> error_code {
    c.has_usage = v.type().value_unsafe() == od::json_type::object;
    return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
      if (k == "prompt_tokens") return ReadInt(m, c.usage.prompt_tokens);
      if (k == "completion_tokens") return ReadInt(m, c.usage.completion_tokens);
      if (k == "completion_tokens_details") {
        return ForEachMember(m, [&](od::raw_json_string d, od::value n) -> error_code {
          return d == "reasoning_tokens" ? ReadInt(n, c.usage.reasoning_tokens) : SUCCESS;
        });
      }
      if (k != "prompt_tokens_details") return SUCCESS;
      return ForEachMember(m, [&](od::raw_json_string d, od::value n) -> error_code {
        return d == "cached_tokens" ? ReadInt(n, c.usage.cached_tokens) : SUCCESS;
      });
    });
  };
  auto read_tool = [&](int64_t position, od::value v) -> error_code {
    stream::EscapedToolDelta& tool = c.tools.emplace_back();
    tool.index = position;
    return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
      if (k == "index") return ReadInt(m, tool.index);
      if (k == "id") return ReadEscaped(m, tool.id);
      if (k != "function") return SUCCESS;
      return ForEachMember(m, [&](od::raw_json_string f, od::value t) -> error_code {
        if (f == "name") return ReadEscaped(t, tool.name);
        if (f == "arguments") return ReadEscaped(t, tool.arguments);
        return SUCCESS;
      });
    });
  };
  auto read_choice = [&](int64_t position, od::value v) -> error_code {
    int64_t index = position;
    return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
      if (k == "index") {
        if (auto e = ReadInt(m, index)) return e;
        if (index != 0) c.other_choice = true;
        return SUCCESS;
      }
      if (k == "finish_reason") return ReadEscaped(m, c.finish_reason);
      if (k != "delta") return SUCCESS;
      return ForEachMember(m, [&](od::raw_json_string d, od::value t) -> error_code {
        if (d == "content") return ReadEscaped(t, c.content);
        if (d == "refusal") return ReadEscaped(t, c.refusal);
        if (d == "reasoning_content" || d == "reasoning") return ReadEscaped(t, c.reasoning);
        if (d == "tool_calls") return ForEachElement(t, read_tool);
        return SUCCESS;
      });
    });
  };
  auto read_error = [&](od::value v) -> error_code {
    error.present = true;
    od::json_type type;
    if (auto e = v.type().get(type)) return e;
    if (type == od::json_type::string) return v.get_string().get(error.message);
    return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
      if (k == "type") return ReadEscaped(m, error.type);
      if (k != "message") return SUCCESS;
      return m.is_null().value_unsafe() ? SUCCESS : m.get_string().get(error.message);
    });
  };
  if (auto e = parser.Iterate(payload).get(doc)) return e;
  if (auto e = doc.get_value().get(root)) return e;
  if (root.type().value_unsafe() != od::json_type::object) return simdjson::INCORRECT_TYPE;
  return ForEachMember(root, [&](od::raw_json_string k, od::value v) -> error_code {
    // Once started, a chunk's id and model are not used (kStart has them): skipped unread.
    if (k == "id") return skip_head ? SUCCESS : ReadEscaped(v, c.id);
    if (k == "model") return skip_head ? SUCCESS : ReadEscaped(v, c.model);
    if (k == "choices") return ForEachElement(v, read_choice);
    if (k == "usage") return read_usage(v);
    if (k == "error") return read_error(v);
    return SUCCESS;
  });
}

bool OpenAiStreamDecoder::IsStringBody(std::string_view body) {
  if (stream::IsUnescapedStringBody(body)) return true;
  scratch_.clear();
  return stream::AppendDecodedStringBody(body, scratch_);
}

size_t OpenAiStreamDecoder::DecodeFramed(std::string_view bytes, EventSink& sink) {
  const std::optional<stream::ContentTemplate::StartMatch> match = template_.MatchAtStart(bytes);
  if (!match || !(match->plain || IsStringBody(match->content))) return 0;
  if (!match->content.empty()) {
    StreamEvent out;
    out.kind = EventKind::kTextDelta;
    out.text = match->content;
    sink.OnEvent(out);
  }
  return match->size;
}

Status OpenAiStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data) return Ok{};
  StreamEvent out;
  if (Trim(event.data) == kDone) {
    out.kind = EventKind::kEnd;
    sink.OnEvent(out);
    return Ok{};
  }
  // Most chunks are the last content-only chunk's bytes around other content
  // (stream/content_template.h): only the content is read.
  if (std::optional<std::string_view> body = template_.Match(event.data)) {
    if (IsStringBody(*body)) {
      if (!body->empty()) {
        out.kind = EventKind::kTextDelta;
        out.text = *body;
        sink.OnEvent(out);
      }
      return Ok{};
    }
  }
  template_.Forget();
  stream::EscapedChunk& c = chunk_;
  c.Clear();
  // The others are decided by the one-pass scanner, or (errors, unusual JSON) by simdjson, which
  // has the final say.
  if (stream::ScanEscapedChunk(event.data, c, scratch_, lead_)) {
    if (c.reasoning.empty() && c.refusal.empty() && c.finish_reason.empty() && !c.has_usage &&
        !c.other_choice && c.tools.empty()) {
      // Framed as the SSE event it came in when it is one data line (the parser hands over
      // `data` as it stands then).
      const char* end = event.data.data() + event.data.size();
      const bool one_line =
          c.plain || stream::FindEither(event.data.data(), end, '\r', '\n') == end;
      template_.Remember(event.data, c.content, one_line ? "data: " : "", one_line ? "\n\n" : "");
    }
  } else {
    c.Clear();
    ChunkError error;
    if (ReadChunk(parser_, event.data, started_, c, error) != SUCCESS) {
      return Bad("The upstream sent an OpenAI chunk that is not valid JSON.");
    }
    if (error.present) {
      error_ = Error{CodeForErrorType(error.type), std::string(error.message), ""};
      out.kind = EventKind::kError;
      out.error = &error_;
      sink.OnEvent(out);
      return Ok{};
    }
  }
  if (c.other_choice) return Bad("The upstream sent a second choice, which cannot be carried.");
  if (!started_) {
    started_ = true;
    out.kind = EventKind::kStart;
    out.id = c.id;
    out.model = c.model;
    sink.OnEvent(out);
  }
  if (!c.reasoning.empty()) {
    StreamEvent delta;
    delta.kind = EventKind::kReasoningDelta;
    delta.text = c.reasoning;
    sink.OnEvent(delta);
  }
  for (std::string_view text : {c.content, c.refusal}) {
    if (text.empty()) continue;
    StreamEvent delta;
    delta.kind = EventKind::kTextDelta;
    delta.text = text;
    sink.OnEvent(delta);
  }
  for (const stream::EscapedToolDelta& tool : c.tools) {
    StreamEvent call;
    call.tool_index = static_cast<int32_t>(tool.index);
    if (!tool.id.empty() || !tool.name.empty()) {
      call.kind = EventKind::kToolCallStart;
      call.id = tool.id;
      call.name = tool.name;
      sink.OnEvent(call);
    }
    if (!tool.arguments.empty()) {
      call.kind = EventKind::kToolArgsDelta;
      call.text = tool.arguments;
      sink.OnEvent(call);
    }
  }
  if (!c.finish_reason.empty()) {
    StreamEvent finish;
    finish.kind = EventKind::kFinish;
    finish.finish = ParseFinishReason(c.finish_reason);
    sink.OnEvent(finish);
  }
  if (c.has_usage) {
    usage_.prompt_tokens = c.usage.prompt_tokens;
    usage_.completion_tokens = c.usage.completion_tokens;
    usage_.cached_tokens = c.usage.cached_tokens;
    usage_.reasoning_tokens = c.usage.reasoning_tokens;
    StreamEvent usage;
    usage.kind = EventKind::kUsage;
    usage.usage = usage_;
    sink.OnEvent(usage);
  }
  return Ok{};
}

void OpenAiStreamEncoder::Start(const StreamEvent& event) {
  started_ = true;
  prefix_.assign(R"(data: {"id":)");
  AppendQuotedEscaped(prefix_, event.id);
  prefix_.append(R"(,"object":"chat.completion.chunk","created":)");
  AppendInt(prefix_, options_.created);
  prefix_.append(R"(,"model":)");
  AppendQuotedEscaped(prefix_, event.model);
  prefix_.push_back(',');
  OpenChunk();
  out().append(R"({"role":"assistant","content":""})");
  CloseChunk(FinishReason::kNone);
}

void OpenAiStreamEncoder::OpenChunk() {
  out().append(prefix_);
  out().append(R"("choices":[{"index":0,"delta":)");
}

void OpenAiStreamEncoder::CloseChunk(FinishReason finish) {
  std::string& o = out();
  o.append(R"(,"logprobs":null,"finish_reason":)");
  if (finish == FinishReason::kNone) {
    o.append("null");
  } else {
    AppendJsonQuoted(o, FinishReasonName(finish));
  }
  o.append("}]");
  if (options_.include_usage) o.append(R"(,"usage":null)");
  o.append("}\n\n");
}

void OpenAiStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  std::string& o = out();
  if (event.kind == EventKind::kError) {
    done_ = true;
    o.append(R"(data: {"error":)");
    o.append(ErrorObject(*event.error));
    o.append("}\n\n");
    return;
  }
  if (!started_) {
    StreamEvent start;
    if (event.kind == EventKind::kStart) start = event;
    Start(start);
    if (event.kind == EventKind::kStart) return;
  }
  switch (event.kind) {
    case EventKind::kTextDelta:
      OpenChunk();
      o.append(R"({"content":)");
      AppendQuotedEscaped(o, event.text);
      o.push_back('}');
      CloseChunk(FinishReason::kNone);
      break;
    case EventKind::kReasoningDelta:
      OpenChunk();
      o.append(R"({"reasoning_content":)");
      AppendQuotedEscaped(o, event.text);
      o.push_back('}');
      CloseChunk(FinishReason::kNone);
      break;
    case EventKind::kToolCallStart:
      OpenChunk();
      o.append(R"({"tool_calls":[{"index":)");
      AppendInt(o, event.tool_index);
      o.append(R"(,"id":)");
      AppendQuotedEscaped(o, event.id);
      o.append(R"(,"type":"function","function":{"name":)");
      AppendQuotedEscaped(o, event.name);
      o.append(R"(,"arguments":""}}]})");
      CloseChunk(FinishReason::kNone);
      break;
    case EventKind::kToolArgsDelta:
      OpenChunk();
      o.append(R"({"tool_calls":[{"index":)");
      AppendInt(o, event.tool_index);
      o.append(R"(,"function":{"arguments":)");
      AppendQuotedEscaped(o, event.text);
      o.append("}}]}");
      CloseChunk(FinishReason::kNone);
      break;
    case EventKind::kFinish:
      OpenChunk();
      o.append("{}");
      CloseChunk(event.finish);
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd:
      done_ = true;
      if (options_.include_usage) {
        o.append(prefix_);
        o.append(R"("choices":[],"usage":{"prompt_tokens":)");
        const int64_t prompt = std::max<int64_t>(usage_.prompt_tokens, 0);
        const int64_t completion = std::max<int64_t>(usage_.completion_tokens, 0);
        AppendInt(o, prompt);
        o.append(R"(,"completion_tokens":)");
        AppendInt(o, completion);
        o.append(R"(,"total_tokens":)");
        AppendInt(o, prompt + completion);
        o.append(R"(,"prompt_tokens_details":{"cached_tokens":)");
        AppendInt(o, std::max<int64_t>(usage_.cached_tokens, 0));
        o.push_back('}');
        if (usage_.reasoning_tokens >= 0) {
          o.append(R"(,"completion_tokens_details":{"reasoning_tokens":)");
          AppendInt(o, usage_.reasoning_tokens);
          o.push_back('}');
        }
        o.append("}}\n\n");
      }
      o.append("data: [DONE]\n\n");
      break;
    default:
      break;
  }
}

}  // namespace turnpike::providers::openai
