#include "guard/guard_sink.h"

#include <utility>

namespace turnpike::guard {
namespace net = boost::asio;

GuardSink::GuardSink(const GuardConfig& config, const HostSet& context, GuardReport& report)
    : stream_(config, context, report, TextForm::kEscaped),
      whole_(config, context, report, TextForm::kRaw) {}

void GuardSink::OnStart(const model_call::AnswerStart& start) {
  stream_.Reset();
  bypassed_ = bypassed_ || start.identity;
  for (model_call::AnswerSink* sink : downstream_) sink->OnStart(start);
}

void GuardSink::OnEvent(const providers::StreamEvent& event) {
  if (event.kind != providers::EventKind::kTextDelta) {
    ReleaseHeld();
    Forward(event);
    return;
  }
  const std::string_view text = stream_.Push(event.text);
  if (text.empty()) return;
  if (text.data() == event.text.data() && text.size() == event.text.size()) {
    Forward(event);
    return;
  }
  providers::StreamEvent guarded = event;
  guarded.text = text;
  Forward(guarded);
}

void GuardSink::ReleaseHeld() {
  const std::string_view text = stream_.Finish();
  if (text.empty()) return;
  providers::StreamEvent event;
  event.kind = providers::EventKind::kTextDelta;
  event.text = text;
  Forward(event);
}

void GuardSink::Forward(const providers::StreamEvent& event) {
  for (model_call::AnswerSink* sink : downstream_) sink->OnEvent(event);
}

void GuardSink::OnFrames(std::span<const model_call::IdentityFrame> frames) {
  for (model_call::AnswerSink* sink : downstream_) sink->OnFrames(frames);
}

void GuardSink::OnWhole(const model_call::WholeAnswer& answer) {
  const model_call::WholeAnswer* out = &answer;
  model_call::WholeAnswer guarded_answer;
  if (answer.response == nullptr) {
    bypassed_ = true;
  } else {
    // The guard changes a text only by replacing, which never keeps its length and bytes.
    const std::string& text = answer.response->text;
    const std::string_view guarded = whole_.Whole(text);
    if (guarded != std::string_view(text)) {
      guarded_ = *answer.response;
      guarded_->text.assign(guarded);
      guarded_answer = answer;
      guarded_answer.response = &*guarded_;
      out = &guarded_answer;
    }
  }
  for (model_call::AnswerSink* sink : downstream_) sink->OnWhole(*out);
}

net::awaitable<bool> GuardSink::Flush() { return Deliver(false); }

net::awaitable<bool> GuardSink::Idle() { return Deliver(true); }

net::awaitable<bool> GuardSink::Deliver(bool idle) {
  for (size_t i = 0; i < downstream_.size();) {
    model_call::AnswerSink* sink = downstream_[i];
    const std::optional<bool> at_once = idle ? std::nullopt : sink->FlushAtOnce();
    bool kept = at_once.value_or(false);
    if (!at_once.has_value()) {
      net::awaitable<bool> step = idle ? sink->Idle() : sink->Flush();
      const bool flushed = co_await std::move(step);
      kept = flushed;
    }
    if (kept) {
      ++i;
      continue;
    }
    downstream_.erase(downstream_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  co_return !downstream_.empty();
}

void GuardSink::OnEnd(const Error* error) {
  ReleaseHeld();
  for (model_call::AnswerSink* sink : downstream_) sink->OnEnd(error);
}

bool GuardSink::serves_client() const {
  for (const model_call::AnswerSink* sink : downstream_) {
    if (sink->serves_client()) return true;
  }
  return false;
}

bool GuardSink::wants_events() const {
  for (const model_call::AnswerSink* sink : downstream_) {
    if (sink->wants_events()) return true;
  }
  return false;
}

}  // namespace turnpike::guard
