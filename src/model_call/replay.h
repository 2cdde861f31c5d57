// Replay: a Recording (recording.h) rendered in one client form, at the reader's pace: what is
// recorded so far, then more as it is recorded. The one way to serve a recorded answer: a
// follower of a call in flight (fan_out.h) and a cache hit on a complete recording use it alike.
//
// How a form is served:
//   stream, form recorded   exactly the recorded frames, one element each (a usage-only frame
//                           only when the client asked for usage: EncoderOptions::include_usage).
//                           When the frames stop before the end (the form was closed: its
//                           client left), the replay's own encoder is first fed the events
//                           those frames render, its output dropped, and renders the rest
//   stream, other form      the events through its own encoder (Provider::NewEncoder), one
//                           frame per event that renders anything
//   stream, of a whole one  once the whole answer is recorded: its Response (a translated
//                           answer's, or identity bytes of the same dialect read by the
//                           client Provider's ParseResponse) sent as a stream's events
//                           (providers/response_events.h) through its own encoder, one frame
//                           per event that renders anything. Identity bytes with a non-2xx
//                           status, or that ParseResponse refuses, end at once with its error
//                           (ParseError's, ParseResponse's), with no frame
//   whole                   the recorded whole frame of that form; else identity bytes of the
//                           same dialect; else the Response through RenderWholeResponse
//   whole, of a streamed one  once the recording is complete: its events collected into a
//                           Response (providers/response_events.h), rendered by
//                           RenderWholeResponse; steps with no frames while in flight. An
//                           identity stream recorded without events, in the client's own
//                           dialect: its recorded frames decoded by that dialect's decoder
//                           first (the fan-out records no events: fan_out.h)
//   cannot be rendered      ends at once with kUnavailable: another dialect of identity bytes
//                           recorded without events (an identity stream whose recorder did not
//                           want events, an identity whole answer); the whole form of an
//                           identity stream recorded without events in another dialect; a form
//                           that needs a Provider (or its encoder) when there is none; the
//                           whole form of events whose strings are not valid JSON text
// A stream form chosen at the first read that sees an event (or the end), so that the client
// sink's form, registered at OnStart, is found.
//
// Ends: a complete recording ends with `error` null. A failed one ends with its error; a
// stream form also gets the dialect's in-stream error frame (a kError event through the
// encoder) unless the recorded events already end in one. A truncated recording ends where it
// stops, with kUnavailable (and the error frame). A whole form's error gets no frame: the
// caller answers with its dialect's error (Provider::RenderError).
//
// Ownership: borrows the recording (keep it alive) and the provider; owns its encoder and its
// output (for the stream of a whole answer, every frame of it, rendered at once). Threads: one
// reader thread at a time, safe while the recording's writer runs on another. Not movable (the
// encoder points into its output).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_call/recording.h"
#include "providers/provider.h"

namespace turnpike::model_call {

struct ReplayOptions {
  Form form;  // the client's dialect (its string outlives the replay) and form
  // The client's dialect, for what must be encoded or rendered; may be null when the form is
  // recorded (then a form that must be encoded ends with kUnavailable).
  const providers::Provider* provider = nullptr;
  providers::EncoderOptions encoder;  // for that encoder or RenderWholeResponse
};

struct ReplayStep {
  std::span<const std::string_view> frames;  // in order; views valid until the next Next()
  bool end = false;
  const Error* error = nullptr;  // end: why the answer was cut; null when complete
  bool drained = false;          // took everything recorded when this step began
  size_t recorded_bytes = 0;     // the recording's size when this step began
};

class Replay {
 public:
  Replay(const Recording& recording, ReplayOptions options);
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // The next frames: at least one when any is recorded, and no more once about `max_bytes`
  // are taken (a frame is never split). Empty and not `end`: nothing new yet. After `end`,
  // every call returns the same end with no frames.
  ReplayStep Next(size_t max_bytes);

 private:
  enum class Mode {
    kUndecided,
    kFrames,           // a recorded stream form
    kEncode,           // a stream's events through the encoder
    kWhole,            // a whole answer, whole
    kWholeFromEvents,  // a stream, whole
    kStreamFromWhole,  // a whole answer, as a stream
    kEnded
  };

  void Decide(const RecordingProgress& progress);
  void TakeFrames(const RecordingProgress& progress, size_t max_bytes);
  void Encode(const RecordingProgress& progress, size_t max_bytes);
  void RenderWhole(const RecordingProgress& progress);
  void RenderWholeFromEvents(const RecordingProgress& progress);
  void StreamFromWhole(const RecordingProgress& progress, size_t max_bytes);
  // The whole answer's Response as a stream's frames into synthesized_; false when it ended.
  bool Synthesize();
  // Feeds the events [next_event_, upto) to the encoder, its output dropped.
  bool Prime(size_t upto);
  bool MakeEncoder();
  void Emit(size_t from);  // the encoder's output since `from` as one frame
  void End(const Error* error, bool error_frame);
  void Unavailable(std::string message, bool error_frame);

  const Recording& recording_;
  const ReplayOptions options_;
  std::unique_ptr<providers::StreamEncoder> encoder_;
  // The frames of decode_form_ through the client dialect's decoder into `sink`.
  Status DecodeFrames(providers::EventSink& sink) const;
  Mode mode_ = Mode::kUndecided;
  size_t form_ = Recording::npos;
  // A whole form of an identity stream recorded without events: the identity form whose frames
  // are decoded at the end (DecodeFrames).
  size_t decode_form_ = Recording::npos;
  size_t next_frame_ = 0;
  size_t next_event_ = 0;
  providers::EventKind last_kind_ = providers::EventKind::kStart;
  bool seen_event_ = false;
  size_t taken_ = 0;   // bytes handed out in the current step
  bool more_ = false;  // the current step stopped at its budget

  // The current step: recorded frames are views into the recording, synthesized ones into
  // synthesized_, encoded ones ranges of out_.
  std::string out_;
  std::string dropped_;  // Prime's output
  // kStreamFromWhole: every frame, rendered at once, and their ranges (next_frame_ counts them).
  std::string synthesized_;
  std::vector<std::pair<size_t, size_t>> synthesized_frames_;
  bool synthesized_done_ = false;
  struct Piece {
    std::string_view view;      // set: a recorded or synthesized frame
    size_t begin = 0, end = 0;  // else: a range of out_
  };
  std::vector<Piece> pieces_;
  std::vector<std::string_view> frames_;
  const Error* end_error_ = nullptr;
  Error own_error_;
};

}  // namespace turnpike::model_call
