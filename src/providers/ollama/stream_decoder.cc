#include "providers/ollama/stream_decoder.h"

#include "providers/json_text.h"
#include "providers/ollama/wire.h"

namespace turnpike::providers::ollama {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

// The `arguments` of a call: an object (Ollama), or a string holding JSON (accepted from
// compatible servers), appended to `out` as escaped JSON text.
error_code AppendArguments(od::value value, std::string& out) {
  od::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == od::json_type::string) {
    std::string_view escaped;
    if (auto e = ReadEscaped(value, escaped)) return e;
    out.append(escaped);
    return SUCCESS;
  }
  if (type != od::json_type::object) return simdjson::INCORRECT_TYPE;
  od::object object;
  std::string_view raw;
  if (auto e = value.get_object().get(object)) return e;
  if (auto e = object.raw_json().get(raw)) return e;
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  AppendJsonEscaped(out, raw);
  return SUCCESS;
}

}  // namespace

Status OllamaStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data) return Ok{};
  if (done_) return Bad("The upstream sent a line after its final (done) line.");
  od::document doc;
  od::object root;
  if (parser_.Iterate(event.data).get(doc) || doc.get_object().get(root)) {
    return Bad("The upstream sent an Ollama line that is not a JSON object.");
  }
  // Members are handled in the order they come; Ollama writes model, created_at, message,
  // done, then done_reason and the counts. A message's events need the start first, so the
  // start goes out before the first member that produces an event.
  std::string_view model, created_at, done_reason;
  bool done = false;
  bool has_error = false;
  StreamEvent out;
  auto start = [&]() {
    if (started_) return;
    started_ = true;
    AppendAnswerId(id_, created_at);
    out = StreamEvent{};
    out.kind = EventKind::kStart;
    out.id = id_;
    out.model = model;
    sink.OnEvent(out);
  };
  auto on_call = [&](int64_t, od::value call) -> error_code {
    std::string_view name;
    args_.clear();
    error_code e = ForEachMember(call, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key != "function") return SUCCESS;
      return ForEachMember(v, [&](od::raw_json_string k, od::value f) -> error_code {
        if (k == "name") return ReadEscaped(f, name);
        if (k == "arguments") return AppendArguments(f, args_);
        return SUCCESS;
      });
    });
    if (e) return e;
    if (name.empty()) return simdjson::NO_SUCH_FIELD;
    if (args_.empty()) args_ = "{}";
    start();
    call_id_.clear();
    AppendCallId(call_id_, tools_);
    out = StreamEvent{};
    out.kind = EventKind::kToolCallStart;
    out.tool_index = tools_;
    out.id = call_id_;
    out.name = name;
    sink.OnEvent(out);
    out = StreamEvent{};
    out.kind = EventKind::kToolArgsDelta;
    out.tool_index = tools_++;
    out.text = args_;
    sink.OnEvent(out);
    return SUCCESS;
  };
  auto on_message = [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "content") {
      std::string_view text;
      if (auto e = ReadEscaped(v, text)) return e;
      if (text.empty()) return SUCCESS;
      start();
      out = StreamEvent{};
      out.kind = EventKind::kTextDelta;
      out.text = text;
      sink.OnEvent(out);
      return SUCCESS;
    }
    if (key == "thinking") {
      std::string_view text;
      if (auto e = ReadEscaped(v, text)) return e;
      if (text.empty()) return SUCCESS;
      start();
      out = StreamEvent{};
      out.kind = EventKind::kReasoningDelta;
      out.text = text;
      sink.OnEvent(out);
      return SUCCESS;
    }
    if (key == "tool_calls") return ForEachElement(v, on_call);
    return SUCCESS;  // role, images
  };
  error_code e = SUCCESS;
  for (auto field : root) {
    od::raw_json_string key;
    od::value v;
    if ((e = field.key().get(key)) || (e = field.value().get(v))) break;
    if (key == "model") {
      e = ReadEscaped(v, model);
    } else if (key == "created_at") {
      e = ReadEscaped(v, created_at);
    } else if (key == "message") {
      e = ForEachMember(v, on_message);
    } else if (key == "done") {
      e = v.get_bool().get(done);
    } else if (key == "done_reason") {
      e = ReadEscaped(v, done_reason);
    } else if (key == "prompt_eval_count") {
      e = ReadInt(v, usage_.prompt_tokens);
    } else if (key == "eval_count") {
      e = ReadInt(v, usage_.completion_tokens);
    } else if (key == "error") {
      std::string_view message;
      e = v.get_string().get(message);
      if (!e) {
        error_ = Error{ErrorCode::kUpstreamBadResponse, std::string(message), ""};
        has_error = true;
      }
    }
    if (e) break;
  }
  if (e) return Bad("The upstream sent an Ollama line that is not what /api/chat answers.");
  if (has_error) {
    done_ = true;
    out = StreamEvent{};
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
    return Ok{};
  }
  if (!done) return Ok{};
  start();
  done_ = true;
  out = StreamEvent{};
  out.kind = EventKind::kFinish;
  out.finish = ParseDoneReason(done_reason, tools_ > 0);
  sink.OnEvent(out);
  out = StreamEvent{};
  out.kind = EventKind::kUsage;
  out.usage = usage_;
  sink.OnEvent(out);
  out = StreamEvent{};
  out.kind = EventKind::kEnd;
  sink.OnEvent(out);
  return Ok{};
}

}  // namespace turnpike::providers::ollama
