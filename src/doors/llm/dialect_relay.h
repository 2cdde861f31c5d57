// Relays an upstream stream to a client whose API differs from the OpenAI identity path:
// either translated (the upstream's dialect decoded, the client's encoded) or forwarded byte
// for byte between two ends of the same non-OpenAI dialect (Anthropic to Anthropic), with the
// upstream's decoder run passively to learn usage and the first token.
//
//   translate:    upstream event -> StreamTranslator -> client bytes (one event at a time)
//   passthrough:  upstream event -> client, untouched; a copy of its view goes to the decoder
//
// The upstream's bytes are framed by its dialect's stream_framing(): SSE events, or NDJSON lines
// (each handed to the decoder as an SseEvent whose `data` is the line); the client always gets
// SSE. Complete events only; the loop (backpressure, keep-alive comments, a client that leaves)
// is RelayLoop's (relay_loop.h). An upstream failure mid-stream, or an end without the
// dialect's final event, becomes the client dialect's in-stream error event.
//
// The OpenAI identity path does not use this class: it keeps StreamRelay and its one-pass
// chunk scanner.
//
// Ownership: lives on ChatFlow's frame for one stream; borrows the exchange, the call, the
// context and the two providers (owned by the registry). Single-threaded.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "doors/llm/relay_loop.h"
#include "providers/provider.h"
#include "providers/translator.h"
#include "stream/ndjson_parser.h"
#include "stream/sse_parser.h"
#include "upstream/call.h"

namespace turnpike::doors::llm {

struct DialectRelayOptions {
  const providers::Provider* client = nullptr;    // the dialect the client speaks
  const providers::Provider* upstream = nullptr;  // the dialect the deployment speaks
  bool translate = true;         // false: same dialect both ends, bytes forwarded untouched
  bool include_usage = false;    // an OpenAI client asked for the usage chunk
  std::string_view client_body;  // the client's request (EncoderOptions::client_body)
  // The deployment's model, named to the client when the upstream's answer names none.
  std::string_view upstream_model;
  std::chrono::milliseconds keepalive{0};
  bool server_timing = false;
};

class DialectRelay final : public RelayLoop {
 public:
  DialectRelay(http::Exchange& exchange, upstream::Call& call, core::RequestContext& ctx,
               const DialectRelayOptions& options);

 private:
  // Collects what the passive decoder reports: the first token, the end, the output size.
  class Tap final : public providers::EventSink {
   public:
    void OnEvent(const providers::StreamEvent& event) override;
    providers::FinishReason finish = providers::FinishReason::kNone;
    std::optional<ErrorCode> error;
    bool saw_first_token = false;
    bool ended = false;
    int64_t output_bytes = 0;
  };

  // One read's events as client bytes; go_on false when a translation error went out.
  Output Feed(std::string_view piece) override;
  std::string_view End() override;
  std::string_view Fail(const Error& error) override;
  void Settle() override;
  // Appends the client dialect's error event to out_ and notes the error on the context.
  void FailInto(const Error& error);

  const DialectRelayOptions options_;
  // One of the two splitters is used, chosen once from the upstream's framing (no per-byte
  // dispatch); the other stays empty.
  const bool ndjson_;
  stream::SseParser sse_parser_;
  stream::NdjsonParser ndjson_parser_;
  std::unique_ptr<providers::StreamTranslator> translator_;  // translate mode
  std::unique_ptr<providers::StreamDecoder> decoder_;        // passthrough mode
  Tap tap_;
  std::string out_;  // client bytes of this read
};

}  // namespace turnpike::doors::llm
