// One model call's answer, fed to the leader's client and to followers that joined the call in
// flight, each follower on its own worker thread and at its own pace.
//
//   leader's worker                          any worker (its own io_context)
//   auto live = LiveAnswer::Make(max_bytes);
//   FanOut fan_out(live);   // a sink of the call, beside the client's encoder sink
//                                            auto follower = live->Join(options, executor);
//                                            for (;;) {
//                                              FollowerRead read = co_await follower->Next();
//                                              ...write read.frames...; if (read.end) break;
//                                            }
//
// The back-pressure rule:
//   - The upstream read follows the client it serves, and only it. The call starts its next
//     read when every sink's Flush returned (answer_sink.h); FanOut's Flush never waits: the
//     read is already in the shared Recording (one copy, made on the leader's thread, shared by
//     every follower; nothing is copied per follower), and Flush wakes the followers waiting.
//   - A follower reads that recording at its own pace through a Replay (replay.h): everything
//     recorded so far first, then each read as it is recorded. Its buffer is bounded by
//     FollowerOptions::buffer_bytes: one Next hands out at most about that many bytes, and a
//     follower on the live feed may lag the recording by at most that many bytes (what was
//     recorded since it last took everything there was).
//   - A follower that lags more, at a Flush, is detached from the live feed: from then on it
//     gets no wake-up per read, only one when the answer ends, and it finishes by reading the
//     rest from the recording at its own pace. The leader's cost per follower per read is a
//     check under the mutex and at most one post to its executor (coalesced: at most one
//     pending wake-up per follower, and only for one that waits); a slow follower never slows
//     the leader or another follower.
//   - Memory: the recording's cap (LiveAnswer::Make) bounds the whole fan-out. A follower that
//     reaches the end of a truncated recording ends with kUnavailable.
//   - serves_client() is true while a follower remains (joined and not left), so the call goes
//     on reading the upstream for followers when the leader's client left. A follower that
//     leaves (Leave, or its destruction) is removed and changes nothing for the others.
//
// Threads: FanOut is the call's sink (the leader's thread, the recording's single writer).
// LiveAnswer::Join and followers() are safe from any thread. A Follower belongs to one
// coroutine on a single-threaded executor (a worker's loop): Next is awaited there, and it
// must be destroyed there, before that executor's io_context. LiveAnswer's mutex guards the
// follower list and each follower's wake-up state; it is never held across a co_await or I/O.
// Ownership: the LiveAnswer is shared by the FanOut and its followers (it outlives the call
// when followers remain). A FanOut destroyed before OnEnd fails the answer (kUnavailable), so
// that followers end. Errors: values in FollowerRead.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "model_call/answer_sink.h"
#include "model_call/recorder.h"
#include "model_call/recording.h"
#include "model_call/replay.h"

namespace turnpike::model_call {

struct FollowerOptions {
  static constexpr size_t kDefaultBufferBytes = 64 * 1024;
  ReplayOptions replay;  // the follower's client form (replay.h)
  size_t buffer_bytes = kDefaultBufferBytes;
};

// The head to answer with (status, content type) is the recording's when the follower's form
// is the call's (stream or whole): recording().start() once a read returned frames or the end,
// and recording().whole().status for a whole answer. A follower served the other form
// (replay.h) answers with that form's head: 200 and its dialect's stream content type, or 200
// and application/json.
struct FollowerRead {
  std::span<const std::string_view> frames;  // in order; views valid until the next Next()
  bool end = false;
  const Error* error = nullptr;  // end: why the answer was cut; null when complete
};

class Follower;

class LiveAnswer : public std::enable_shared_from_this<LiveAnswer> {
 public:
  // `max_bytes`: the recording's cap (recording.h).
  static std::shared_ptr<LiveAnswer> Make(size_t max_bytes);
  ~LiveAnswer();

  const Recording& recording() const { return recording_; }
  // Joins the answer: the follower reads it on `executor` (single-threaded), from its start.
  std::unique_ptr<Follower> Join(const FollowerOptions& options,
                                 boost::asio::any_io_executor executor);
  // Followers joined and not left.
  size_t followers() const;

  // The leader's side (FanOut): a read was recorded, or (`end`) the answer ended. Detaches
  // the followers that lag too far and wakes those that wait.
  void Publish(bool end);
  Recording& writable_recording() { return recording_; }

  struct FollowerState;  // fan_out.cc

 private:
  friend class Follower;
  struct MakeTag {};  // only Make constructs one (make_shared: one allocation with its count)

 public:
  LiveAnswer(MakeTag, size_t max_bytes) : recording_(max_bytes) {}

 protected:
  // For a type that keeps more beside the answer in the same allocation (the LLM cache keeps
  // the entry the answer may become, and the recording's first block: recording.h): it
  // derives from LiveAnswer and is made with std::make_shared, whose shared_ptr<LiveAnswer>
  // shared_from_this() then works as Make's.
  LiveAnswer(size_t max_bytes, std::span<char> first_block) : recording_(max_bytes, first_block) {}

 private:
  void Wake(const std::shared_ptr<FollowerState>& follower);  // mu_ held
  void Remove(const FollowerState* follower);

  Recording recording_;
  mutable std::mutex mu_;
  // Guarded by mu_: the followers, and every follower's wake-up state (FollowerState).
  std::vector<std::shared_ptr<FollowerState>> followers_;
  uint64_t publishes_ = 0;
};

// A follower of a LiveAnswer: its reads, at its own pace, and its place on the live feed.
class Follower {
 public:
  Follower(std::shared_ptr<LiveAnswer> live, std::shared_ptr<LiveAnswer::FollowerState> state,
           const FollowerOptions& options);
  ~Follower();  // leaves
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // The next frames in the follower's form, waiting for the call when nothing new is recorded;
  // or the end. On the follower's executor; one at a time.
  boost::asio::awaitable<FollowerRead> Next();
  // Leaves the answer (its client closed): no more wake-ups; the others are not affected.
  void Leave();

  bool detached() const;
  // Wake-ups posted to this follower so far (tests, metrics).
  uint64_t wakeups() const;

 private:
  std::shared_ptr<LiveAnswer> live_;
  std::shared_ptr<LiveAnswer::FollowerState> state_;
  Replay replay_;
  const size_t buffer_bytes_;
  bool left_ = false;
};

// The leader's sink: records the answer into the LiveAnswer (as a Recorder) and publishes
// each read to the followers.
class FanOut final : public AnswerSink {
 public:
  explicit FanOut(std::shared_ptr<LiveAnswer> live);
  ~FanOut() override;

  void OnStart(const AnswerStart& start) override { recorder_.OnStart(start); }
  void OnEvent(const providers::StreamEvent& event) override { recorder_.OnEvent(event); }
  void OnFrames(std::span<const IdentityFrame> frames) override { recorder_.OnFrames(frames); }
  void OnWhole(const WholeAnswer& answer) override { recorder_.OnWhole(answer); }
  boost::asio::awaitable<bool> Flush() override;
  std::optional<bool> FlushAtOnce() override;
  void OnEnd(const Error* error) override;
  bool serves_client() const override { return live_->followers() > 0; }
  // No: a follower or a cache entry is served in the client's own dialect, whose stream form
  // is the recorded frames and whose whole form a Replay decodes from them at the end
  // (replay.h); decoding every identity frame as it passes would cost the call a decoder run
  // per frame for a form that may never be asked for.
  bool wants_events() const override { return false; }

  // For the client's encoder sink: its FormRecorder writes here (recorder.h).
  Recording& recording() { return live_->writable_recording(); }
  const std::shared_ptr<LiveAnswer>& live() const { return live_; }

 private:
  std::shared_ptr<LiveAnswer> live_;
  Recorder recorder_;
  bool ended_ = false;
};

}  // namespace turnpike::model_call
