#include "providers/cohere/stream_decoder.h"

#include "providers/cohere/wire.h"
#include "providers/json_text.h"

namespace turnpike::providers::cohere {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// Everything any event type carries, read in one pass whatever the member order.
struct Fields {
  std::string_view type;
  std::string_view id;                        // message-start
  std::string_view text;                      // delta.message.content.text
  std::string_view thinking;                  // delta.message.content.thinking
  std::string_view call_id, name, arguments;  // delta.message.tool_calls
  bool has_call = false;
  std::string_view finish_reason;  // message-end
  std::string_view error;          // message-end delta.error, or a bare error body's message
  bool has_usage = false;
  UsageCounts usage;
};

// Visits an object's members; any other JSON type (message-start's empty `content` and
// `tool_calls` arrays, null) is skipped.
template <typename F>
error_code ForEachObjectMember(od::value value, F&& on_member) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != od::json_type::object) return SUCCESS;
  return ForEachMember(value, std::forward<F>(on_member));
}

// Cohere's counts are JSON numbers (its schema says double); read an integer either way. A
// count no int64 holds (converting it would be undefined) is refused like a wrong type.
error_code ReadCount(od::value value, int64_t& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) return SUCCESS;
  double number = 0;
  if (auto e = value.get_double().get(number)) return e;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(number >= -kTwoTo63 && number < kTwoTo63)) return simdjson::NUMBER_OUT_OF_RANGE;
  out = static_cast<int64_t>(number);
  return SUCCESS;
}

error_code ReadUnits(od::value value, int64_t& input, int64_t& output) {
  return ForEachObjectMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "input_tokens") return ReadCount(v, input);
    if (key == "output_tokens") return ReadCount(v, output);
    return SUCCESS;
  });
}

error_code ReadUsage(od::value value, Fields& f) {
  f.has_usage = true;
  UsageCounts& u = f.usage;
  return ForEachObjectMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "billed_units") return ReadUnits(v, u.billed_input, u.billed_output);
    if (key == "tokens") return ReadUnits(v, u.input, u.output);
    if (key == "cached_tokens") return ReadCount(v, u.cached);
    return SUCCESS;
  });
}

error_code ReadToolCall(od::value value, Fields& f) {
  f.has_call = true;
  return ForEachObjectMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "id") return ReadEscaped(v, f.call_id);
    if (key == "function") {
      return ForEachObjectMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "name") return ReadEscaped(m, f.name);
        if (k == "arguments") return ReadEscaped(m, f.arguments);
        return SUCCESS;
      });
    }
    return SUCCESS;
  });
}

error_code ReadMessage(od::value value, Fields& f) {
  return ForEachObjectMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "content") {
      return ForEachObjectMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "text") return ReadEscaped(m, f.text);
        if (k == "thinking") return ReadEscaped(m, f.thinking);
        return SUCCESS;
      });
    }
    if (key == "tool_calls") return ReadToolCall(v, f);
    return SUCCESS;
  });
}

// Reads a string unescaped (error messages go into Error, which holds plain text).
error_code ReadPlain(od::value value, std::string_view& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  return type == od::json_type::null ? SUCCESS : value.get_string().get(out);
}

error_code ReadFields(od::document& doc, Fields& f) {
  od::value root;
  if (auto e = doc.get_value().get(root)) return e;
  od::json_type type;
  if (auto e = root.type().get(type)) return e;
  if (type != od::json_type::object) return simdjson::INCORRECT_TYPE;
  return ForEachMember(root, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "type") return ReadEscaped(v, f.type);
    if (key == "id") return ReadEscaped(v, f.id);
    if (key == "message") return ReadPlain(v, f.error);  // an error body: {"message":".."}
    if (key == "delta") {
      return ForEachObjectMember(v, [&](od::raw_json_string k, od::value m) -> error_code {
        if (k == "message") return ReadMessage(m, f);
        if (k == "finish_reason") return ReadEscaped(m, f.finish_reason);
        if (k == "error") return ReadPlain(m, f.error);
        if (k == "usage") return ReadUsage(m, f);
        return SUCCESS;
      });
    }
    return SUCCESS;
  });
}

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

}  // namespace

Status CohereStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data) return Ok{};
  od::document doc;
  Fields f;
  if (parser_.Iterate(event.data).get(doc) || ReadFields(doc, f)) {
    return Bad("The upstream sent a Cohere event that is not valid JSON.");
  }
  StreamEvent out;
  const std::string_view type = f.type;
  if (type.empty() && !f.error.empty()) {
    // Not a documented event: an error body where an event was expected.
    error_ = Error{ErrorCode::kUpstreamBadResponse, std::string(f.error), ""};
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
    return Ok{};
  }
  if (type == "message-start") {
    if (started_) return Bad("The upstream sent message-start twice.");
    started_ = true;
    out.kind = EventKind::kStart;
    out.id = f.id;
    out.usage = usage_;
    sink.OnEvent(out);
    return Ok{};
  }
  const bool content = type.starts_with("content-") || type.starts_with("tool-call-");
  if (!started_ && (content || type == "message-end")) {
    return Bad("The upstream sent " + std::string(type) + " before message-start.");
  }
  if (type == "content-start" || type == "content-delta") {
    if (!f.thinking.empty()) {  // a reasoning model's thinking content
      out.kind = EventKind::kReasoningDelta;
      out.text = f.thinking;
      sink.OnEvent(out);
      out = StreamEvent{};
    }
    if (f.text.empty()) return Ok{};  // an empty start, or thinking only
    out.kind = EventKind::kTextDelta;
    out.text = f.text;
    sink.OnEvent(out);
    return Ok{};
  }
  if (type == "tool-call-start") {
    if (!f.has_call) return Bad("The upstream sent tool-call-start without a tool call.");
    out.kind = EventKind::kToolCallStart;
    out.tool_index = tools_++;
    out.id = f.call_id;
    out.name = f.name;
    sink.OnEvent(out);
    if (f.arguments.empty()) return Ok{};
    StreamEvent args;
    args.kind = EventKind::kToolArgsDelta;
    args.tool_index = out.tool_index;
    args.text = f.arguments;
    sink.OnEvent(args);
    return Ok{};
  }
  if (type == "tool-call-delta") {
    if (tools_ == 0) return Bad("The upstream sent tool-call-delta before tool-call-start.");
    if (f.arguments.empty()) return Ok{};
    out.kind = EventKind::kToolArgsDelta;
    out.tool_index = tools_ - 1;
    out.text = f.arguments;
    sink.OnEvent(out);
    return Ok{};
  }
  if (type != "message-end") return Ok{};  // *-end, tool-plan-delta, citations, debug, new types
  if (f.has_usage) usage_ = ToTokenUsage(f.usage);
  if (IsFailure(f.finish_reason)) {
    error_ = FailureError(f.finish_reason, f.error);
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
    return Ok{};
  }
  out.kind = EventKind::kFinish;
  out.finish = ParseFinishReason(f.finish_reason);
  sink.OnEvent(out);
  if (f.has_usage) {
    StreamEvent usage;
    usage.kind = EventKind::kUsage;
    usage.usage = usage_;
    sink.OnEvent(usage);
  }
  StreamEvent end;
  end.kind = EventKind::kEnd;
  sink.OnEvent(end);
  return Ok{};
}

}  // namespace turnpike::providers::cohere
