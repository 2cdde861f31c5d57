#include "providers/anthropic/stream_decoder.h"

#include <algorithm>

#include "providers/anthropic/wire.h"
#include "providers/json_text.h"

namespace turnpike::providers::anthropic {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// Everything any event type carries, read in one pass whatever the member order.
struct Fields {
  std::string_view type;
  int64_t index = -1;
  std::string_view id, model;                         // message_start.message
  std::string_view block_type, block_id, block_name;  // content_block_start.content_block
  std::string_view block_text, block_thinking, block_signature, block_data;
  // content_block_delta.delta (text / partial_json / thinking / signature)
  std::string_view delta_type, delta_text;
  std::string_view stop_reason, stop_sequence;  // message_delta.delta
  bool has_usage = false;
  int64_t input = -1, output = -1, cache_read = -1, cache_creation = -1;
  std::string_view error_type;
  std::string_view error_message;  // unescaped
};

error_code ReadUsage(od::value value, Fields& f) {
  f.has_usage = true;
  return ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "input_tokens") return ReadInt(v, f.input);
    if (key == "output_tokens") return ReadInt(v, f.output);
    if (key == "cache_read_input_tokens") return ReadInt(v, f.cache_read);
    if (key == "cache_creation_input_tokens") return ReadInt(v, f.cache_creation);
    return SUCCESS;
  });
}

error_code ReadFields(od::document& doc, Fields& f) {
  od::value root;
  if (auto e = doc.get_value().get(root)) return e;
  od::json_type type;
  if (auto e = root.type().get(type)) return e;
  if (type != od::json_type::object) return simdjson::INCORRECT_TYPE;
  return ForEachMember(root, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "type") return ReadEscaped(v, f.type);
    if (key == "index") return ReadInt(v, f.index);
    if (key == "usage") return ReadUsage(v, f);
    if (key == "message") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "id") return ReadEscaped(m, f.id);
        if (k == "model") return ReadEscaped(m, f.model);
        if (k == "usage") return ReadUsage(m, f);
        return SUCCESS;
      });
    }
    if (key == "content_block") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "type") return ReadEscaped(m, f.block_type);
        if (k == "id") return ReadEscaped(m, f.block_id);
        if (k == "name") return ReadEscaped(m, f.block_name);
        if (k == "text") return ReadEscaped(m, f.block_text);
        if (k == "thinking") return ReadEscaped(m, f.block_thinking);
        if (k == "signature") return ReadEscaped(m, f.block_signature);
        if (k == "data") return ReadEscaped(m, f.block_data);
        return SUCCESS;
      });
    }
    if (key == "delta") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "type") return ReadEscaped(m, f.delta_type);
        if (k == "text" || k == "partial_json" || k == "thinking" || k == "signature") {
          return ReadEscaped(m, f.delta_text);
        }
        if (k == "stop_reason") return ReadEscaped(m, f.stop_reason);
        if (k == "stop_sequence") return ReadEscaped(m, f.stop_sequence);
        return SUCCESS;
      });
    }
    if (key == "error") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "type") return ReadEscaped(m, f.error_type);
        if (k == "message") {
          od::json_type t;
          if (auto e = m.type().get(t)) return e;
          return t == od::json_type::null ? SUCCESS : m.get_string().get(f.error_message);
        }
        return SUCCESS;
      });
    }
    return SUCCESS;
  });
}

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

// The escaped error message is needed unescaped in Error; `message` is already unescaped.
Error InStreamError(std::string_view type, std::string_view message) {
  return Error{CodeForType(type, 0), std::string(message), ""};
}

}  // namespace

Status AnthropicStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data) return Ok{};
  od::document doc;
  Fields f;
  if (parser_.Iterate(event.data).get(doc) || ReadFields(doc, f)) {
    return Bad("The upstream sent an Anthropic event that is not valid JSON.");
  }
  if (f.has_usage) {
    // message_start carries the prompt counts; message_delta's counts are cumulative and, on
    // newer API versions, repeat the input counts. Anthropic's input_tokens excludes cache
    // reads and cache writes; the common prompt_tokens includes both.
    if (f.cache_read >= 0) usage_.cached_tokens = f.cache_read;
    if (f.cache_creation >= 0) usage_.cache_creation_tokens = f.cache_creation;
    if (f.input >= 0) {
      usage_.prompt_tokens = f.input + std::max<int64_t>(usage_.cached_tokens, 0) +
                             std::max<int64_t>(usage_.cache_creation_tokens, 0);
    }
    if (f.output >= 0) usage_.completion_tokens = f.output;
  }
  StreamEvent out;
  const std::string_view type = f.type;
  if (type == "message_start") {
    if (started_) return Bad("The upstream sent message_start twice.");
    started_ = true;
    out.kind = EventKind::kStart;
    out.id = f.id;
    out.model = f.model;
    out.usage = usage_;
    sink.OnEvent(out);
    return Ok{};
  }
  if (type == "ping") return Ok{};
  if (type == "error") {
    error_ = InStreamError(f.error_type, f.error_message);
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
    return Ok{};
  }
  if (!started_ && (type.starts_with("content_block") || type.starts_with("message_"))) {
    return Bad("The upstream sent " + std::string(type) + " before message_start.");
  }
  if (type == "content_block_start") {
    if (block_ != Block::kNone) return Bad("The upstream opened a content block inside another.");
    block_index_ = f.index;
    if (f.block_type == "text") {
      block_ = Block::kText;
      if (f.block_text.empty()) return Ok{};
      out.kind = EventKind::kTextDelta;
      out.text = f.block_text;
    } else if (f.block_type == "tool_use") {
      block_ = Block::kTool;
      out.kind = EventKind::kToolCallStart;
      out.tool_index = tools_++;
      out.id = f.block_id;
      out.name = f.block_name;
    } else if (f.block_type == "thinking") {
      block_ = Block::kThinking;
      if (!f.block_thinking.empty()) {
        out.kind = EventKind::kReasoningDelta;
        out.text = f.block_thinking;
        sink.OnEvent(out);
      }
      if (f.block_signature.empty()) return Ok{};
      out.kind = EventKind::kReasoningSignature;
      out.text = f.block_signature;
    } else if (f.block_type == "redacted_thinking") {
      block_ = Block::kRedacted;
      out.kind = EventKind::kRedactedReasoning;
      out.text = f.block_data;
    } else {
      return Bad("The upstream sent a '" + std::string(f.block_type) +
                 "' content block, which the client's API cannot express.");
    }
    sink.OnEvent(out);
    return Ok{};
  }
  if (type == "content_block_delta") {
    if (block_ == Block::kNone || f.index != block_index_) {
      return Bad("The upstream sent a delta for a content block that is not open.");
    }
    if (f.delta_type == "text_delta" && block_ == Block::kText) {
      out.kind = EventKind::kTextDelta;
    } else if (f.delta_type == "input_json_delta" && block_ == Block::kTool) {
      out.kind = EventKind::kToolArgsDelta;
      out.tool_index = tools_ - 1;
    } else if (f.delta_type == "thinking_delta" && block_ == Block::kThinking) {
      out.kind = EventKind::kReasoningDelta;
    } else if (f.delta_type == "signature_delta" && block_ == Block::kThinking) {
      out.kind = EventKind::kReasoningSignature;
    } else {
      return Bad("The upstream sent a '" + std::string(f.delta_type) +
                 "' delta, which the client's API cannot express.");
    }
    if (f.delta_text.empty()) return Ok{};
    out.text = f.delta_text;
    sink.OnEvent(out);
    return Ok{};
  }
  if (type == "content_block_stop") {
    if (block_ == Block::kNone || f.index != block_index_) {
      return Bad("The upstream closed a content block that is not open.");
    }
    block_ = Block::kNone;
    return Ok{};
  }
  if (type == "message_delta") {
    if (!f.stop_reason.empty()) {
      out.kind = EventKind::kFinish;
      out.finish = ParseStopReason(f.stop_reason);
      out.stop_sequence = f.stop_sequence;
      sink.OnEvent(out);
    }
    if (f.has_usage) {
      StreamEvent usage;
      usage.kind = EventKind::kUsage;
      usage.usage = usage_;
      sink.OnEvent(usage);
    }
    return Ok{};
  }
  if (type == "message_stop") {
    out.kind = EventKind::kEnd;
    sink.OnEvent(out);
  }
  return Ok{};
}

}  // namespace turnpike::providers::anthropic
