#include "providers/gemini/stream_decoder.h"

#include <algorithm>

#include "providers/gemini/thought_signature.h"
#include "providers/gemini/wire.h"
#include "providers/json_text.h"

namespace turnpike::providers::gemini {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;
using Part = GeminiStreamDecoder::Part;

constexpr std::string_view kEmptyArgs = "{}";
constexpr std::string_view kCallIdPrefix = "call_";
constexpr size_t kMaxDigits = 20;  // an int32 call number, with room to spare

// Everything a chunk carries besides its parts, read in one pass whatever the member order.
struct Chunk {
  std::string_view id, model;  // responseId, modelVersion
  std::string_view finish_reason, block_reason;
  bool other_candidate = false;  // a candidate other than the first
  bool unknown_part = false;     // a part that is neither text nor a function call
  bool bad_signature = false;    // a function call's thoughtSignature that is not base64
  bool has_usage = false;
  int64_t prompt = -1, candidates = -1, cached = -1, thoughts = -1, tool_prompt = -1;
  bool is_error = false;
  int64_t error_code = 0;
  std::string_view error_status;
  std::string_view error_message;  // unescaped
};

struct Reader {
  Chunk& chunk;
  std::vector<Part>& parts;
  std::string& args;

  error_code FunctionCall(od::value value, Part& part) {
    part.call = true;
    bool has_args = false;
    auto e = ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "name") return ReadEscaped(v, part.name);
      if (key == "id") return ReadEscaped(v, part.call_id);
      if (key == "args") {
        od::object object;
        if (auto e = v.get_object().get(object)) return e;
        std::string_view raw;
        if (auto e = object.raw_json().get(raw)) return e;
        has_args = true;
        part.args_at = args.size();
        AppendJsonEscaped(args, raw);
        part.args_size = args.size() - part.args_at;
      }
      return SUCCESS;
    });
    if (e) return e;
    if (!has_args) {
      part.args_at = args.size();
      args.append(kEmptyArgs);
      part.args_size = kEmptyArgs.size();
    }
    return SUCCESS;
  }

  error_code OnePart(od::value value) {
    Part part;
    bool known = false;
    auto e = ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "text") {
        known = true;
        return ReadEscaped(v, part.text);
      }
      if (key == "thought") {
        od::json_type type;
        if (auto e = v.type().get(type)) return e;
        return type == od::json_type::boolean ? v.get_bool().get(part.thought) : SUCCESS;
      }
      if (key == "functionCall") {
        known = true;
        return FunctionCall(v, part);
      }
      if (key == "thoughtSignature") return ReadEscaped(v, part.signature);
      return SUCCESS;  // metadata: nothing the client reads
    });
    if (e) return e;
    if (part.call && !part.signature.empty() && !IsSignature(part.signature)) {
      chunk.bad_signature = true;
    }
    // A thought summary is reasoning (kReasoningDelta), not the answer; a part that carries
    // only a signature is skipped (a function call's is kept, another's is not).
    const bool signature_only = !known && !part.signature.empty();
    if (!known && !part.thought && !signature_only) chunk.unknown_part = true;
    if (known || part.thought) parts.push_back(part);
    return SUCCESS;
  }

  error_code Candidate(od::value value) {
    return ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "finishReason") return ReadEscaped(v, chunk.finish_reason);
      if (key == "content") {
        return ForEachMember(v, [&](od::raw_json_string k, od::value c) -> error_code {
          if (k != "parts") return SUCCESS;
          return ForEachElement(c, [&](int64_t, od::value p) { return OnePart(p); });
        });
      }
      return SUCCESS;
    });
  }

  error_code ReadUsage(od::value value) {
    chunk.has_usage = true;
    return ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "promptTokenCount") return ReadInt(v, chunk.prompt);
      if (key == "candidatesTokenCount") return ReadInt(v, chunk.candidates);
      if (key == "cachedContentTokenCount") return ReadInt(v, chunk.cached);
      if (key == "thoughtsTokenCount") return ReadInt(v, chunk.thoughts);
      if (key == "toolUsePromptTokenCount") return ReadInt(v, chunk.tool_prompt);
      return SUCCESS;
    });
  }

  error_code ReadError(od::value value) {
    chunk.is_error = true;
    return ForEachMember(value, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "code") return ReadInt(v, chunk.error_code);
      if (key == "status") return ReadEscaped(v, chunk.error_status);
      if (key == "message") {
        od::json_type t;
        if (auto e = v.type().get(t)) return e;
        return t == od::json_type::string ? v.get_string().get(chunk.error_message) : SUCCESS;
      }
      return SUCCESS;
    });
  }

  error_code Root(od::document& doc) {
    od::value root;
    if (auto e = doc.get_value().get(root)) return e;
    od::json_type type;
    if (auto e = root.type().get(type)) return e;
    if (type != od::json_type::object) return simdjson::INCORRECT_TYPE;
    return ForEachMember(root, [&](od::raw_json_string key, od::value v) -> error_code {
      if (key == "candidates") {
        return ForEachElement(v, [&](int64_t position, od::value c) -> error_code {
          if (position > 0) {
            chunk.other_candidate = true;
            return SUCCESS;
          }
          return Candidate(c);
        });
      }
      if (key == "usageMetadata") return ReadUsage(v);
      if (key == "modelVersion") return ReadEscaped(v, chunk.model);
      if (key == "responseId") return ReadEscaped(v, chunk.id);
      if (key == "promptFeedback") {
        return ForEachMember(v, [&](od::raw_json_string k, od::value f) -> error_code {
          return k == "blockReason" ? ReadEscaped(f, chunk.block_reason) : SUCCESS;
        });
      }
      if (key == "error") return ReadError(v);
      return SUCCESS;
    });
  }
};

Error Bad(std::string message) {
  return Error{ErrorCode::kUpstreamBadResponse, std::move(message), ""};
}

}  // namespace

Status GeminiStreamDecoder::Decode(const stream::SseEvent& event, EventSink& sink) {
  if (!event.has_data || ended_) return Ok{};
  parts_.clear();
  args_.clear();
  Chunk chunk;
  Reader reader{chunk, parts_, args_};
  od::document doc;
  if (parser_.Iterate(event.data).get(doc) || reader.Root(doc)) {
    return Bad("The upstream sent a Gemini chunk that is not valid JSON.");
  }
  StreamEvent out;
  if (chunk.is_error) {
    const int status = static_cast<int>(chunk.error_code);
    error_ =
        Error{CodeForStatusName(chunk.error_status, status), std::string(chunk.error_message), ""};
    ended_ = true;
    out.kind = EventKind::kError;
    out.error = &error_;
    sink.OnEvent(out);
    return Ok{};
  }
  if (chunk.other_candidate) {
    return Bad("The upstream sent more than one candidate; the client's API carries one.");
  }
  if (chunk.bad_signature) {
    return Bad("The upstream sent a function call's thoughtSignature that is not base64.");
  }
  if (chunk.unknown_part) {
    return Bad(
        "The upstream sent a content part (not text or a function call) that the "
        "client's API cannot express.");
  }
  if (chunk.has_usage) {
    // promptTokenCount already includes cachedContentTokenCount; tool-use prompts are input
    // too. candidatesTokenCount excludes thoughts, which are billed as output.
    if (chunk.cached >= 0) usage_.cached_tokens = chunk.cached;
    if (chunk.prompt >= 0)
      usage_.prompt_tokens = chunk.prompt + std::max<int64_t>(chunk.tool_prompt, 0);
    if (chunk.candidates >= 0 || chunk.thoughts >= 0) {
      usage_.completion_tokens =
          std::max<int64_t>(chunk.candidates, 0) + std::max<int64_t>(chunk.thoughts, 0);
    }
    if (chunk.thoughts >= 0) usage_.reasoning_tokens = chunk.thoughts;
  }
  if (!started_) {
    started_ = true;
    response_id_.assign(chunk.id);
    out.kind = EventKind::kStart;
    out.id = response_id_;
    out.model = chunk.model;
    out.usage = usage_;
    sink.OnEvent(out);
  }
  for (const Part& part : parts_) {
    if (part.thought) {
      if (part.text.empty() || part.call) continue;
      StreamEvent thought;
      thought.kind = EventKind::kReasoningDelta;
      thought.text = part.text;
      sink.OnEvent(thought);
      continue;
    }
    if (!part.call) {
      if (part.text.empty()) continue;
      StreamEvent text;
      text.kind = EventKind::kTextDelta;
      text.text = part.text;
      sink.OnEvent(text);
      continue;
    }
    // Room for the longest id this part can give, so that later calls with signatures of that
    // size (and more digits) do not grow it again.
    const size_t synthesized = kCallIdPrefix.size() + response_id_.size() + 1 + kMaxDigits;
    call_id_.reserve(std::max(synthesized, part.call_id.size()) + kSignatureSeparator.size() +
                     part.signature.size());
    // Gemini's own id unless it has escapes: the client would see it unescaped, where a "_ts_"
    // could hide. Ids are never sent back to Gemini, so any id unique in the answer does.
    if (part.call_id.empty() || part.call_id.find('\\') != std::string_view::npos) {
      call_id_.assign(kCallIdPrefix);
      if (!response_id_.empty()) call_id_.append(response_id_).push_back('_');
      AppendInt(call_id_, tools_);
    } else {
      call_id_.assign(part.call_id);
    }
    MakeClientId(call_id_, part.signature);
    StreamEvent call;
    call.kind = EventKind::kToolCallStart;
    call.tool_index = tools_;
    call.id = call_id_;
    call.name = part.name;
    sink.OnEvent(call);
    StreamEvent args;
    args.kind = EventKind::kToolArgsDelta;
    args.tool_index = tools_++;
    args.text = std::string_view(args_).substr(part.args_at, part.args_size);
    sink.OnEvent(args);
  }
  FinishReason finish = ParseFinishReason(chunk.finish_reason);
  if (finish == FinishReason::kNone && !chunk.block_reason.empty()) {
    finish = FinishReason::kContentFilter;  // the prompt was blocked: no candidate at all
  }
  if (finish == FinishReason::kNone) return Ok{};
  if (finish == FinishReason::kStop && tools_ > 0) finish = FinishReason::kToolCalls;
  ended_ = true;
  out = StreamEvent{};
  out.kind = EventKind::kFinish;
  out.finish = finish;
  sink.OnEvent(out);
  if (usage_.present()) {
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

}  // namespace turnpike::providers::gemini
