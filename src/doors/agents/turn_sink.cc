#include "doors/agents/turn_sink.h"

#include "providers/response_events.h"

namespace turnpike::agents {
namespace net = boost::asio;
using providers::EventKind;

TurnSink::TurnSink(http::Exchange* exchange, core::RequestContext& ctx,
                   providers::openai_responses::ResponsesStreamEncoder& encoder, Delivery delivery,
                   EventLog* log)
    : exchange_(exchange),
      ctx_(ctx),
      encoder_(encoder),
      delivery_(delivery),
      stream_(delivery != Delivery::kWhole),
      log_(log) {
  encoder_.set_output(out_);
}

net::awaitable<bool> TurnSink::Open(const providers::StreamEvent& start) {
  encoder_.OnEvent(start);
  if (!stream_) {
    out_.clear();
    co_return true;
  }
  if (delivery_ == Delivery::kLog) {
    const size_t logged = out_.size();
    const bool sent = co_await Send(logged);
    co_return sent;
  }
  const bool started = co_await exchange_->StartStream(200, "text/event-stream");
  ctx_.status = 200;
  ctx_.phases.client_head = exchange_->head_sent_at();
  if (!started) {
    left_ = true;
    co_return false;
  }
  const size_t bytes = out_.size();
  const bool sent = co_await Send(bytes);
  co_return sent;
}

void TurnSink::OnEvent(const providers::StreamEvent& event) {
  switch (event.kind) {
    case EventKind::kStart: {
      // The turn started the answer itself (Open); the upstream's start adds only its counts.
      if (!event.usage.present()) return;
      providers::StreamEvent usage;
      usage.kind = EventKind::kUsage;
      usage.usage = event.usage;
      encoder_.OnEvent(usage);
      return;
    }
    case EventKind::kTextDelta:
    case EventKind::kToolArgsDelta:
      ctx_.output_bytes += static_cast<int64_t>(event.text.size());
      [[fallthrough]];
    case EventKind::kToolCallStart:
      if (ctx_.phases.first_token == core::Clock::time_point{}) {
        ctx_.phases.first_token = core::Clock::now();
      }
      break;
    case EventKind::kEnd:
    case EventKind::kError:
      if (held_ == std::string::npos) held_ = out_.size();
      if (before_end_) {
        before_end_();
        before_end_ = nullptr;
      }
      break;
    default:
      break;
  }
  encoder_.OnEvent(event);
}

void TurnSink::OnWhole(const model_call::WholeAnswer& answer) {
  // An upstream that answered a streamed request whole: the same events, at once.
  struct Forward final : providers::EventSink {
    explicit Forward(TurnSink& sink) : sink(sink) {}
    void OnEvent(const providers::StreamEvent& event) override { sink.OnEvent(event); }
    TurnSink& sink;
  };
  Forward forward(*this);
  if (answer.response != nullptr) providers::EmitResponseEvents(*answer.response, forward);
}

net::awaitable<bool> TurnSink::Send(size_t bytes) {
  if (bytes == 0) co_return true;
  if (delivery_ == Delivery::kLog) {
    log_->Append(std::string_view(out_).substr(0, bytes));
    out_.erase(0, bytes);
    if (held_ != std::string::npos) held_ -= bytes;
    co_return true;
  }
  const bool sent = co_await exchange_->Write(std::string_view(out_).substr(0, bytes));
  out_.erase(0, bytes);
  if (held_ != std::string::npos) held_ -= bytes;
  if (!sent) left_ = true;
  co_return sent;
}

net::awaitable<bool> TurnSink::Flush() {
  if (left_) co_return false;
  if (!stream_) {
    out_.clear();
    co_return true;
  }
  const size_t bytes = held_ == std::string::npos ? out_.size() : held_;
  const bool sent = co_await Send(bytes);
  co_return sent;
}

net::awaitable<bool> TurnSink::Idle() {
  if (delivery_ != Delivery::kClient || left_) co_return !left_;
  const bool sent = co_await exchange_->Write(": keep-alive\n\n");
  if (!sent) left_ = true;
  co_return sent;
}

void TurnSink::OnEnd(const Error* error) {
  if (error == nullptr || encoder_.done()) return;
  providers::StreamEvent failed;
  failed.kind = EventKind::kError;
  failed.error = error;
  OnEvent(failed);
}

net::awaitable<void> TurnSink::Close() {
  held_ = std::string::npos;
  if (!stream_ || left_) co_return;
  // Awaited values are named (GCC 12 mishandles a co_await inside a condition).
  const size_t bytes = out_.size();
  const bool sent = co_await Send(bytes);
  if (!sent) co_return;
  if (delivery_ == Delivery::kLog) {
    log_->Finish();
    co_return;
  }
  const bool ended = co_await exchange_->EndStream();
  if (!ended) left_ = true;
  co_return;
}

}  // namespace turnpike::agents
