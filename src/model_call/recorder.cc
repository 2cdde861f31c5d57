#include "model_call/recorder.h"

namespace turnpike::model_call {

void Recorder::OnStart(const AnswerStart& start) {
  // The form first: a reader that sees the head finds the form with it.
  if (start.identity && start.stream) {
    identity_form_ = recording_.AddForm({start.dialect, true});
  }
  recording_.Start(start);
}

void Recorder::OnEvent(const providers::StreamEvent& event) { recording_.AppendEvent(event); }

void Recorder::OnFrames(std::span<const IdentityFrame> frames) {
  if (identity_form_ == Recording::npos) return;
  recording_.AppendFrames(identity_form_, frames);
}

void Recorder::OnWhole(const WholeAnswer& answer) { recording_.SetWhole(answer); }

void Recorder::OnEnd(const Error* error) { recording_.Finish(error); }

}  // namespace turnpike::model_call
