#include "model_call/stream_pump.h"

#include "common/json_escape.h"
#include "model_call/model_call.h"
#include "providers/openai/stream_codec.h"

namespace turnpike::model_call {
namespace net = boost::asio;

namespace {
bool Contains(std::string_view outer, std::string_view inner) {
  const auto begin = reinterpret_cast<uintptr_t>(outer.data());
  const auto at = reinterpret_cast<uintptr_t>(inner.data());
  return at >= begin && at + inner.size() <= begin + outer.size();
}

Error Incomplete() {
  return Error{ErrorCode::kUpstreamBadResponse, "The upstream stream ended before it was complete.",
               ""};
}

FrameKind KindOf(stream::ChunkKind kind) {
  return kind == stream::ChunkKind::kUsageOnly ? FrameKind::kUsageOnly : FrameKind::kData;
}
}  // namespace

StreamPump::StreamPump(ModelCall& call, upstream::Call& upstream,
                       const providers::Provider& dialect, bool identity)
    : call_(call),
      upstream_(upstream),
      dialect_(dialect),
      mode_(!identity                    ? Mode::kTranslated
            : dialect.name() == "openai" ? Mode::kOpenAiIdentity
                                         : Mode::kIdentity),
      ndjson_(dialect.stream_framing() == providers::StreamFraming::kNdjson) {
  bool wanted = false;
  for (const AnswerSink* sink : call_.sinks_) wanted = wanted || sink->wants_events();
  events_ = mode_ == Mode::kTranslated || wanted;
  if (mode_ != Mode::kOpenAiIdentity || wanted) decoder_ = dialect_.NewDecoder();
  if (mode_ == Mode::kTranslated && call_.target_ != nullptr) {
    AppendJsonEscaped(fallback_model_, call_.target_->upstream_model);
  }
}

bool StreamPump::first_token() const {
  return mode_ == Mode::kOpenAiIdentity ? accumulator_.saw_first_token() : saw_first_token_;
}

net::awaitable<void> StreamPump::Run() {
  AnswerStart start;
  start.stream = true;
  start.identity = mode_ != Mode::kTranslated;
  start.events = events_;
  start.status = upstream_.status();
  start.dialect = dialect_.name();
  start.content_type = upstream_.content_type();
  if (call_.target_ != nullptr) start.upstream_model = call_.target_->upstream_model;
  for (AnswerSink* sink : call_.sinks_) sink->OnStart(start);
  const std::chrono::milliseconds keepalive = call_.deps_.keepalive;
  bool idle = false;  // the upstream was silent for `keepalive`: Idle instead of Flush
  bool over = false;  // OnEnd went out: this is the last Flush
  for (;;) {
    // Every sink's Flush (of the head, a read, or the end) or Idle, in this frame.
    for (size_t i = 0; i < call_.sinks_.size();) {
      AnswerSink* sink = call_.sinks_[i];
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
      call_.Drop(i);
    }
    if (over) break;
    if (!call_.ServesClient()) {
      Leave();
      co_return;
    }
    // A piece that needs no wait is taken without ReadSomeWithin's coroutine.
    std::optional<Result<std::optional<std::string_view>>> now = upstream_.ReadSomeNow();
    if (!now) {
      Result<std::optional<std::string_view>> waited = co_await upstream_.ReadSomeWithin(keepalive);
      now.emplace(std::move(waited));
    }
    Result<std::optional<std::string_view>>& read = *now;
    if (!call_.ServesClient()) {
      Leave();
      co_return;
    }
    over = true;  // unless the read goes on below
    idle = false;
    if (!read.ok()) {
      call_.ctx_.error = read.error().code;
      const Error error = read.error();
      End(&error);
      continue;
    }
    if (!read.value()) {
      idle = true;
      over = false;
      continue;
    }
    const std::string_view piece = *read.value();
    if (piece.empty()) {  // the body's end
      if (mode_ != Mode::kOpenAiIdentity && !ended_) {
        call_.ctx_.error = ErrorCode::kUpstreamBadResponse;
        const Error incomplete = Incomplete();
        End(&incomplete);
      } else {
        End(nullptr);
      }
      continue;
    }
    Status fed = Feed(piece);
    if (first_token() && call_.ctx_.phases.first_token == core::Clock::time_point{}) {
      call_.ctx_.phases.first_token = core::Clock::now();
    }
    if (!fed.ok()) {
      call_.ctx_.error = fed.error().code;
      upstream_.Cancel();
      const Error error = fed.error();
      End(&error);
      continue;
    }
    over = false;
  }
  Settle();
}

void StreamPump::OnFrame(const stream::SseEvent& event, std::string_view piece) {
  if (failed_ || (ended_ && mode_ == Mode::kTranslated)) return;
  if (mode_ == Mode::kTranslated) {
    Status decoded = decoder_->Decode(event, *this);
    if (!decoded.ok()) failed_ = decoded.error();
    return;
  }
  // Identity: the tap first (it names the frame's kind), events before their frame.
  FrameKind kind = event.has_data ? FrameKind::kData : FrameKind::kOther;
  if (mode_ == Mode::kOpenAiIdentity && event.has_data) {
    kind = KindOf(accumulator_.Consume(event.data));
  }
  // A tap that cannot read an event does not stop the stream: the bytes are the upstream's
  // own, and the client judges them; only the accounting (and a recorder) loses that event.
  if (decoder_ && event.has_data) static_cast<void>(decoder_->Decode(event, *this));
  std::string_view frame = event.raw;
  if (!Contains(piece, frame)) {
    tail_frame_.assign(frame);
    frame = tail_frame_;
  }
  frames_.push_back({frame, kind});
}

Status StreamPump::Feed(std::string_view piece) {
  tail_frame_.clear();
  failed_.reset();
  auto on_event = [this, piece](const stream::SseEvent& event) { OnFrame(event, piece); };
  // A dialect's usual event, taken whole before framing (stream::SseParser's `take`): on the
  // OpenAI identity wire by the tap (without a decoder: one that runs beside it needs every
  // event framed), translated by the decoder.
  auto tap_takes = [this](std::string_view rest) {
    const stream::ChatAccumulator::TakenEvent taken = accumulator_.ConsumeEvent(rest);
    if (taken.size != 0) frames_.push_back({rest.substr(0, taken.size), KindOf(taken.kind)});
    return taken.size;
  };
  auto decoder_takes = [this](std::string_view rest) {
    return failed_ || ended_ ? size_t{0} : decoder_->DecodeFramed(rest, *this);
  };
  Status fed = ndjson_                      ? ndjson_parser_.Feed(piece, on_event)
               : mode_ == Mode::kTranslated ? sse_parser_.Feed(piece, on_event, decoder_takes)
               : mode_ == Mode::kOpenAiIdentity && !decoder_
                   ? sse_parser_.Feed(piece, on_event, tap_takes)
                   : sse_parser_.Feed(piece, on_event);
  // The frames framed before a failure go out too, ahead of the end it causes.
  if (!frames_.empty()) {
    for (AnswerSink* sink : call_.sinks_) sink->OnFrames(frames_);
    frames_.clear();
  }
  if (!fed.ok()) return fed;
  if (failed_) return *failed_;
  return Ok{};
}

void StreamPump::OnEvent(const providers::StreamEvent& event) {
  if (ended_) return;
  switch (event.kind) {
    case providers::EventKind::kTextDelta:
    case providers::EventKind::kToolCallStart:
    case providers::EventKind::kToolArgsDelta:
    case providers::EventKind::kReasoningDelta:
      saw_first_token_ = true;
      output_bytes_ += static_cast<int64_t>(event.text.size() + event.name.size());
      break;
    case providers::EventKind::kFinish:
      finish_ = event.finish;
      break;
    case providers::EventKind::kError:
      error_ = event.error->code;
      ended_ = true;
      break;
    case providers::EventKind::kEnd:
      ended_ = true;
      break;
    default:
      break;
  }
  if (!events_) return;
  if (event.kind == providers::EventKind::kStart && event.model.empty() &&
      !fallback_model_.empty()) {
    providers::StreamEvent named = event;
    named.model = fallback_model_;
    for (AnswerSink* sink : call_.sinks_) sink->OnEvent(named);
    return;
  }
  for (AnswerSink* sink : call_.sinks_) sink->OnEvent(event);
}

void StreamPump::End(const Error* error) {
  // A translated answer that already ended (its end or error event went out) stays as it was.
  if (mode_ == Mode::kTranslated && ended_) error = nullptr;
  for (AnswerSink* sink : call_.sinks_) sink->OnEnd(error);
}

void StreamPump::Leave() {
  call_.ctx_.status = 499;
  upstream_.Cancel();
  // The sinks that serve no client (a recorder) learn that the answer is not complete.
  const Error cut{ErrorCode::kUpstreamUnavailable,
                  "The call ended early: no client was left to serve.", ""};
  for (AnswerSink* sink : call_.sinks_) {
    if (sink != call_.leader_) sink->OnEnd(&cut);
  }
  Settle();
}

void StreamPump::Settle() {
  core::RequestContext& ctx = call_.ctx_;
  if (mode_ == Mode::kOpenAiIdentity) {
    const stream::Usage& usage = accumulator_.usage();
    ctx.usage = {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, -1,
                 usage.reasoning_tokens};
    if (!accumulator_.choices().empty()) {
      ctx.finish_reason = accumulator_.choices().front().finish_reason;
    }
    ctx.output_bytes = accumulator_.output_bytes();
    return;
  }
  const providers::TokenUsage& u = decoder_->usage();
  ctx.usage = {u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_creation_tokens,
               u.reasoning_tokens};
  ctx.output_bytes = output_bytes_;
  // An error event the upstream sent (or a translation failure) is the request's error.
  if (error_ && !ctx.error) ctx.error = *error_;
  if (finish_ != providers::FinishReason::kNone) {
    ctx.finish_reason = providers::openai::FinishReasonName(finish_);
  }
}

}  // namespace turnpike::model_call
