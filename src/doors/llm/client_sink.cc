#include "doors/llm/client_sink.h"

#include "common/clock.h"
#include "core/openai_errors.h"
#include "core/server_timing.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kKeepAliveComment = ": keep-alive\n\n";
constexpr std::string_view kJson = "application/json";
}  // namespace

providers::EncoderOptions ClientSink::EncoderOptionsOf() const {
  providers::EncoderOptions encoder;
  encoder.created = UnixSeconds();
  encoder.include_usage = options_.include_usage;
  encoder.client_body = options_.client_body;
  encoder.client_document = options_.client_document;
  return encoder;
}

void ClientSink::OnStart(const model_call::AnswerStart& start) {
  start_ = start;
  if (options_.recording != nullptr && !start.identity) {
    frames_.emplace(*options_.recording, model_call::Form{options_.client->name(), start.stream});
  }
  if (!start.stream) return;
  step_ = Step::kHead;
  if (!start.identity) {
    encoder_ = options_.client->NewEncoder(EncoderOptionsOf());
    encoder_->set_output(out_);
  }
}

void ClientSink::OnEvent(const providers::StreamEvent& event) {
  if (start_.identity || ended_) return;  // identity frames carry the bytes
  if (event.kind == providers::EventKind::kEnd || event.kind == providers::EventKind::kError) {
    ended_ = true;
  }
  const size_t before = out_.size();
  encoder_->OnEvent(event);
  if (frames_ && out_.size() > before) frames_->OnFrame(std::string_view(out_).substr(before));
}

void ClientSink::OnFrames(std::span<const model_call::IdentityFrame> frames) {
  const bool drop_usage = options_.openai_chat && !options_.include_usage;
  for (const model_call::IdentityFrame& frame : frames) {
    // Dropped: the frame after it starts a new view.
    if (drop_usage && frame.kind == model_call::FrameKind::kUsageOnly) continue;
    const std::string_view bytes = frame.bytes;
    if (!out_.empty()) {  // the views are full: the rest of this read is copied, in order
      out_.append(bytes);
      continue;
    }
    std::string_view* last = views_ > 0 ? &pieces_[views_ - 1] : nullptr;
    if (last != nullptr && last->data() + last->size() == bytes.data()) {
      *last = std::string_view(last->data(), last->size() + bytes.size());
    } else if (views_ < kViews) {
      pieces_[views_++] = bytes;
    } else {
      out_.append(bytes);
    }
  }
}

void ClientSink::OnWhole(const model_call::WholeAnswer& answer) {
  step_ = Step::kWhole;
  whole_status_ = answer.status;
  if (answer.response != nullptr) {
    providers::EncoderOptions render;
    render.created = UnixSeconds();
    render.client_body = options_.client_body;
    render.client_document = options_.client_document;
    whole_body_ = options_.client->RenderWholeResponse(*answer.response, render);
    whole_type_ = kJson;
    if (frames_) frames_->OnFrame(whole_body_);
    return;
  }
  whole_type_ = answer.content_type;
  whole_storage_ = answer.storage;
}

void ClientSink::OnEnd(const Error* error) {
  frames_.reset();  // the form is complete; the error event below is not part of it
  if (!start_.stream) return;
  step_ = Step::kEnd;
  if (error == nullptr || ended_) return;
  ended_ = true;
  // The client dialect's in-stream error event, after this read's frames (out_ goes last).
  if (options_.openai_chat) {
    out_ += core::OpenAiStreamErrorEvent(*error);
    return;
  }
  if (!encoder_) {  // identity: the client's encoder renders only the error event
    encoder_ = options_.client->NewEncoder(EncoderOptionsOf());
    encoder_->set_output(out_);
  }
  providers::StreamEvent event;
  event.kind = providers::EventKind::kError;
  event.error = error;
  encoder_->OnEvent(event);
}

bool ClientSink::Left() {
  if (frames_) frames_->OnClose();  // before the end: its frames render the events so far
  frames_.reset();
  ctx_.status = 499;
  gone_ = true;
  step_ = Step::kDone;
  return false;
}

void ClientSink::AddHeadHeaders() {
  exchange_.response_headers().Add("Cache-Control", "no-cache");
  if (options_.server_timing) {
    exchange_.response_headers().Add("Server-Timing",
                                     ServerTimingHeader(ctx_.phases, core::Clock::now()));
  }
}

size_t ClientSink::TakePending() {
  size_t count = views_;
  if (!out_.empty()) pieces_[count++] = out_;
  views_ = 0;
  return count;
}

net::awaitable<bool> ClientSink::Flush() {
  // Every step is written in this frame (no nested coroutine): it runs once per upstream read.
  if (gone_) co_return false;
  if (step_ == Step::kBytes || step_ == Step::kEnd) {
    const bool end = step_ == Step::kEnd;
    if (end) step_ = Step::kDone;
    // One write per read: a single view as it is, several gathered (Exchange::WritePieces).
    const size_t count = TakePending();
    bool kept = true;
    if (count == 1) {
      kept = co_await exchange_.Write(pieces_[0]);
    } else if (count > 1) {
      kept =
          co_await exchange_.WritePieces(std::span<const std::string_view>(pieces_.data(), count));
    }
    out_.clear();
    if (!kept) co_return Left();
    if (end) co_await exchange_.EndStream();
    co_return true;
  }
  if (step_ == Step::kWhole) {
    step_ = Step::kDone;
    std::string body =
        whole_storage_ != nullptr ? std::move(*whole_storage_) : std::move(whole_body_);
    const std::string_view content_type = whole_type_;
    co_await core_.Respond(exchange_, ctx_, whole_status_, content_type, std::move(body));
    co_return true;
  }
  if (step_ == Step::kHead) {
    AddHeadHeaders();
    const std::string_view content_type = "text/event-stream";
    const bool started = co_await exchange_.StartStream(200, content_type);
    ctx_.status = 200;
    ctx_.phases.client_head = exchange_.head_sent_at();
    step_ = Step::kBytes;
    co_return started ? true : Left();
  }
  co_return true;
}

net::awaitable<bool> ClientSink::Idle() {
  if (step_ != Step::kBytes) co_return true;
  const std::string_view comment = kKeepAliveComment;
  const bool sent = co_await exchange_.Write(comment);
  co_return sent ? true : Left();
}

}  // namespace turnpike::doors::llm
