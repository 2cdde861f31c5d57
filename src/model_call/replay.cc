#include "model_call/replay.h"

#include <algorithm>
#include <array>
#include <optional>

#include "providers/response_events.h"
#include "stream/ndjson_parser.h"
#include "stream/sse_parser.h"

namespace turnpike::model_call {

namespace {

constexpr size_t kBatch = 32;

bool IsFinal(providers::EventKind kind) {
  return kind == providers::EventKind::kError || kind == providers::EventKind::kEnd;
}

// Feeds events to an encoder and notes the range of its output each one rendered.
class FrameCutter final : public providers::EventSink {
 public:
  FrameCutter(providers::StreamEncoder& encoder, const std::string& out,
              std::vector<std::pair<size_t, size_t>>& frames)
      : encoder_(encoder), out_(out), frames_(frames) {}

  void OnEvent(const providers::StreamEvent& event) override {
    const size_t from = out_.size();
    encoder_.OnEvent(event);
    if (out_.size() > from) frames_.emplace_back(from, out_.size());
  }

 private:
  providers::StreamEncoder& encoder_;
  const std::string& out_;
  std::vector<std::pair<size_t, size_t>>& frames_;
};

}  // namespace

Replay::Replay(const Recording& recording, ReplayOptions options)
    : recording_(recording), options_(options) {
  // A typical answer's frames in one step without a reallocation per doubling.
  pieces_.reserve(kBatch);
  frames_.reserve(kBatch);
}

Replay::~Replay() = default;

ReplayStep Replay::Next(size_t max_bytes) {
  out_.clear();
  pieces_.clear();
  frames_.clear();
  taken_ = 0;
  more_ = false;
  ReplayStep step;
  if (mode_ != Mode::kEnded) {
    const RecordingProgress progress = recording_.progress();
    step.recorded_bytes = progress.bytes;
    if (mode_ == Mode::kUndecided) Decide(progress);
    switch (mode_) {
      case Mode::kWhole:
        RenderWhole(progress);
        break;
      case Mode::kWholeFromEvents:
        RenderWholeFromEvents(progress);
        break;
      case Mode::kStreamFromWhole:
        StreamFromWhole(progress, max_bytes);
        break;
      case Mode::kFrames:
        TakeFrames(progress, max_bytes);
        if (mode_ == Mode::kEncode) Encode(progress, max_bytes);
        break;
      case Mode::kEncode:
        Encode(progress, max_bytes);
        break;
      case Mode::kUndecided:
      case Mode::kEnded:
        break;
    }
  }
  for (const Piece& piece : pieces_) {
    frames_.push_back(piece.view.data() != nullptr
                          ? piece.view
                          : std::string_view(out_).substr(piece.begin, piece.end - piece.begin));
  }
  step.frames = frames_;
  step.end = mode_ == Mode::kEnded;
  step.error = end_error_;
  step.drained = !more_;
  return step;
}

void Replay::Decide(const RecordingProgress& progress) {
  if (!progress.started) {
    if (progress.state == RecordingState::kInFlight) return;
    if (progress.error != nullptr) return End(progress.error, false);
    return Unavailable("the call ended before its answer started", false);
  }
  const AnswerStart& start = recording_.start();
  if (!start.stream) {
    mode_ = options_.form.stream ? Mode::kStreamFromWhole : Mode::kWhole;
    return;
  }
  if (!options_.form.stream) {
    if (start.identity && !start.events) {
      // The client's own dialect: its events are decoded from the recorded frames at the end.
      if (options_.provider != nullptr && options_.provider->name() == start.dialect) {
        decode_form_ = recording_.FindForm(Form{start.dialect, true});
      }
      if (decode_form_ == Recording::npos) {
        return Unavailable("a streamed answer recorded without events cannot be rendered whole",
                           false);
      }
    }
    mode_ = Mode::kWholeFromEvents;
    return;
  }
  form_ = recording_.FindForm(options_.form);
  if (form_ != Recording::npos) {
    mode_ = Mode::kFrames;
    return;
  }
  if (start.identity && !start.events) {
    return Unavailable("the answer was recorded without events for another dialect", false);
  }
  // The form's sink registers it at OnStart; wait for the first event to be sure it is not
  // coming.
  if (progress.events == 0 && progress.state == RecordingState::kInFlight) return;
  mode_ = Mode::kEncode;
}

void Replay::TakeFrames(const RecordingProgress& progress, size_t max_bytes) {
  const FormProgress form = recording_.form_progress(form_);
  std::array<RecordedFrame, kBatch> batch;
  while (next_frame_ < form.frames) {
    const size_t want = std::min(kBatch, form.frames - next_frame_);
    const size_t count = recording_.CopyFrames(form_, next_frame_, std::span(batch).first(want));
    for (size_t i = 0; i < count; ++i) {
      if (taken_ >= max_bytes) {
        more_ = true;
        return;
      }
      ++next_frame_;
      if (batch[i].kind == FrameKind::kUsageOnly && !options_.encoder.include_usage) continue;
      pieces_.push_back({batch[i].bytes});
      taken_ += batch[i].bytes.size();
    }
  }
  // Every frame recorded so far is taken.
  if (form.closed) {
    if (Prime(form.events_covered)) mode_ = Mode::kEncode;
    return;
  }
  const bool ended = progress.state != RecordingState::kInFlight || progress.truncated;
  if (!ended) return;
  if (progress.state == RecordingState::kComplete && !progress.truncated)
    return End(nullptr, false);
  // Failed or truncated: the error frame comes from an encoder that has seen every event.
  if (options_.provider == nullptr) {
    if (progress.truncated) return Unavailable("the answer was larger than its recording", false);
    return End(progress.error, false);
  }
  if (Prime(progress.events)) mode_ = Mode::kEncode;
}

void Replay::Encode(const RecordingProgress& progress, size_t max_bytes) {
  if (encoder_ == nullptr && !MakeEncoder()) return;
  std::array<providers::StreamEvent, kBatch> batch;
  while (next_event_ < progress.events) {
    const size_t want = std::min(kBatch, progress.events - next_event_);
    const size_t count = recording_.CopyEvents(next_event_, std::span(batch).first(want));
    for (size_t i = 0; i < count; ++i) {
      if (taken_ >= max_bytes) {
        more_ = true;
        return;
      }
      const size_t from = out_.size();
      encoder_->OnEvent(batch[i]);
      last_kind_ = batch[i].kind;
      seen_event_ = true;
      ++next_event_;
      Emit(from);
    }
  }
  if (progress.truncated) return Unavailable("the answer was larger than its recording", true);
  if (progress.state == RecordingState::kComplete) return End(nullptr, false);
  if (progress.state == RecordingState::kFailed) return End(progress.error, true);
}

void Replay::RenderWhole(const RecordingProgress& progress) {
  if (progress.truncated) return Unavailable("the answer was larger than its recording", false);
  if (!progress.whole) {
    if (progress.state == RecordingState::kInFlight) return;
    if (progress.error != nullptr) return End(progress.error, false);
    return Unavailable("the call ended without a whole answer", false);
  }
  const WholeAnswer& whole = recording_.whole();
  const size_t form = recording_.FindForm(options_.form);
  const size_t frames = form == Recording::npos ? 0 : recording_.form_progress(form).frames;
  if (frames > 0) {
    std::vector<RecordedFrame> recorded(frames);
    const size_t count = recording_.CopyFrames(form, 0, recorded);
    for (size_t i = 0; i < count; ++i) pieces_.push_back({recorded[i].bytes});
  } else if (whole.response == nullptr) {
    if (recording_.start().dialect != options_.form.dialect) {
      return Unavailable("an identity answer cannot be rendered in another dialect", false);
    }
    pieces_.push_back({whole.body});
  } else if (options_.provider != nullptr) {
    out_ = options_.provider->RenderWholeResponse(*whole.response, options_.encoder);
    pieces_.push_back({{}, 0, out_.size()});
  } else {
    return Unavailable("no renderer for this form", false);
  }
  End(progress.state == RecordingState::kFailed ? progress.error : nullptr, false);
}

void Replay::RenderWholeFromEvents(const RecordingProgress& progress) {
  if (progress.truncated) return Unavailable("the answer was larger than its recording", false);
  if (progress.state == RecordingState::kInFlight) return;
  if (progress.state == RecordingState::kFailed) return End(progress.error, false);
  if (options_.provider == nullptr) return Unavailable("no renderer for this form", false);
  providers::ResponseAccumulator accumulator;
  if (decode_form_ != Recording::npos) {
    Status decoded = DecodeFrames(accumulator);
    if (!decoded.ok()) return Unavailable(decoded.error().message, false);
  } else {
    recording_.Replay(accumulator);
  }
  Result<providers::Response> response = accumulator.Take();
  if (!response.ok()) return Unavailable(response.error().message, false);
  out_ = options_.provider->RenderWholeResponse(*response, options_.encoder);
  pieces_.push_back({{}, 0, out_.size()});
  End(nullptr, false);
}

Status Replay::DecodeFrames(providers::EventSink& sink) const {
  std::unique_ptr<providers::StreamDecoder> decoder = options_.provider->NewDecoder();
  Status status = Ok{};
  const auto on_event = [&decoder, &sink, &status](const stream::SseEvent& event) {
    if (!event.has_data || !status.ok()) return;
    status = decoder->Decode(event, sink);
  };
  const bool ndjson = options_.provider->stream_framing() == providers::StreamFraming::kNdjson;
  stream::SseParser sse;
  stream::NdjsonParser lines;
  std::array<RecordedFrame, kBatch> batch;
  const size_t frames = recording_.form_progress(decode_form_).frames;
  for (size_t next = 0; next < frames && status.ok();) {
    const size_t count = recording_.CopyFrames(
        decode_form_, next, std::span(batch).first(std::min(kBatch, frames - next)));
    if (count == 0) break;
    for (size_t i = 0; i < count && status.ok(); ++i) {
      Status fed =
          ndjson ? lines.Feed(batch[i].bytes, on_event) : sse.Feed(batch[i].bytes, on_event);
      if (!fed.ok()) status = fed;
    }
    next += count;
  }
  return status;
}

void Replay::StreamFromWhole(const RecordingProgress& progress, size_t max_bytes) {
  if (!synthesized_done_) {
    if (progress.truncated) return Unavailable("the answer was larger than its recording", false);
    if (!progress.whole) {
      if (progress.state == RecordingState::kInFlight) return;
      if (progress.error != nullptr) return End(progress.error, false);
      return Unavailable("the call ended without a whole answer", false);
    }
    if (!Synthesize()) return;
  }
  while (next_frame_ < synthesized_frames_.size()) {
    if (taken_ >= max_bytes) {
      more_ = true;
      return;
    }
    const auto [begin, end] = synthesized_frames_[next_frame_++];
    pieces_.push_back({std::string_view(synthesized_).substr(begin, end - begin)});
    taken_ += end - begin;
  }
  End(progress.state == RecordingState::kFailed ? progress.error : nullptr, false);
}

bool Replay::Synthesize() {
  const WholeAnswer& whole = recording_.whole();
  if (whole.response == nullptr && recording_.start().dialect != options_.form.dialect) {
    Unavailable("an identity answer cannot be rendered in another dialect", false);
    return false;
  }
  if (encoder_ == nullptr && !MakeEncoder()) return false;
  std::optional<providers::Response> parsed;
  if (whole.response == nullptr) {
    // Identity bytes: the client's own dialect, read as the call reads a translated answer.
    if (whole.status / 100 != 2) {
      own_error_ = options_.provider->ParseError(static_cast<int>(whole.status), whole.body);
      End(&own_error_, false);
      return false;
    }
    Result<providers::Response> read = options_.provider->ParseResponse(whole.body);
    if (!read.ok()) {
      own_error_ = read.error();
      End(&own_error_, false);
      return false;
    }
    parsed.emplace(std::move(read.value()));
  }
  encoder_->set_output(synthesized_);
  FrameCutter cutter(*encoder_, synthesized_, synthesized_frames_);
  providers::EmitResponseEvents(parsed ? *parsed : *whole.response, cutter);
  encoder_->set_output(out_);
  synthesized_done_ = true;
  return true;
}

bool Replay::MakeEncoder() {
  if (options_.provider != nullptr) encoder_ = options_.provider->NewEncoder(options_.encoder);
  if (encoder_ == nullptr) {
    Unavailable("no encoder for this form", false);
    return false;
  }
  encoder_->set_output(out_);
  return true;
}

bool Replay::Prime(size_t upto) {
  if (encoder_ == nullptr && !MakeEncoder()) return false;
  encoder_->set_output(dropped_);
  std::array<providers::StreamEvent, kBatch> batch;
  while (next_event_ < upto) {
    const size_t want = std::min(kBatch, upto - next_event_);
    const size_t count = recording_.CopyEvents(next_event_, std::span(batch).first(want));
    if (count == 0) break;
    for (size_t i = 0; i < count; ++i) {
      encoder_->OnEvent(batch[i]);
      last_kind_ = batch[i].kind;
      seen_event_ = true;
    }
    next_event_ += count;
    dropped_.clear();
  }
  encoder_->set_output(out_);
  return true;
}

void Replay::Emit(size_t from) {
  if (out_.size() == from) return;
  pieces_.push_back({{}, from, out_.size()});
  taken_ += out_.size() - from;
}

void Replay::End(const Error* error, bool error_frame) {
  if (error_frame && error != nullptr && !(seen_event_ && IsFinal(last_kind_))) {
    if (encoder_ == nullptr && options_.provider != nullptr) {
      encoder_ = options_.provider->NewEncoder(options_.encoder);
      if (encoder_ != nullptr) encoder_->set_output(out_);
    }
    if (encoder_ != nullptr) {
      providers::StreamEvent event;
      event.kind = providers::EventKind::kError;
      event.error = error;
      const size_t from = out_.size();
      encoder_->OnEvent(event);
      Emit(from);
    }
  }
  mode_ = Mode::kEnded;
  end_error_ = error;
}

void Replay::Unavailable(std::string message, bool error_frame) {
  own_error_ = Error{ErrorCode::kUnavailable, std::move(message), {}};
  End(&own_error_, error_frame);
}

}  // namespace turnpike::model_call
