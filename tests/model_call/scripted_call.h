// Test drivers for model_call's sinks: a scripted producer that calls sinks exactly as
// answer_sink.h specifies, a client encoder sink that reports its frames (the leader's client),
// a follower reader, and a fixed answer's events.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model_call/answer_sink.h"
#include "model_call/fan_out.h"
#include "model_call/recorder.h"
#include "providers/provider.h"

namespace turnpike::model_call::testing {

namespace net = boost::asio;

inline bool FlushNow(AnswerSink& sink) {
  net::io_context io;
  bool result = false;
  net::co_spawn(io, sink.Flush(), [&result](std::exception_ptr, bool ok) { result = ok; });
  io.run();
  return result;
}

// The producer side of a model call: OnStart; per read, every event (and identity frame) to
// every active sink, then each one's Flush; a sink whose Flush returned false gets only OnEnd;
// the call goes on while an active sink serves a client.
class ScriptedCall {
 public:
  explicit ScriptedCall(std::vector<AnswerSink*> sinks) : active_(std::move(sinks)) {
    all_ = active_;
  }

  void Start(const AnswerStart& start) {
    for (AnswerSink* sink : active_) sink->OnStart(start);
  }

  // False: the call stops reading (no sink serving a client is left).
  bool Read(const std::vector<providers::StreamEvent>& events,
            const std::vector<std::pair<std::string, FrameKind>>& frames = {}) {
    for (const providers::StreamEvent& event : events) {
      for (AnswerSink* sink : active_) sink->OnEvent(event);
    }
    std::vector<IdentityFrame> read;
    for (const auto& [frame, kind] : frames) read.push_back({frame, kind});
    if (!read.empty()) {
      for (AnswerSink* sink : active_) sink->OnFrames(read);
    }
    std::vector<AnswerSink*> kept;
    for (AnswerSink* sink : active_) {
      if (FlushNow(*sink)) kept.push_back(sink);
    }
    active_ = std::move(kept);
    ++reads_;
    for (AnswerSink* sink : active_) {
      if (sink->serves_client()) return true;
    }
    return false;
  }

  void Whole(const WholeAnswer& answer) {
    for (AnswerSink* sink : active_) sink->OnWhole(answer);
    std::vector<AnswerSink*> kept;
    for (AnswerSink* sink : active_) {
      if (FlushNow(*sink)) kept.push_back(sink);
    }
    active_ = std::move(kept);
  }

  void End(const Error* error) {
    for (AnswerSink* sink : all_) sink->OnEnd(error);
  }

  size_t reads() const { return reads_; }

 private:
  std::vector<AnswerSink*> all_;
  std::vector<AnswerSink*> active_;
  size_t reads_ = 0;
};

// The leader's client: renders events with its dialect's encoder, reports each event's bytes
// as one frame to a FormRecorder, and "sends" them (kept in `sent`). Leaves at the Flush of
// read `leave_at` (1-based; 0: never).
class ClientSink final : public AnswerSink {
 public:
  ClientSink(const providers::Provider& provider, const providers::EncoderOptions& options,
             Recording* recording, size_t leave_at = 0)
      : provider_(provider), options_(options), recording_(recording), leave_at_(leave_at) {}

  void OnStart(const AnswerStart& start) override {
    encoder_ = provider_.NewEncoder(options_);
    encoder_->set_output(buffer_);
    if (recording_ != nullptr) {
      frames_.emplace(*recording_, Form{provider_.name(), start.stream});
    }
  }
  void OnEvent(const providers::StreamEvent& event) override {
    buffer_.clear();
    encoder_->OnEvent(event);
    if (buffer_.empty()) return;
    if (frames_) frames_->OnFrame(buffer_);
    pending_.push_back(buffer_);
  }
  boost::asio::awaitable<bool> Flush() override {
    ++flushes_;
    if (leave_at_ != 0 && flushes_ == leave_at_) {
      if (frames_) frames_->OnClose();
      left_ = true;
      co_return false;
    }
    for (std::string& frame : pending_) sent.push_back(std::move(frame));
    pending_.clear();
    co_return true;
  }
  void OnEnd(const Error* error) override {
    if (error == nullptr || left_) return;
    providers::StreamEvent event;
    event.kind = providers::EventKind::kError;
    event.error = error;
    buffer_.clear();
    encoder_->OnEvent(event);
    if (!buffer_.empty()) sent.push_back(buffer_);
  }

  std::vector<std::string> sent;

 private:
  const providers::Provider& provider_;
  const providers::EncoderOptions options_;
  Recording* recording_;
  const size_t leave_at_;
  std::unique_ptr<providers::StreamEncoder> encoder_;
  std::optional<FormRecorder> frames_;
  std::string buffer_;
  std::vector<std::string> pending_;
  size_t flushes_ = 0;
  bool left_ = false;
};

// What a follower read.
struct Collected {
  std::vector<std::string> frames;
  std::atomic<size_t> bytes{0};
  std::atomic<size_t> reads{0};
  std::atomic<bool> ended{false};
  std::optional<Error> error;

  std::string joined() const {
    std::string all;
    for (const std::string& frame : frames) all += frame;
    return all;
  }
};

// Reads until the end, or until `max_reads` reads (then leaves).
inline net::awaitable<void> ReadAll(Follower* follower, Collected* out, size_t max_reads = 0) {
  for (;;) {
    auto next = follower->Next();
    FollowerRead read = co_await std::move(next);
    size_t bytes = 0;
    for (std::string_view frame : read.frames) {
      out->frames.emplace_back(frame);
      bytes += frame.size();
    }
    if (read.end && read.error != nullptr) out->error = *read.error;
    out->bytes += bytes;
    ++out->reads;
    if (read.end) {
      out->ended = true;
      co_return;
    }
    if (max_reads != 0 && out->reads == max_reads) {
      follower->Leave();
      co_return;
    }
  }
}

// An answer in pieces: kStart, `deltas` text deltas ("word<i> "), kFinish, kUsage, kEnd.
struct ScriptedAnswer {
  explicit ScriptedAnswer(size_t deltas) {
    texts.reserve(deltas);
    for (size_t i = 0; i < deltas; ++i) texts.push_back("word" + std::to_string(i) + " ");
    providers::StreamEvent start;
    start.kind = providers::EventKind::kStart;
    start.id = "chatcmpl-7";
    start.model = "gpt-test";
    start.usage.prompt_tokens = 11;
    events.push_back(start);
    for (const std::string& text : texts) {
      providers::StreamEvent delta;
      delta.kind = providers::EventKind::kTextDelta;
      delta.text = text;
      events.push_back(delta);
    }
    providers::StreamEvent finish;
    finish.kind = providers::EventKind::kFinish;
    finish.finish = providers::FinishReason::kStop;
    events.push_back(finish);
    providers::StreamEvent usage;
    usage.kind = providers::EventKind::kUsage;
    usage.usage.prompt_tokens = 11;
    usage.usage.completion_tokens = static_cast<int64_t>(deltas);
    events.push_back(usage);
    providers::StreamEvent end;
    end.kind = providers::EventKind::kEnd;
    events.push_back(end);
  }

  // The events split into reads of `per_read` events.
  std::vector<std::vector<providers::StreamEvent>> Reads(size_t per_read) const {
    std::vector<std::vector<providers::StreamEvent>> reads;
    for (size_t i = 0; i < events.size(); i += per_read) {
      reads.emplace_back(events.begin() + i,
                         events.begin() + std::min(events.size(), i + per_read));
    }
    return reads;
  }

  // What a fresh encoder renders from events [0, count) (all when count is npos).
  std::string Encoded(const providers::Provider& provider, const providers::EncoderOptions& options,
                      size_t count = static_cast<size_t>(-1)) const {
    std::string out;
    auto encoder = provider.NewEncoder(options);
    encoder->set_output(out);
    for (size_t i = 0; i < events.size() && i < count; ++i) encoder->OnEvent(events[i]);
    return out;
  }

  std::vector<std::string> texts;
  std::vector<providers::StreamEvent> events;
};

inline AnswerStart TranslatedStream() {
  AnswerStart start;
  start.stream = true;
  start.dialect = "anthropic";
  start.content_type = "text/event-stream";
  start.upstream_model = "claude-test";
  return start;
}

}  // namespace turnpike::model_call::testing
