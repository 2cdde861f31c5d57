// A streamed answer's delivery: the upstream's body read one piece at a time, framed by its
// dialect (SSE events, NDJSON lines), tapped, and handed to the call's sinks (answer_sink.h),
// each read's events or frames (one OnFrames per read) followed by one Flush of every sink
// before the next read. One loop in Run's frame flushes the head, every read and the end: a
// stream costs the pump one coroutine frame, however many reads it has.
//
//   identity, OpenAI chat wire  frames untouched; the tap is the one-pass chunk scanner
//                               (stream/chat_accumulator.h), which also names the usage-only
//                               chunk and counts the text without keeping it; a content-only
//                               event like the last one it scanned is taken before SSE framing
//                               (ConsumeEvent); pivot events only when a sink wants them (the
//                               openai decoder then runs beside the scanner, on framed events)
//   identity, another dialect   frames untouched; the dialect's decoder runs passively as the
//                               tap (usage, finish, first token); its events go to the sinks
//                               that want them
//   translated                  the dialect's decoder turns frames into pivot events for every
//                               sink; a Start event naming no model names the deployment's
//
// The end: an upstream read failure, a frame the dialect cannot read, or a stream that ends
// without its final event (not checked on the OpenAI identity wire, whose clients judge its
// [DONE]) ends the answer with that error; a final event ends it complete. After an end or an
// error event nothing more is delivered. Settle (always, also when the consumer left) puts the
// usage, finish, output size and error on the request context.
//
// Frames lie in the upstream call's read buffer, valid until the next read: exactly the
// lifetime answer_sink.h promises. The one frame per read that the parser completes from its
// buffered tail is copied into `tail_frame_` so that it lives as long. A read's frames are
// listed in `frames_` (inline for the usual reads) and handed over once the read is framed.
//
// Ownership: a member of the ModelCall, made by its Run for one stream; borrows the call, the
// upstream exchange and the dialect. Single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/container/small_vector.hpp>
#include <memory>
#include <optional>
#include <string>

#include "model_call/answer_sink.h"
#include "providers/provider.h"
#include "stream/chat_accumulator.h"
#include "stream/ndjson_parser.h"
#include "stream/sse_parser.h"

namespace turnpike::upstream {
class Call;
}  // namespace turnpike::upstream

namespace turnpike::model_call {

class ModelCall;

class StreamPump final : private providers::EventSink {
 public:
  StreamPump(ModelCall& call, upstream::Call& upstream, const providers::Provider& dialect,
             bool identity);

  boost::asio::awaitable<void> Run();

 private:
  enum class Mode : uint8_t { kOpenAiIdentity, kIdentity, kTranslated };

  // One read's frames and events to the sinks; an error when the stream cannot go on.
  Status Feed(std::string_view piece);
  // One framed event: decoded (translated), or tapped and listed in frames_ (identity). Inlined
  // into the parser's loop in Feed (it runs once per frame).
  [[gnu::always_inline]] inline void OnFrame(const stream::SseEvent& event, std::string_view piece);
  // The decoder's events: tapped, then forwarded (translated, or to the sinks that want them).
  void OnEvent(const providers::StreamEvent& event) override;
  // Ends the answer for every sink (error: what cut it); Run's loop flushes them once more.
  void End(const Error* error);
  // No sink serves a client any more: the upstream exchange is cancelled, and the sinks left
  // (serving no client) get OnEnd with that error, without a last Flush.
  void Leave();
  void Settle();
  bool first_token() const;

  ModelCall& call_;
  upstream::Call& upstream_;
  const providers::Provider& dialect_;
  const Mode mode_;
  const bool ndjson_;
  bool events_ = false;  // pivot events go to the sinks (translated, or wanted)
  stream::SseParser sse_parser_;
  stream::NdjsonParser ndjson_parser_;
  // kOpenAiIdentity: the tap, which counts the text without keeping it.
  stream::ChatAccumulator accumulator_{stream::ChatAccumulator::kDefaultMaxContentBytes,
                                       stream::ChatAccumulator::Text::kCount};
  std::unique_ptr<providers::StreamDecoder> decoder_;         // the others, or wanted events
  std::string fallback_model_;                                // escaped; kTranslated
  std::string tail_frame_;                                    // see the top of this file
  boost::container::small_vector<IdentityFrame, 32> frames_;  // this read's, identity
  std::optional<Error> failed_;                               // a decode failure in this read

  // The tap.
  providers::FinishReason finish_ = providers::FinishReason::kNone;
  std::optional<ErrorCode> error_;
  int64_t output_bytes_ = 0;
  bool saw_first_token_ = false;
  bool ended_ = false;  // an end or error event was delivered
};

}  // namespace turnpike::model_call
