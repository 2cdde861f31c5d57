#include "providers/response_events.h"

#include <string>
#include <string_view>
#include <utility>

#include "common/json_escape.h"
#include "stream/json_string.h"

namespace turnpike::providers {
namespace {

void Merge(int64_t& into, int64_t reported) {
  if (reported >= 0) into = reported;
}

void MergeUsage(TokenUsage& into, const TokenUsage& reported) {
  Merge(into.prompt_tokens, reported.prompt_tokens);
  Merge(into.completion_tokens, reported.completion_tokens);
  Merge(into.cached_tokens, reported.cached_tokens);
  Merge(into.cache_creation_tokens, reported.cache_creation_tokens);
  Merge(into.reasoning_tokens, reported.reasoning_tokens);
}

bool AnyCount(const TokenUsage& usage) {
  return usage.prompt_tokens >= 0 || usage.completion_tokens >= 0 || usage.cached_tokens >= 0 ||
         usage.cache_creation_tokens >= 0 || usage.reasoning_tokens >= 0;
}

// Replaces `field`'s escaped bytes by their text; false when they are not valid escaped JSON.
bool Unescape(std::string& field) {
  std::string text;
  text.reserve(field.size());
  if (!stream::AppendDecodedStringBody(field, text)) return false;
  field = std::move(text);
  return true;
}

// Escapes into reused buffers and sends one event at a time.
class Emitter {
 public:
  explicit Emitter(EventSink& sink) : sink_(sink) {}

  // `field` of a fresh event set to `text` escaped, then sent; nothing when `text` is empty.
  void Text(EventKind kind, std::string_view text) {
    if (text.empty()) return;
    StreamEvent event;
    event.kind = kind;
    event.text = Escape(text_, text);
    sink_.OnEvent(event);
  }

  void Start(const Response& response) {
    StreamEvent event;
    event.kind = EventKind::kStart;
    event.id = Escape(id_, response.id);
    event.model = Escape(name_, response.model);
    // What a stream's start knows: the prompt's counts, not the output's.
    event.usage.prompt_tokens = response.usage.prompt_tokens;
    event.usage.cached_tokens = response.usage.cached_tokens;
    event.usage.cache_creation_tokens = response.usage.cache_creation_tokens;
    sink_.OnEvent(event);
  }

  void Call(int32_t index, const ToolCall& call) {
    StreamEvent event;
    event.kind = EventKind::kToolCallStart;
    event.tool_index = index;
    event.id = Escape(id_, call.id);
    event.name = Escape(name_, call.name);
    sink_.OnEvent(event);
    if (call.arguments.empty()) return;
    StreamEvent args;
    args.kind = EventKind::kToolArgsDelta;
    args.tool_index = index;
    args.text = Escape(text_, call.arguments);
    sink_.OnEvent(args);
  }

  void Finish(const Response& response) {
    StreamEvent event;
    event.kind = EventKind::kFinish;
    event.finish = response.finish;
    event.stop_sequence = Escape(text_, response.stop_sequence);
    sink_.OnEvent(event);
  }

  void Kind(EventKind kind, const TokenUsage& usage = {}) {
    StreamEvent event;
    event.kind = kind;
    event.usage = usage;
    sink_.OnEvent(event);
  }

 private:
  static std::string_view Escape(std::string& buffer, std::string_view text) {
    buffer.clear();
    AppendJsonEscaped(buffer, text);
    return buffer;
  }

  EventSink& sink_;
  std::string text_, id_, name_;
};

}  // namespace

ToolCall& ResponseAccumulator::CallAt(int32_t tool_index) {
  for (size_t i = 0; i < indexes_.size(); ++i) {
    if (indexes_[i] == tool_index) return escaped_.tool_calls[i];
  }
  indexes_.push_back(tool_index);
  return escaped_.tool_calls.emplace_back();
}

void ResponseAccumulator::OnEvent(const StreamEvent& event) {
  switch (event.kind) {
    case EventKind::kStart:
      escaped_.id.assign(event.id);
      escaped_.model.assign(event.model);
      MergeUsage(escaped_.usage, event.usage);
      break;
    case EventKind::kTextDelta:
      escaped_.text.append(event.text);
      break;
    case EventKind::kReasoningDelta:
      escaped_.reasoning.append(event.text);
      break;
    case EventKind::kReasoningSignature:
      escaped_.reasoning_signature.assign(event.text);
      break;
    case EventKind::kRedactedReasoning:
      escaped_.redacted_reasoning.emplace_back(event.text);
      break;
    case EventKind::kToolCallStart: {
      ToolCall& call = CallAt(event.tool_index);
      call.id.assign(event.id);
      call.name.assign(event.name);
      break;
    }
    case EventKind::kToolArgsDelta:
      CallAt(event.tool_index).arguments.append(event.text);
      break;
    case EventKind::kFinish:
      escaped_.finish = event.finish;
      escaped_.stop_sequence.assign(event.stop_sequence);
      break;
    case EventKind::kUsage:
      MergeUsage(escaped_.usage, event.usage);
      break;
    case EventKind::kError:
    case EventKind::kEnd:
      break;
  }
}

Result<Response> ResponseAccumulator::Take() {
  Response response = std::move(escaped_);
  escaped_ = Response{};
  indexes_.clear();
  bool valid = Unescape(response.id) && Unescape(response.model) && Unescape(response.text) &&
               Unescape(response.reasoning) && Unescape(response.reasoning_signature) &&
               Unescape(response.stop_sequence);
  for (std::string& payload : response.redacted_reasoning) valid = valid && Unescape(payload);
  for (ToolCall& call : response.tool_calls) {
    valid = valid && Unescape(call.id) && Unescape(call.name) && Unescape(call.arguments);
  }
  if (!valid) {
    return Error{ErrorCode::kUpstreamBadResponse,
                 "The answer's events hold a string that is not valid JSON text.", ""};
  }
  return response;
}

void EmitResponseEvents(const Response& response, EventSink& sink) {
  Emitter emit(sink);
  emit.Start(response);
  emit.Text(EventKind::kReasoningDelta, response.reasoning);
  emit.Text(EventKind::kReasoningSignature, response.reasoning_signature);
  for (const std::string& payload : response.redacted_reasoning) {
    emit.Text(EventKind::kRedactedReasoning, payload);
  }
  emit.Text(EventKind::kTextDelta, response.text);
  for (size_t i = 0; i < response.tool_calls.size(); ++i) {
    emit.Call(static_cast<int32_t>(i), response.tool_calls[i]);
  }
  emit.Finish(response);
  if (AnyCount(response.usage)) emit.Kind(EventKind::kUsage, response.usage);
  emit.Kind(EventKind::kEnd);
}

}  // namespace turnpike::providers
