#include "providers/openai_responses/stream_decoder.h"

#include "providers/json_text.h"
#include "providers/openai_responses/upstream_answer.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

// An unescaped string (error messages); null reads as empty.
error_code ReadText(od::value value, std::string_view& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::null) return SUCCESS;
  return value.get_string().get(out);
}

}  // namespace

error_code ResponsesStreamDecoder::Read(od::object root, Fields& f) {
  auto on_error = [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "code") return ReadEscaped(v, f.error_code);
    if (key == "message") return ReadText(v, f.error_message);
    return SUCCESS;
  };
  auto on_usage = [&](od::raw_json_string key, od::value v) -> error_code {
    f.has_usage = true;
    if (key == "input_tokens") return ReadInt(v, f.usage.prompt_tokens);
    if (key == "output_tokens") return ReadInt(v, f.usage.completion_tokens);
    if (key == "input_tokens_details") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value d) -> error_code {
        return k == "cached_tokens" ? ReadInt(d, f.usage.cached_tokens) : SUCCESS;
      });
    }
    return SUCCESS;
  };
  auto on_response = [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "id") return ReadEscaped(v, f.id);
    if (key == "model") return ReadEscaped(v, f.model);
    if (key == "status") return ReadEscaped(v, f.status);
    if (key == "usage") return ForEachMember(v, on_usage);
    if (key == "incomplete_details") {
      return ForEachMember(v, [&](od::raw_json_string k, od::value d) -> error_code {
        return k == "reason" ? ReadEscaped(d, f.reason) : SUCCESS;
      });
    }
    if (key == "error") {
      od::json_type type;
      if (auto e = v.type().get(type)) return e;
      if (type == od::json_type::null) return SUCCESS;
      f.has_error = true;
      return ForEachMember(v, on_error);
    }
    return SUCCESS;  // output (repeats what the deltas said), echoed request fields
  };
  auto on_item = [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "type") return ReadEscaped(v, f.item_type);
    if (key == "call_id") return ReadEscaped(v, f.call_id);
    if (key == "name") return ReadEscaped(v, f.name);
    if (key == "arguments") return ReadEscaped(v, f.arguments);
    return SUCCESS;
  };
  for (auto field : root) {
    od::raw_json_string key;
    od::value v;
    error_code e = field.key().get(key);
    if (!e) e = field.value().get(v);
    if (!e) {
      if (key == "type") {
        e = ReadEscaped(v, f.type);
      } else if (key == "delta") {
        e = ReadEscaped(v, f.delta);
      } else if (key == "output_index") {
        e = ReadInt(v, f.output_index);
      } else if (key == "item") {
        e = ForEachMember(v, on_item);
      } else if (key == "response") {
        e = ForEachMember(v, on_response);
      } else if (key == "code" || key == "message") {
        // The `error` event carries them at the top (and some servers nest them in `error`).
        f.has_error = true;
        e = on_error(key, v);
      } else if (key == "error") {
        f.has_error = true;
        e = ForEachMember(v, on_error);
      }
    }
    if (e) return e;
  }
  return SUCCESS;
}

void ResponsesStreamDecoder::Start(const Fields& f, EventSink& sink) {
  if (started_) return;
  started_ = true;
  StreamEvent out;
  out.kind = EventKind::kStart;
  out.id = f.id;
  out.model = f.model;
  sink.OnEvent(out);
}

void ResponsesStreamDecoder::Args(std::string_view text, EventSink& sink) {
  if (text.empty()) return;
  open_has_args_ = true;
  StreamEvent out;
  out.kind = EventKind::kToolArgsDelta;
  out.tool_index = tools_ - 1;
  out.text = text;
  sink.OnEvent(out);
}

Status ResponsesStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data) return Ok{};
  if (done_) return Bad("The upstream sent an event after its final Responses event.");
  od::document doc;
  od::object root;
  Fields f;
  if (parser_.Iterate(event.data).get(doc) || doc.get_object().get(root) || Read(root, f)) {
    return Bad("The upstream sent a Responses event that is not what the API streams.");
  }
  const std::string_view type = event.event.empty() ? f.type : event.event;
  StreamEvent out;
  if (type == "response.created") {
    Start(f, sink);
  } else if (type == "response.output_text.delta" || type == "response.refusal.delta") {
    if (f.delta.empty()) return Ok{};
    Start(f, sink);
    out.kind = EventKind::kTextDelta;
    out.text = f.delta;
    sink.OnEvent(out);
  } else if (type == "response.output_item.added" && f.item_type == "function_call") {
    if (f.call_id.empty() || f.name.empty()) {
      return Bad("The upstream started a function call without call_id or name.");
    }
    Start(f, sink);
    open_call_ = f.output_index;
    open_has_args_ = false;
    out.kind = EventKind::kToolCallStart;
    out.tool_index = tools_++;
    out.id = f.call_id;
    out.name = f.name;
    sink.OnEvent(out);
    Args(f.arguments, sink);
  } else if (type == "response.function_call_arguments.delta") {
    if (open_call_ < 0 || f.output_index != open_call_) {
      return Bad("The upstream sent arguments for a function call that is not open.");
    }
    Args(f.delta, sink);
  } else if (type == "response.output_item.done" && f.item_type == "function_call") {
    if (f.output_index == open_call_ && !open_has_args_) Args(f.arguments, sink);
    open_call_ = -1;
  } else if (type == "response.completed" || type == "response.incomplete") {
    Start(f, sink);
    done_ = true;
    out.kind = EventKind::kFinish;
    out.finish = FinishFor(f.status.empty() ? type.substr(sizeof("response.") - 1) : f.status,
                           f.reason, tools_ > 0);
    sink.OnEvent(out);
    if (f.has_usage) {
      usage_ = f.usage;
      out = StreamEvent{};
      out.kind = EventKind::kUsage;
      out.usage = usage_;
      sink.OnEvent(out);
    }
    out = StreamEvent{};
    out.kind = EventKind::kEnd;
    sink.OnEvent(out);
  } else if (type == "response.failed" || type == "error") {
    done_ = true;
    error_ = Error{CodeForResponseError(f.error_code),
                   f.error_message.empty() ? std::string("The upstream response failed.")
                                           : std::string(f.error_message),
                   ""};
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
  }
  return Ok{};
}

}  // namespace turnpike::providers::openai_responses
