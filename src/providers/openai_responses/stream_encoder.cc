#include "providers/openai_responses/stream_encoder.h"

#include "common/error.h"
#include "providers/json_text.h"
#include "providers/openai_responses/request.h"
#include "providers/reasoning.h"

namespace turnpike::providers::openai_responses {
namespace {
constexpr std::string_view kResponseIdPrefix = "resp_";

// `event: <type>\ndata: {"type":"<type>","sequence_number":`, written at compile time: an
// event's opening is one append.
template <size_t N>
class EventHead {
 public:
  consteval explicit EventHead(const char (&type)[N]) {
    size_t at = 0;
    for (std::string_view part :
         {std::string_view("event: "), std::string_view(type, N - 1),
          std::string_view("\ndata: {\"type\":\""), std::string_view(type, N - 1),
          std::string_view("\",\"sequence_number\":")}) {
      for (const char c : part) text_[at++] = c;
    }
  }
  constexpr std::string_view view() const { return {text_, sizeof(text_)}; }

 private:
  char text_[43 + 2 * (N - 1)] = {};
};

constexpr EventHead kError{"error"};
constexpr EventHead kCancelled{"response.cancelled"};
constexpr EventHead kCompleted{"response.completed"};
constexpr EventHead kContentPartAdded{"response.content_part.added"};
constexpr EventHead kContentPartDone{"response.content_part.done"};
constexpr EventHead kCreated{"response.created"};
constexpr EventHead kFailed{"response.failed"};
constexpr EventHead kFunctionCallArgumentsDelta{"response.function_call_arguments.delta"};
constexpr EventHead kFunctionCallArgumentsDone{"response.function_call_arguments.done"};
constexpr EventHead kInProgress{"response.in_progress"};
constexpr EventHead kIncomplete{"response.incomplete"};
constexpr EventHead kOutputItemAdded{"response.output_item.added"};
constexpr EventHead kOutputItemDone{"response.output_item.done"};
constexpr EventHead kOutputTextDelta{"response.output_text.delta"};
constexpr EventHead kOutputTextDone{"response.output_text.done"};
constexpr EventHead kReasoningSummaryPartAdded{"response.reasoning_summary_part.added"};
constexpr EventHead kReasoningSummaryPartDone{"response.reasoning_summary_part.done"};
constexpr EventHead kReasoningSummaryTextDelta{"response.reasoning_summary_text.delta"};
constexpr EventHead kReasoningSummaryTextDone{"response.reasoning_summary_text.done"};
}  // namespace

ResponsesStreamEncoder::ResponsesStreamEncoder(const EncoderOptions& options)
    : created_(options.created), echo_(EchoFieldsOf(options)), background_(options.background) {}

void ResponsesStreamEncoder::OpenEvent(std::string_view head) {
  std::string& o = out();
  o.append(head);
  AppendInt(o, sequence_++);
}

void ResponsesStreamEncoder::CloseEvent() { out().append("}\n\n"); }

void ResponsesStreamEncoder::AppendItemRef(size_t index) {
  std::string& o = out();
  if (static_cast<int64_t>(index) == ref_index_) {
    o.append(ref_);
    return;
  }
  o.append(R"(,"item_id":)");
  AppendQuotedEscaped(o, items_[index].id);
  o.append(R"(,"output_index":)");
  AppendInt(o, static_cast<int64_t>(index));
}

void ResponsesStreamEncoder::Snapshot(std::string_view event_head, ResponseStatus status,
                                      const Error* error) {
  OpenEvent(event_head);
  std::string& o = out();
  o.append(R"(,"response":)");
  const ResponseHead head{id_, model_, created_, echo_, background_};
  const bool final = status != ResponseStatus::kInProgress;
  const std::vector<OutputItem> none;
  AppendResponse(o, head, status, finish_, final ? items_ : none, final ? &usage_ : nullptr, error);
  CloseEvent();
}

void ResponsesStreamEncoder::Start(const StreamEvent& event) {
  started_ = true;
  id_.assign(kResponseIdPrefix).append(event.id);
  message_id_.assign("msg_").append(event.id);
  model_.assign(event.model);
  if (event.usage.present()) usage_ = event.usage;
  Snapshot(kCreated.view(), ResponseStatus::kInProgress, nullptr);
  Snapshot(kInProgress.view(), ResponseStatus::kInProgress, nullptr);
}

void ResponsesStreamEncoder::OpenItem(OutputItem item) {
  CloseItem();
  items_.push_back(std::move(item));
  open_ = static_cast<int64_t>(items_.size() - 1);
  const OutputItem& added = items_.back();
  // Every event of the item repeats its reference: written once.
  ref_index_ = open_;
  ref_.assign(R"(,"item_id":")").append(added.id).append(R"(","output_index":)");
  AppendInt(ref_, open_);
  std::string& o = out();
  OpenEvent(kOutputItemAdded.view());
  o.append(R"(,"output_index":)");
  AppendInt(o, open_);
  o.append(R"(,"item":)");
  AppendItem(o, added, "in_progress");
  CloseEvent();
  if (added.is_call) return;
  if (added.is_reasoning) {
    OpenEvent(kReasoningSummaryPartAdded.view());
    AppendItemRef(open_);
    o.append(R"(,"summary_index":0,"part":)");
    AppendSummaryPart(o, "");
    CloseEvent();
    return;
  }
  OpenEvent(kContentPartAdded.view());
  AppendItemRef(open_);
  o.append(R"(,"content_index":0,"part":)");
  AppendTextPart(o, "");
  CloseEvent();
}

void ResponsesStreamEncoder::CloseItem() {
  if (open_ < 0) return;
  const size_t index = static_cast<size_t>(open_);
  open_ = -1;
  open_tool_ = -1;
  const OutputItem& item = items_[index];
  std::string& o = out();
  const std::string_view status = !item.is_call && !item.is_reasoning &&
                                          (StatusFor(finish_) == ResponseStatus::kIncomplete ||
                                           status_ == ResponseStatus::kCancelled)
                                      ? "incomplete"
                                      : "completed";
  if (item.is_reasoning) {
    OpenEvent(kReasoningSummaryTextDone.view());
    AppendItemRef(index);
    o.append(R"(,"summary_index":0,"text":)");
    AppendQuotedEscaped(o, item.text);
    CloseEvent();
    OpenEvent(kReasoningSummaryPartDone.view());
    AppendItemRef(index);
    o.append(R"(,"summary_index":0,"part":)");
    AppendSummaryPart(o, item.text);
    CloseEvent();
  } else if (item.is_call) {
    OpenEvent(kFunctionCallArgumentsDone.view());
    AppendItemRef(index);
    o.append(R"(,"name":)");
    AppendQuotedEscaped(o, item.name);
    o.append(R"(,"arguments":)");
    AppendQuotedEscaped(o, item.text);
    CloseEvent();
  } else {
    OpenEvent(kOutputTextDone.view());
    AppendItemRef(index);
    o.append(R"(,"content_index":0,"logprobs":[],"text":)");
    AppendQuotedEscaped(o, item.text);
    CloseEvent();
    OpenEvent(kContentPartDone.view());
    AppendItemRef(index);
    o.append(R"(,"content_index":0,"part":)");
    AppendTextPart(o, item.text);
    CloseEvent();
  }
  OpenEvent(kOutputItemDone.view());
  o.append(R"(,"output_index":)");
  AppendInt(o, static_cast<int64_t>(index));
  o.append(R"(,"item":)");
  AppendItem(o, item, status);
  CloseEvent();
}

void ResponsesStreamEncoder::Fail(const Error& error) {
  done_ = true;
  status_ = ResponseStatus::kFailed;
  error_ = error;
  std::string& o = out();
  OpenEvent(kError.view());
  o.append(R"(,"code":)");
  AppendJsonQuoted(o, ErrorCodeName(error.code));
  o.append(R"(,"message":)");
  AppendJsonQuoted(o, error.message);
  o.append(R"(,"param":)");
  if (error.param.empty()) {
    o.append("null");
  } else {
    AppendJsonQuoted(o, ClientParam(error.param));
  }
  CloseEvent();
  if (started_) Snapshot(kFailed.view(), ResponseStatus::kFailed, &error);
}

void ResponsesStreamEncoder::Cancel() {
  if (done_) return;
  status_ = ResponseStatus::kCancelled;
  if (!started_) Start(StreamEvent{});
  CloseItem();
  done_ = true;
  Snapshot(kCancelled.view(), ResponseStatus::kCancelled, nullptr);
}

void ResponsesStreamEncoder::AppendResponseObject(std::string& out) const {
  const ResponseHead head{id_, model_, created_, echo_, background_};
  const bool final = status_ != ResponseStatus::kInProgress && status_ != ResponseStatus::kQueued;
  const std::vector<OutputItem> none;
  AppendResponse(out, head, status_, finish_, final ? items_ : none, final ? &usage_ : nullptr,
                 error());
}

void ResponsesStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  if (event.kind == EventKind::kError) {
    Fail(*event.error);
    return;
  }
  if (!started_) {
    // The pivot's first event always starts the answer; a decoder that did not is a bug.
    StreamEvent start;
    if (event.kind == EventKind::kStart) start = event;
    Start(start);
    if (event.kind == EventKind::kStart) return;
  }
  std::string& o = out();
  switch (event.kind) {
    case EventKind::kReasoningDelta: {
      if (open_ < 0 || !items_[open_].is_reasoning) {
        OutputItem reasoning;
        reasoning.is_reasoning = true;
        reasoning.id.assign("rs_").append(id_.substr(kResponseIdPrefix.size()));
        // A second reasoning item (after a tool call) needs an id of its own.
        if (reasonings_ > 0) reasoning.id.append("_").append(std::to_string(reasonings_));
        ++reasonings_;
        OpenItem(std::move(reasoning));
      }
      items_[open_].text.append(event.text);
      OpenEvent(kReasoningSummaryTextDelta.view());
      AppendItemRef(open_);
      o.append(R"(,"summary_index":0,"delta":)");
      AppendQuotedEscaped(o, event.text);
      CloseEvent();
      break;
    }
    case EventKind::kReasoningSignature:
      // Closes the open reasoning item's text: shown in its done events and the response.
      if (open_ >= 0 && items_[open_].is_reasoning) {
        items_[open_].encrypted.assign(reasoning::kStreamIssuer).append(":").append(event.text);
      }
      break;
    case EventKind::kTextDelta: {
      if (open_ < 0 || items_[open_].is_call || items_[open_].is_reasoning) {
        OutputItem message;
        message.id = message_id_;
        // A second message (text after a tool call) needs an id of its own.
        if (messages_ > 0) message.id.append("_").append(std::to_string(messages_));
        ++messages_;
        OpenItem(std::move(message));
      }
      items_[open_].text.append(event.text);
      OpenEvent(kOutputTextDelta.view());
      AppendItemRef(open_);
      o.append(R"(,"content_index":0,"delta":)");
      AppendQuotedEscaped(o, event.text);
      o.append(R"(,"logprobs":[])");
      CloseEvent();
      break;
    }
    case EventKind::kToolCallStart: {
      OutputItem call;
      call.is_call = true;
      call.id.assign("fc_").append(event.id);
      call.call_id.assign(event.id);
      call.name.assign(event.name);
      OpenItem(std::move(call));
      open_tool_ = event.tool_index;
      break;
    }
    case EventKind::kToolArgsDelta:
      if (open_ < 0 || !items_[open_].is_call || event.tool_index != open_tool_) {
        Fail(Error{ErrorCode::kUpstreamBadResponse,
                   "The upstream interleaved tool call arguments, which a Responses stream "
                   "cannot express.",
                   ""});
        return;
      }
      items_[open_].text.append(event.text);
      OpenEvent(kFunctionCallArgumentsDelta.view());
      AppendItemRef(open_);
      o.append(R"(,"delta":)");
      AppendQuotedEscaped(o, event.text);
      CloseEvent();
      break;
    case EventKind::kFinish:
      finish_ = event.finish;
      CloseItem();
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd: {
      CloseItem();
      done_ = true;
      status_ = StatusFor(finish_);
      Snapshot(status_ == ResponseStatus::kIncomplete ? kIncomplete.view() : kCompleted.view(),
               status_, nullptr);
      break;
    }
    default:
      break;
  }
}

}  // namespace turnpike::providers::openai_responses
