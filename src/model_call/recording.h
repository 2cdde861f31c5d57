// One model answer kept as it arrives, for whoever reads it alongside or later: followers of the
// call in flight (fan_out.h), a cache entry, an agent's memory. Written by a Recorder
// (recorder.h) or a FanOut; read through a Replay (replay.h) or directly.
//
// What it keeps:
//   - the head (AnswerStart) and the pivot events, in order; for a whole answer the WholeAnswer
//     (identity bytes with status and content type, or the parsed providers::Response);
//   - per Form (a client dialect, stream or whole) the frames an encoder rendered for that
//     form, each one element, in order; a form whose encoder stopped early (its client left) is
//     closed and says how many events its frames render;
//   - the state: in flight, complete, or failed with an Error; and whether it was truncated.
// Encoding: every string lives in one append-only arena whose blocks never move; an event is a
// small fixed record (one pointer to its strings laid back to back, their lengths, the index of
// its usage or error), a frame a pointer, a length and its kind. No allocation per field; the
// first form and its first 32 frame records are inline, and the arena's first block may be
// the owner's (the constructor), so a short answer recorded in one form allocates nothing
// beyond the Recording and its owner.
//
// Memory: at most `max_bytes`, counting the arena's bytes and every record's size. An append
// that would pass it marks the recording truncated, and from then on nothing more is kept. A
// truncated recording still ends (Finish) but is not the whole answer: a cache must not store
// it, and a reader that reaches its end ends with kUnavailable (replay.h).
//
// Threads: one writer (the call's worker thread) calls the writer methods; readers on any
// thread may read at the same time. `mu_` guards the record lists and the state: it is held for
// one push, or to copy a batch of records, never across I/O or a co_await. Bytes, once
// appended, never move or change: views handed to readers are valid for the recording's life
// and are read without the lock. The head and the whole answer are written once, before the
// flag that publishes them. Ownership: plain object; share it (std::shared_ptr) when readers
// outlive the writer. Errors: none; appends after Finish or past the cap are dropped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model_call/answer_sink.h"
#include "providers/events.h"

namespace turnpike::model_call {

// A client dialect and the form of its answer: the key of a form's recorded frames.
struct Form {
  std::string_view dialect;  // the client API's dialect (Provider::name())
  bool stream = true;        // a streamed answer; false: a whole one
  friend bool operator==(const Form&, const Form&) = default;
};

enum class RecordingState : uint8_t { kInFlight, kComplete, kFailed };

// A recorded frame: a view into the recording.
struct RecordedFrame {
  std::string_view bytes;
  FrameKind kind = FrameKind::kData;
};

// What a reader sees at one moment (one lock).
struct RecordingProgress {
  bool started = false;  // the head is there (Recording::start())
  RecordingState state = RecordingState::kInFlight;
  bool truncated = false;
  bool whole = false;            // the whole answer is there (Recording::whole())
  size_t events = 0;             // events recorded so far
  size_t bytes = 0;              // bytes counted against the cap so far
  const Error* error = nullptr;  // kFailed: why
};

struct FormProgress {
  size_t frames = 0;
  bool closed = false;        // its encoder stopped before the end of the answer
  size_t events_covered = 0;  // closed: how many of the events its frames render
};

class Recording {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  // `first_block`: room for the first bytes (the owner's, outliving the recording), so that a
  // short answer's strings and frames take no allocation of their own; else the arena's first
  // block is allocated when the first bytes come.
  explicit Recording(size_t max_bytes, std::span<char> first_block = {});
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // Writer: the call's thread only.
  void Start(const AnswerStart& start);
  void AppendEvent(const providers::StreamEvent& event);
  // Registers a form (again: its index); a client sink registers its form at OnStart, so that
  // a reader finds it before the first event.
  size_t AddForm(const Form& form);
  // One frame rendered for `form` from the events recorded so far (AddForm first).
  void AppendFrame(size_t form, std::string_view frame, FrameKind kind = FrameKind::kData);
  void AppendFrame(const Form& form, std::string_view frame, FrameKind kind = FrameKind::kData);
  // The same for a read's frames, in order (one lock for the lot, not one per frame).
  void AppendFrames(size_t form, std::span<const IdentityFrame> frames);
  // The form's encoder stopped (its client left): its frames render the events recorded so far,
  // or only the first `events_covered` of them (a copy rebuilt from its wire form:
  // recording_codec.h).
  void CloseForm(size_t form, size_t events_covered = npos);
  void SetWhole(const WholeAnswer& answer);
  // The end: complete when `error` is null, else failed with a copy of it. Later calls do
  // nothing.
  void Finish(const Error* error);

  // Readers: any thread.
  RecordingProgress progress() const;
  // Once progress().started: the head (views into the recording).
  const AnswerStart& start() const { return start_; }
  // Once progress().whole: the whole answer (`response` null for identity bytes).
  const WholeAnswer& whole() const { return whole_; }
  // Copies the events [from, from + out.size()) recorded so far into `out` as views into the
  // recording; returns how many.
  size_t CopyEvents(size_t from, std::span<providers::StreamEvent> out) const;
  // Sends the events recorded so far, from `from` on, to `sink`, in order; returns how many.
  size_t Replay(providers::EventSink& sink, size_t from = 0) const;
  // The index of a form, or npos.
  size_t FindForm(const Form& form) const;
  // The forms registered so far, and each one's key (its dialect a view into the recording).
  size_t forms() const;
  Form form(size_t index) const;
  FormProgress form_progress(size_t form) const;
  size_t CopyFrames(size_t form, size_t from, std::span<RecordedFrame> out) const;
  size_t max_bytes() const { return max_bytes_; }

 private:
  // Bytes that never move once written: blocks of growing size, the first one the owner's when
  // it gives one (Recording's constructor). Writer only.
  class Arena {
   public:
    explicit Arena(std::span<char> first_block);
    char* Allocate(size_t size);

   private:
    static constexpr size_t kInlineBlocks = 4;  // heap blocks held before `more_` is needed
    std::array<std::unique_ptr<char[]>, kInlineBlocks> blocks_;
    std::vector<std::unique_ptr<char[]>> more_;
    size_t heap_blocks_ = 0;
    char* next_ = nullptr;
    size_t left_ = 0;
    size_t next_block_ = 0;  // the last block's size
  };
  struct EventRecord {
    const char* strings;  // text, id, name, model, stop_sequence, back to back
    uint32_t lengths[5];
    int32_t tool_index;
    uint32_t extra;  // kStart, kUsage: index into usages_; kError: into errors_; or kNoExtra
    providers::EventKind kind;
    providers::FinishReason finish;
  };
  struct FrameRecord {
    const char* data;
    uint32_t size;
    FrameKind kind;
  };
  // A form's frame records: the first kInlineFrames inline (a typical stream's), then a list.
  class FrameList {
   public:
    size_t size() const { return size_; }
    const FrameRecord& operator[](size_t i) const {
      return i < kInlineFrames ? inline_[i] : more_[i - kInlineFrames];
    }
    void push_back(const FrameRecord& frame);

   private:
    static constexpr size_t kInlineFrames = 32;
    std::array<FrameRecord, kInlineFrames> inline_;
    std::vector<FrameRecord> more_;
    size_t size_ = 0;
  };
  struct FormLog {
    std::string dialect;
    bool stream = true;
    FrameList frames;
    bool closed = false;
    size_t events_covered = 0;
  };

  // Writer: takes `size` bytes of the cap; false (and truncated) when they do not fit.
  bool Charge(size_t size);
  std::string_view Copy(std::string_view bytes);
  providers::StreamEvent EventAt(size_t index) const;  // mu_ held
  // The form at `index` < forms_ (mu_ held, or the writer).
  FormLog& Log(size_t index) { return index == 0 ? first_form_ : *more_forms_[index - 1]; }
  const FormLog& Log(size_t index) const {
    return index == 0 ? first_form_ : *more_forms_[index - 1];
  }

  const size_t max_bytes_;
  // Writer only.
  Arena arena_;
  size_t charged_ = 0;
  bool ended_ = false;
  bool truncated_writer_ = false;  // the writer's copy of truncated_
  // Written once by the writer before `started_` / `whole_set_` publish them; then constant.
  AnswerStart start_;
  WholeAnswer whole_;
  std::optional<providers::Response> response_;

  mutable std::mutex mu_;
  // Guarded by mu_.
  std::vector<EventRecord> events_;
  std::vector<providers::TokenUsage> usages_;
  std::vector<std::unique_ptr<Error>> errors_;  // kError events' errors (stable addresses)
  // The first form inline (most recordings have one), the others in more_forms_.
  FormLog first_form_;
  std::vector<std::unique_ptr<FormLog>> more_forms_;
  size_t forms_ = 0;
  bool started_ = false;
  bool whole_set_ = false;
  bool truncated_ = false;
  RecordingState state_ = RecordingState::kInFlight;
  std::unique_ptr<Error> error_;
  size_t bytes_ = 0;
};

}  // namespace turnpike::model_call
