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
  return encoder;
}

void ClientSink::OnStart(const model_call::AnswerStart& start) {
  start_ = start;
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
  encoder_->OnEvent(event);
}

void ClientSink::OnFrame(std::string_view frame, model_call::FrameKind kind) {
  // Dropped: the frames after it are no longer adjacent to `span_`.
  if (kind == model_call::FrameKind::kUsageOnly && options_.openai_chat &&
      !options_.include_usage) {
    return;
  }
  const bool adjacent = span_.empty() || span_.data() + span_.size() == frame.data();
  if (out_.empty() && adjacent) {
    span_ =
        std::string_view(span_.empty() ? frame.data() : span_.data(), span_.size() + frame.size());
    return;
  }
  out_.append(span_);
  span_ = {};
  out_.append(frame);
}

void ClientSink::OnWhole(const model_call::WholeAnswer& answer) {
  step_ = Step::kWhole;
  whole_status_ = answer.status;
  if (answer.response != nullptr) {
    providers::EncoderOptions render;
    render.created = UnixSeconds();
    render.client_body = options_.client_body;
    whole_body_ = options_.client->RenderWholeResponse(*answer.response, render);
    whole_type_ = kJson;
    return;
  }
  whole_type_ = answer.content_type;
  whole_storage_ = answer.storage;
}

void ClientSink::OnEnd(const Error* error) {
  if (!start_.stream) return;
  step_ = Step::kEnd;
  if (error == nullptr || ended_) return;
  ended_ = true;
  // The client dialect's in-stream error event, after this read's frames.
  if (!out_.empty() || !span_.empty()) {
    out_.insert(0, span_);
    span_ = {};
  }
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
  ctx_.status = 499;
  gone_ = true;
  step_ = Step::kDone;
  return false;
}

net::awaitable<bool> ClientSink::SendHead() {
  exchange_.response_headers().Add("Cache-Control", "no-cache");
  if (options_.server_timing) {
    exchange_.response_headers().Add("Server-Timing",
                                     ServerTimingHeader(ctx_.phases, core::Clock::now()));
  }
  const std::string_view content_type = "text/event-stream";
  const bool started = co_await exchange_.StartStream(200, content_type);
  ctx_.status = 200;
  ctx_.phases.client_head = exchange_.head_sent_at();
  step_ = Step::kBytes;
  co_return started ? true : Left();
}

net::awaitable<bool> ClientSink::SendEnd() {
  step_ = Step::kDone;
  const std::string_view bytes = out_.empty() ? span_ : std::string_view(out_);
  bool sent = true;
  if (!bytes.empty()) sent = co_await exchange_.Write(bytes);
  if (!sent) co_return Left();
  co_await exchange_.EndStream();
  co_return true;
}

net::awaitable<bool> ClientSink::Flush() {
  // The per-read bytes and a whole answer are written in this frame (once per read, once per
  // request: no nested coroutine); the head and the end go through their own, once a stream.
  bool kept = !gone_;
  if (step_ == Step::kBytes) {
    const std::string_view bytes = out_.empty() ? span_ : std::string_view(out_);
    if (!bytes.empty()) kept = co_await exchange_.Write(bytes);
    span_ = {};
    out_.clear();
    if (!kept) Left();
  } else if (step_ == Step::kWhole) {
    step_ = Step::kDone;
    std::string body =
        whole_storage_ != nullptr ? std::move(*whole_storage_) : std::move(whole_body_);
    const std::string_view content_type = whole_type_;
    co_await core_.Respond(exchange_, ctx_, whole_status_, content_type, std::move(body));
  } else if (step_ == Step::kHead) {
    kept = co_await SendHead();
  } else if (step_ == Step::kEnd) {
    kept = co_await SendEnd();
  }
  co_return kept;
}

net::awaitable<bool> ClientSink::Idle() {
  if (step_ != Step::kBytes) co_return true;
  const std::string_view comment = kKeepAliveComment;
  const bool sent = co_await exchange_.Write(comment);
  co_return sent ? true : Left();
}

}  // namespace turnpike::doors::llm
