#include "providers/translator.h"

#include "common/json_escape.h"

namespace turnpike::providers {

StreamTranslator::StreamTranslator(std::unique_ptr<StreamDecoder> decoder,
                                   std::unique_ptr<StreamEncoder> encoder)
    : decoder_(std::move(decoder)), encoder_(std::move(encoder)) {}

void StreamTranslator::set_fallback_model(std::string_view model) {
  fallback_model_.clear();
  AppendJsonEscaped(fallback_model_, model);
}

void StreamTranslator::OnEvent(const StreamEvent& event) {
  if (ended_) return;
  if (event.kind == EventKind::kStart && event.model.empty() && !fallback_model_.empty()) {
    StreamEvent named = event;
    named.model = fallback_model_;
    encoder_->OnEvent(named);
    return;
  }
  switch (event.kind) {
    case EventKind::kTextDelta:
    case EventKind::kToolCallStart:
    case EventKind::kToolArgsDelta:
    case EventKind::kReasoningDelta:
      saw_first_token_ = true;
      output_bytes_ += static_cast<int64_t>(event.text.size() + event.name.size());
      break;
    case EventKind::kFinish:
      finish_ = event.finish;
      break;
    case EventKind::kError:
      error_ = event.error->code;
      ended_ = true;
      break;
    case EventKind::kEnd:
      ended_ = true;
      break;
    default:
      break;
  }
  encoder_->OnEvent(event);
}

Status StreamTranslator::Translate(const stream::SseEvent& event, std::string& out) {
  if (ended_) return Ok{};
  encoder_->set_output(out);
  Status decoded = decoder_->Decode(event, *this);
  if (!decoded.ok()) Fail(decoded.error(), out);
  return decoded;
}

void StreamTranslator::Finish(std::string& out) {
  if (ended_) return;
  Fail(Error{ErrorCode::kUpstreamBadResponse, "The upstream stream ended before it was complete.",
             ""},
       out);
}

void StreamTranslator::Fail(const Error& error, std::string& out) {
  if (ended_) return;
  encoder_->set_output(out);
  StreamEvent event;
  event.kind = EventKind::kError;
  event.error = &error;
  OnEvent(event);
}

}  // namespace turnpike::providers
