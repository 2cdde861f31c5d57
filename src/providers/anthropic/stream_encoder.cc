#include "providers/anthropic/stream_encoder.h"

#include <algorithm>

#include "providers/anthropic/wire.h"
#include "providers/json_text.h"

namespace turnpike::providers::anthropic {
namespace {
constexpr std::string_view kPingEvent = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

// Anthropic's input_tokens excludes cache reads and cache writes.
int64_t InputTokens(const TokenUsage& usage) {
  if (usage.prompt_tokens < 0) return 0;
  return std::max<int64_t>(0, usage.prompt_tokens - std::max<int64_t>(usage.cached_tokens, 0) -
                                  std::max<int64_t>(usage.cache_creation_tokens, 0));
}

void AppendUsage(std::string& out, const TokenUsage& usage, bool with_output) {
  out.append(R"("usage":{"input_tokens":)");
  AppendInt(out, InputTokens(usage));
  if (usage.cache_creation_tokens >= 0) {
    out.append(R"(,"cache_creation_input_tokens":)");
    AppendInt(out, usage.cache_creation_tokens);
  }
  if (usage.cached_tokens >= 0) {
    out.append(R"(,"cache_read_input_tokens":)");
    AppendInt(out, usage.cached_tokens);
  }
  out.append(R"(,"output_tokens":)");
  AppendInt(out, with_output ? std::max<int64_t>(usage.completion_tokens, 0) : 0);
  out.push_back('}');
}

}  // namespace

void AnthropicStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  if (event.kind == EventKind::kError) {
    RenderError(*event.error);
    return;
  }
  if (event.kind == EventKind::kStart) {
    StartMessage(event);
    return;
  }
  if (!started_) {
    // The pivot's first chunk always starts the message; a decoder that did not is a bug.
    StreamEvent start;
    StartMessage(start);
  }
  switch (event.kind) {
    case EventKind::kTextDelta:
      if (block_ != Block::kText) OpenBlock(Block::kText, event);
      Delta("text_delta", "text", event.text);
      break;
    case EventKind::kToolCallStart:
      OpenBlock(Block::kTool, event);
      break;
    case EventKind::kReasoningDelta:
      if (block_ != Block::kThinking) OpenBlock(Block::kThinking, event);
      Delta("thinking_delta", "thinking", event.text);
      break;
    case EventKind::kReasoningSignature:
      if (block_ != Block::kThinking) OpenBlock(Block::kThinking, event);
      Delta("signature_delta", "signature", event.text);
      break;
    case EventKind::kRedactedReasoning:
      OpenBlock(Block::kRedacted, event);
      CloseBlock();
      break;
    case EventKind::kToolArgsDelta:
      if (block_ != Block::kTool || event.tool_index != tool_) {
        RenderError(Error{ErrorCode::kUpstreamBadResponse,
                          "The upstream interleaved tool call arguments, which an Anthropic "
                          "stream cannot express.",
                          ""});
        return;
      }
      Delta("input_json_delta", "partial_json", event.text);
      break;
    case EventKind::kFinish:
      finish_ = event.finish;
      stop_sequence_.assign(event.stop_sequence);
      CloseBlock();
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd:
      End();
      break;
    default:
      break;
  }
}

void AnthropicStreamEncoder::StartMessage(const StreamEvent& event) {
  if (started_) return;
  started_ = true;
  if (event.usage.present()) usage_ = event.usage;
  std::string& o = out();
  o.append(
      "event: message_start\ndata: "
      R"({"type":"message_start","message":{"id":)");
  AppendQuotedEscaped(o, event.id);
  o.append(R"(,"type":"message","role":"assistant","model":)");
  AppendQuotedEscaped(o, event.model);
  o.append(R"(,"content":[],"stop_reason":null,"stop_sequence":null,)");
  AppendUsage(o, usage_, false);
  o.append("}}\n\n");
  // As Anthropic's own streams do; clients ignore it, and the event types the SDKs know all
  // appear.
  o.append(kPingEvent);
}

void AnthropicStreamEncoder::OpenBlock(Block block, const StreamEvent& event) {
  CloseBlock();
  block_ = block;
  std::string& o = out();
  o.append(
      "event: content_block_start\ndata: "
      R"({"type":"content_block_start","index":)");
  AppendInt(o, blocks_++);
  if (block == Block::kText) {
    o.append(R"(,"content_block":{"type":"text","text":""}})");
  } else if (block == Block::kThinking) {
    // The signature comes as a signature_delta when the upstream signs its reasoning; from one
    // that does not, it stays empty (README.md: such a block is not sent back to Anthropic).
    o.append(R"(,"content_block":{"type":"thinking","thinking":"","signature":""}})");
  } else if (block == Block::kRedacted) {
    o.append(R"(,"content_block":{"type":"redacted_thinking","data":)");
    AppendQuotedEscaped(o, event.text);
    o.append("}}");
  } else {
    tool_ = event.tool_index;
    o.append(R"(,"content_block":{"type":"tool_use","id":)");
    AppendQuotedEscaped(o, event.id);
    o.append(R"(,"name":)");
    AppendQuotedEscaped(o, event.name);
    o.append(R"(,"input":{}}})");
  }
  o.append("\n\n");
}

void AnthropicStreamEncoder::CloseBlock() {
  if (block_ == Block::kNone) return;
  block_ = Block::kNone;
  std::string& o = out();
  o.append(
      "event: content_block_stop\ndata: "
      R"({"type":"content_block_stop","index":)");
  AppendInt(o, blocks_ - 1);
  o.append("}\n\n");
}

void AnthropicStreamEncoder::Delta(std::string_view type, std::string_view field,
                                   std::string_view escaped) {
  std::string& o = out();
  o.append(
      "event: content_block_delta\ndata: "
      R"({"type":"content_block_delta","index":)");
  AppendInt(o, blocks_ - 1);
  o.append(R"(,"delta":{"type":")");
  o.append(type);
  o.append(R"(",")");
  o.append(field);
  o.append(R"(":)");
  AppendQuotedEscaped(o, escaped);
  o.append("}}\n\n");
}

void AnthropicStreamEncoder::End() {
  CloseBlock();
  done_ = true;
  std::string& o = out();
  o.append(
      "event: message_delta\ndata: "
      R"({"type":"message_delta","delta":{"stop_reason":")");
  o.append(StopReasonName(finish_));
  o.append(R"(","stop_sequence":)");
  if (stop_sequence_.empty()) {
    o.append("null");
  } else {
    AppendQuotedEscaped(o, stop_sequence_);
  }
  o.append("},");
  AppendUsage(o, usage_, true);
  o.append(
      "}\n\n"
      "event: message_stop\ndata: "
      R"({"type":"message_stop"})"
      "\n\n");
}

void AnthropicStreamEncoder::RenderError(const Error& error) {
  done_ = true;
  std::string& o = out();
  o.append(
      "event: error\ndata: "
      R"({"type":"error","error":)");
  o.append(ErrorObject(error));
  o.append("}\n\n");
}

}  // namespace turnpike::providers::anthropic
