// EventLog: the rendered SSE events of one background turn as they are made, for clients that
// resume its stream (GET /v1/responses/{id}?stream=true&starting_after=N, resume.cc).
//
// Every event is one SSE frame ("event: <type>\ndata: {...}\n\n": the data is one JSON line),
// and the events' sequence numbers count from 0 in order (the Responses encoder's), so event n
// is the log's n-th frame: a reader asks for the frames after a sequence number and gets their
// bytes, copied. The log is bounded (kMaxBytes): a turn whose events pass it stops logging and
// the log says overflowed; its readers end with an error, and its stream is not stored.
//
// Waiting: a reader that has seen everything asks to be woken (Wait); the next Append or Finish
// calls each waiter once, on the writer's thread, under no lock; the waiter posts to its own
// executor. No one blocks.
//
// Thread safety: every member is safe from any thread (one mutex, held for a copy or an append,
// never across I/O). The writer is the turn (one worker); readers are resumes on any worker.
// Ownership: shared by the turn's TurnControl (state.h) and every resume reading it.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::agents {

class EventLog {
 public:
  static constexpr size_t kMaxBytes = size_t{8} << 20;

  // The writer: whole frames, in order; then the end, once.
  void Append(std::string_view frames);
  void Finish();

  struct Read {
    std::string frames;  // the events after the asked sequence number
    int64_t last = -1;   // the sequence number of the last event in `frames` (or the one asked)
    bool finished = false;
    bool overflowed = false;
  };
  // The events after sequence number `after` (-1: from the first).
  Read After(int64_t after) const;
  // The whole log (what a finished turn stores); empty when overflowed.
  std::string Text() const;

  // Calls `wake` once at the next Append or Finish; false (and no call) when there is already
  // something after `seen`, or the log has finished: read again instead.
  bool Wait(int64_t seen, std::function<void()> wake);

  // Pure: the frames after sequence number `after` in a stored log's text (`text` as Text()
  // gave it); the whole text for -1, empty past the end.
  static std::string_view FramesAfter(std::string_view text, int64_t after);

 private:
  mutable std::mutex mu_;
  std::string text_;
  std::vector<size_t> ends_;  // ends_[n]: the end of event n in text_
  bool finished_ = false;
  bool overflowed_ = false;
  std::vector<std::function<void()>> waiters_;
};

}  // namespace turnpike::agents
