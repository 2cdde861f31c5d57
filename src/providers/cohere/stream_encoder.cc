#include "providers/cohere/stream_encoder.h"

#include <algorithm>

#include "common/json_escape.h"
#include "providers/json_text.h"

namespace turnpike::providers::cohere {
namespace {

void AppendUsage(std::string& out, const TokenUsage& usage) {
  const int64_t input = std::max<int64_t>(usage.prompt_tokens, 0);
  const int64_t output = std::max<int64_t>(usage.completion_tokens, 0);
  for (std::string_view key :
       {R"("usage":{"billed_units":{"input_tokens":)", R"(},"tokens":{"input_tokens":)"}) {
    out.append(key);
    AppendInt(out, input);
    out.append(R"(,"output_tokens":)");
    AppendInt(out, output);
  }
  if (usage.cached_tokens >= 0) {
    out.append(R"(},"cached_tokens":)");
    AppendInt(out, usage.cached_tokens);
    out.push_back('}');
    return;
  }
  out.append("}}");
}

}  // namespace

std::string_view FinishReasonName(FinishReason finish) {
  switch (finish) {
    case FinishReason::kLength:
      return "MAX_TOKENS";
    case FinishReason::kStopSequence:
      return "STOP_SEQUENCE";
    case FinishReason::kToolCalls:
      return "TOOL_CALL";
    default:
      return "COMPLETE";
  }
}

void CohereStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  if (event.kind == EventKind::kStart) {
    if (event.usage.present()) usage_ = event.usage;
    Start(event.id);
    return;
  }
  if (!started_) Start("");
  std::string& o = out();
  switch (event.kind) {
    case EventKind::kTextDelta:
      Content(Block::kText, "text", event.text);
      break;
    case EventKind::kReasoningDelta:
      Content(Block::kThinking, "thinking", event.text);
      break;
    case EventKind::kToolCallStart:
      CloseBlock();
      block_ = Block::kTool;
      Open("tool-call-start");
      AppendInt(o, tools_++);
      o.append(R"(,"delta":{"message":{"tool_calls":{"id":)");
      AppendQuotedEscaped(o, event.id);
      o.append(R"(,"type":"function","function":{"name":)");
      AppendQuotedEscaped(o, event.name);
      o.append(R"(,"arguments":""}}}}})"
               "\n\n");
      break;
    case EventKind::kToolArgsDelta:
      if (block_ != Block::kTool || event.tool_index != tools_ - 1) {
        End("ERROR",
            "The upstream interleaved tool call arguments, which a Cohere stream "
            "cannot express.");
        return;
      }
      Open("tool-call-delta");
      AppendInt(o, tools_ - 1);
      o.append(R"(,"delta":{"message":{"tool_calls":{"function":{"arguments":)");
      AppendQuotedEscaped(o, event.text);
      o.append("}}}}}\n\n");
      break;
    case EventKind::kFinish:
      finish_ = event.finish;
      CloseBlock();
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd:
      CloseBlock();
      End(FinishReasonName(finish_), "");
      break;
    case EventKind::kError:
      CloseBlock();
      End("ERROR", event.error->message);
      break;
    default:
      break;  // kinds this encoder does not map yet render nothing
  }
}

// A content-delta of a text or thinking block (`field` names it), opening the block first
// when another kind is open.
void CohereStreamEncoder::Content(Block block, std::string_view field, std::string_view text) {
  std::string& o = out();
  if (block_ != block) {
    CloseBlock();
    block_ = block;
    Open("content-start");
    AppendInt(o, contents_++);
    o.append(R"(,"delta":{"message":{"content":{"type":")");
    o.append(field);
    o.append(R"(",")");
    o.append(field);
    o.append(R"(":""}}}})"
             "\n\n");
  }
  Open("content-delta");
  AppendInt(o, contents_ - 1);
  o.append(R"(,"delta":{"message":{"content":{")");
  o.append(field);
  o.append(R"(":)");
  AppendQuotedEscaped(o, text);
  o.append("}}}}\n\n");
}

void CohereStreamEncoder::Start(std::string_view id) {
  started_ = true;
  std::string& o = out();
  o.append("event: message-start\ndata: {\"id\":");
  AppendQuotedEscaped(o, id);
  o.append(R"(,"type":"message-start","delta":{"message":{"role":"assistant","content":[],)"
           R"("tool_plan":"","tool_calls":[],"citations":[]}}})"
           "\n\n");
}

// `event: <type>\ndata: {"type":"<type>","index":` (the caller writes the index and the rest).
void CohereStreamEncoder::Open(std::string_view type) {
  std::string& o = out();
  o.append("event: ");
  o.append(type);
  o.append("\ndata: {\"type\":\"");
  o.append(type);
  o.append("\",\"index\":");
}

void CohereStreamEncoder::CloseBlock() {
  if (block_ == Block::kNone) return;
  const bool content = block_ != Block::kTool;
  block_ = Block::kNone;
  Open(content ? "content-end" : "tool-call-end");
  AppendInt(out(), content ? contents_ - 1 : tools_ - 1);
  out().append("}\n\n");
}

void CohereStreamEncoder::End(std::string_view reason, std::string_view message) {
  done_ = true;
  std::string& o = out();
  o.append("event: message-end\ndata: ");
  o.append(R"({"type":"message-end","delta":{"finish_reason":")");
  o.append(reason);
  o.append("\",");
  if (!message.empty()) {
    o.append(R"("error":)");
    AppendJsonQuoted(o, message);
    o.push_back(',');
  }
  AppendUsage(o, usage_);
  o.append("}}\n\n");
}

}  // namespace turnpike::providers::cohere
