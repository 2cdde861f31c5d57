// Recorder: the AnswerSink that writes one answer into a Recording (recording.h), for a cache
// entry or an agent's memory; and FormRecorder, how a client's encoder sink reports the bytes
// it rendered for its form.
//
// Recorder keeps the head, every pivot event, the whole answer and the end. On an identity
// stream it also keeps the upstream's frames as the frames of the form {start.dialect, stream}
// (they are that dialect's client bytes, with their FrameKind so that a usage-only chunk is
// replayed only to a client that asked for usage). It serves no client (serves_client() is
// false) and its Flush returns at once: it copies what it keeps and never slows the call.
//
// On an identity stream the Recorder records the form's frames itself: the client's sink reports
// none. A translated stream's frames come from the client's encoder sink, through a FormRecorder:
//   OnStart:                 FormRecorder frames(recording, {client_dialect, stream});
//   after encoding an event: frames.OnFrame(bytes_rendered_for_it)    (skip when empty)
//   client gone (Flush false, before the answer's end): frames.OnClose()
// Rules for that sink, which a Replay (replay.h) relies on:
//   - each OnFrame is the encoder's output for the events delivered so far (one element of the
//     recording: a replay sends it as it came);
//   - frames are reported no later than the Flush that follows their events, and every event
//     of a read is delivered to every sink before any sink's Flush (ModelCall's order), so a
//     form closed at a Flush renders exactly the events recorded so far;
//   - the in-stream error a sink renders at OnEnd is not reported: a replay renders it itself.
//
// Ownership: both borrow the recording, which must outlive them. Threads: the call's worker
// thread (the recording's single writer).
#pragma once

#include <cstddef>
#include <string_view>

#include "model_call/answer_sink.h"
#include "model_call/recording.h"

namespace turnpike::model_call {

class Recorder final : public AnswerSink {
 public:
  explicit Recorder(Recording& recording) : recording_(recording) {}

  void OnStart(const AnswerStart& start) override;
  void OnEvent(const providers::StreamEvent& event) override;
  void OnFrames(std::span<const IdentityFrame> frames) override;
  void OnWhole(const WholeAnswer& answer) override;
  void OnEnd(const Error* error) override;
  std::optional<bool> FlushAtOnce() override { return true; }  // it copied what it keeps
  bool serves_client() const override { return false; }
  // The events are what another form is rendered from, also on an identity stream.
  bool wants_events() const override { return true; }

  Recording& recording() { return recording_; }

 private:
  Recording& recording_;
  size_t identity_form_ = Recording::npos;
};

// What an encoder sink reports of the bytes it rendered for one form.
class FrameObserver {
 public:
  virtual ~FrameObserver() = default;
  // One frame: the encoder's output for the events delivered so far.
  virtual void OnFrame(std::string_view frame) = 0;
  // The encoder stops before the answer's end (its client left).
  virtual void OnClose() = 0;
};

// A FrameObserver recording one form's frames into a Recording.
class FormRecorder final : public FrameObserver {
 public:
  FormRecorder(Recording& recording, const Form& form)
      : recording_(recording), form_(recording.AddForm(form)) {}

  void OnFrame(std::string_view frame) override { recording_.AppendFrame(form_, frame); }
  void OnClose() override { recording_.CloseForm(form_); }

 private:
  Recording& recording_;
  const size_t form_;
};

}  // namespace turnpike::model_call
