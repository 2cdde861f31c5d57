// StreamTranslator: one stream's decoder (upstream dialect) and encoder (client dialect) glued
// together, fed one complete SSE event at a time by the relay's stream::SseParser.
//
//   translator.Translate(event, out);   // for each upstream SSE event
//   translator.Finish(out);             // at upstream EOF
//
// Nothing is buffered beyond what one event's translation needs: each call appends the client
// bytes for that event to `out` at once (an encoder may hold back the few fields a later
// event completes, such as OpenAI's finish reason waiting for its usage chunk).
//
// Ownership: owns its decoder and encoder. Thread safety: none; one per stream, on the worker
// owning the stream. Errors: a decode error is rendered to the client as the client dialect's
// in-stream error event and returned; after it, or after the stream ended, later calls add
// nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "providers/provider.h"
#include "stream/sse_parser.h"

namespace turnpike::providers {

class StreamTranslator : private EventSink {
 public:
  StreamTranslator(std::unique_ptr<StreamDecoder> decoder, std::unique_ptr<StreamEncoder> encoder);

  // Translates one upstream SSE event, appending the client's bytes to `out`.
  Status Translate(const stream::SseEvent& event, std::string& out);

  // The upstream body ended. A stream that did not end properly (no end or error event) gets
  // an in-stream error (kUpstreamBadResponse) so the client never mistakes it for complete.
  void Finish(std::string& out);

  // Ends the stream with `error` (e.g. the upstream read failed), in the client's dialect.
  void Fail(const Error& error, std::string& out);

  // The model the answer names when the upstream's names none (Cohere's answers do not):
  // given as configured, escaped once here. Call before the first Translate.
  void set_fallback_model(std::string_view model);

  // Usage reported by the upstream so far, in the common convention.
  const TokenUsage& usage() const { return decoder_->usage(); }
  FinishReason finish() const { return finish_; }
  bool saw_first_token() const { return saw_first_token_; }
  // Text, tool name and tool argument bytes (escaped) decoded so far: what the gateway prices
  // a stream by when the upstream reported no usage (a client that left early).
  int64_t output_bytes() const { return output_bytes_; }
  bool ended() const { return ended_; }
  // The code of the error event that ended the stream (upstream's, or a decode failure).
  std::optional<ErrorCode> error() const { return error_; }

 private:
  void OnEvent(const StreamEvent& event) override;

  std::unique_ptr<StreamDecoder> decoder_;
  std::unique_ptr<StreamEncoder> encoder_;
  std::string fallback_model_;  // escaped; empty = none
  FinishReason finish_ = FinishReason::kNone;
  int64_t output_bytes_ = 0;
  std::optional<ErrorCode> error_;
  bool saw_first_token_ = false;
  bool ended_ = false;  // an end or error event went to the client
};

}  // namespace turnpike::providers
