#include "gateway/dialect_relay.h"

#include "common/clock.h"
#include "gateway/server_timing.h"
#include "providers/openai/stream_codec.h"

namespace turnpike::gateway {
namespace net = boost::asio;

namespace {
constexpr std::string_view kKeepAliveComment = ": keep-alive\n\n";

providers::EncoderOptions MakeEncoderOptions(const DialectRelayOptions& options) {
  providers::EncoderOptions encoder;
  encoder.created = UnixSeconds();
  encoder.include_usage = options.include_usage;
  return encoder;
}

Error Incomplete() {
  return Error{ErrorCode::kUpstreamBadResponse, "The upstream stream ended before it was complete.",
               ""};
}
}  // namespace

void DialectRelay::Tap::OnEvent(const providers::StreamEvent& event) {
  switch (event.kind) {
    case providers::EventKind::kTextDelta:
    case providers::EventKind::kToolCallStart:
    case providers::EventKind::kToolArgsDelta:
      saw_first_token = true;
      output_bytes += static_cast<int64_t>(event.text.size() + event.name.size());
      break;
    case providers::EventKind::kFinish:
      finish = event.finish;
      break;
    case providers::EventKind::kError:
      error = event.error->code;
      ended = true;
      break;
    case providers::EventKind::kEnd:
      ended = true;
      break;
    default:
      break;
  }
}

DialectRelay::DialectRelay(http::Exchange& exchange, upstream::Call& call,
                           pipeline::RequestContext& ctx, const DialectRelayOptions& options)
    : exchange_(exchange),
      call_(call),
      ctx_(ctx),
      options_(options),
      ndjson_(options.upstream->stream_framing() == providers::StreamFraming::kNdjson) {
  if (options_.translate) {
    translator_ = std::make_unique<providers::StreamTranslator>(
        options_.upstream->NewDecoder(), options_.client->NewEncoder(MakeEncoderOptions(options)));
  } else {
    decoder_ = options_.upstream->NewDecoder();
  }
}

net::awaitable<void> DialectRelay::Run() {
  exchange_.response_headers().Add("Cache-Control", "no-cache");
  if (options_.server_timing) {
    exchange_.response_headers().Add("Server-Timing",
                                     ServerTimingHeader(ctx_.phases, pipeline::Clock::now()));
  }
  const bool started = co_await exchange_.StartStream(200, "text/event-stream");
  ctx_.status = 200;
  ctx_.phases.client_head = exchange_.head_sent_at();
  if (!started) {
    ctx_.status = 499;
    call_.Cancel();
    co_return;
  }
  co_await Pump();
  Settle();
}

bool DialectRelay::Feed(std::string_view piece) {
  bool go_on = true;
  auto on_event = [this, &go_on](const stream::SseEvent& event) {
    if (!go_on) return;
    if (translator_) {
      Status translated = translator_->Translate(event, out_);
      if (!translated.ok()) {
        ctx_.error = translated.error().code;
        go_on = false;
      }
      return;
    }
    out_.append(event.raw);
    // A tap that cannot read an event does not stop the stream: the bytes are the upstream's
    // own, and the client judges them; only the accounting loses that event.
    if (event.has_data) static_cast<void>(decoder_->Decode(event, tap_));
  };
  Status fed = ndjson_ ? ndjson_parser_.Feed(piece, on_event) : sse_parser_.Feed(piece, on_event);
  if (!fed.ok()) {
    FailInto(fed.error());
    return false;
  }
  const bool first_token = translator_ ? translator_->saw_first_token() : tap_.saw_first_token;
  if (first_token && ctx_.phases.first_token == pipeline::Clock::time_point{}) {
    ctx_.phases.first_token = pipeline::Clock::now();
  }
  return go_on;
}

net::awaitable<void> DialectRelay::Pump() {
  for (;;) {
    Result<std::optional<std::string_view>> read =
        co_await call_.ReadSomeWithin(options_.keepalive);
    if (exchange_.client_gone()) {
      ctx_.status = 499;
      call_.Cancel();
      co_return;
    }
    if (!read.ok()) {
      co_await WriteFailure(read.error());
      co_return;
    }
    if (!read.value()) {
      if (!co_await exchange_.Write(kKeepAliveComment)) {
        ctx_.status = 499;
        call_.Cancel();
        co_return;
      }
      continue;
    }
    const std::string_view piece = *read.value();
    if (piece.empty()) break;
    const bool go_on = Feed(piece);
    if (!out_.empty()) {
      const bool written = co_await exchange_.Write(out_);
      out_.clear();
      if (!written) {
        ctx_.status = 499;
        call_.Cancel();
        co_return;
      }
    }
    if (!go_on) {
      call_.Cancel();
      co_await exchange_.EndStream();
      co_return;
    }
  }
  // The upstream body ended: a stream without its final event must not look complete.
  if (translator_) {
    if (!translator_->ended()) ctx_.error = ErrorCode::kUpstreamBadResponse;
    translator_->Finish(out_);
  } else if (!tap_.ended) {
    FailInto(Incomplete());
  }
  if (!out_.empty()) {
    const bool written = co_await exchange_.Write(out_);
    out_.clear();
    if (!written) {
      ctx_.status = 499;
      co_return;
    }
  }
  co_await exchange_.EndStream();
}

void DialectRelay::FailInto(const Error& error) {
  ctx_.error = error.code;
  if (translator_) {
    translator_->Fail(error, out_);
    return;
  }
  // Same dialect both ends: the client's encoder renders only the error event.
  std::unique_ptr<providers::StreamEncoder> encoder =
      options_.client->NewEncoder(MakeEncoderOptions(options_));
  encoder->set_output(out_);
  providers::StreamEvent event;
  event.kind = providers::EventKind::kError;
  event.error = &error;
  encoder->OnEvent(event);
  tap_.ended = true;
}

net::awaitable<void> DialectRelay::WriteFailure(const Error& error) {
  ctx_.status = 200;  // the client got a 200 head; the failure is in the stream and the log
  FailInto(error);
  const bool written = co_await exchange_.Write(out_);
  out_.clear();
  if (written) co_await exchange_.EndStream();
}

void DialectRelay::Settle() {
  const providers::TokenUsage& u = translator_ ? translator_->usage() : decoder_->usage();
  ctx_.usage = {u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_creation_tokens};
  ctx_.output_bytes = translator_ ? translator_->output_bytes() : tap_.output_bytes;
  const providers::FinishReason finish = translator_ ? translator_->finish() : tap_.finish;
  // An error event the upstream sent (or a translation failure) is the request's error.
  const std::optional<ErrorCode> error = translator_ ? translator_->error() : tap_.error;
  if (error && !ctx_.error) ctx_.error = *error;
  if (finish != providers::FinishReason::kNone) {
    ctx_.finish_reason = providers::openai::FinishReasonName(finish);
  }
}

}  // namespace turnpike::gateway
