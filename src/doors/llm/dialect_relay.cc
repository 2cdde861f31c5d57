#include "doors/llm/dialect_relay.h"

#include "common/clock.h"
#include "providers/openai/stream_codec.h"

namespace turnpike::doors::llm {
namespace {

providers::EncoderOptions MakeEncoderOptions(const DialectRelayOptions& options) {
  providers::EncoderOptions encoder;
  encoder.created = UnixSeconds();
  encoder.include_usage = options.include_usage;
  encoder.client_body = options.client_body;
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
    case providers::EventKind::kReasoningDelta:
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
                           core::RequestContext& ctx, const DialectRelayOptions& options)
    : RelayLoop(exchange, call, ctx, options.keepalive, options.server_timing),
      options_(options),
      ndjson_(options.upstream->stream_framing() == providers::StreamFraming::kNdjson) {
  if (options_.translate) {
    translator_ = std::make_unique<providers::StreamTranslator>(
        options_.upstream->NewDecoder(), options_.client->NewEncoder(MakeEncoderOptions(options)));
    translator_->set_fallback_model(options_.upstream_model);
  } else {
    decoder_ = options_.upstream->NewDecoder();
  }
}

RelayLoop::Output DialectRelay::Feed(std::string_view piece) {
  out_.clear();
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
    return {out_, false};
  }
  const bool first_token = translator_ ? translator_->saw_first_token() : tap_.saw_first_token;
  if (first_token && ctx_.phases.first_token == core::Clock::time_point{}) {
    ctx_.phases.first_token = core::Clock::now();
  }
  return {out_, go_on};
}

std::string_view DialectRelay::End() {
  out_.clear();
  // The upstream body ended: a stream without its final event must not look complete.
  if (translator_) {
    if (!translator_->ended()) ctx_.error = ErrorCode::kUpstreamBadResponse;
    translator_->Finish(out_);
  } else if (!tap_.ended) {
    FailInto(Incomplete());
  }
  return out_;
}

std::string_view DialectRelay::Fail(const Error& error) {
  out_.clear();
  FailInto(error);
  return out_;
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

void DialectRelay::Settle() {
  const providers::TokenUsage& u = translator_ ? translator_->usage() : decoder_->usage();
  ctx_.usage = {u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_creation_tokens,
                u.reasoning_tokens};
  ctx_.output_bytes = translator_ ? translator_->output_bytes() : tap_.output_bytes;
  const providers::FinishReason finish = translator_ ? translator_->finish() : tap_.finish;
  // An error event the upstream sent (or a translation failure) is the request's error.
  const std::optional<ErrorCode> error = translator_ ? translator_->error() : tap_.error;
  if (error && !ctx_.error) ctx_.error = *error;
  if (finish != providers::FinishReason::kNone) {
    ctx_.finish_reason = providers::openai::FinishReasonName(finish);
  }
}

}  // namespace turnpike::doors::llm
