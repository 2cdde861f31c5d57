// Incremental Server-Sent Events framing, following the WHATWG "event stream interpretation"
// rules: lines end in "\n", "\r\n" or "\r" (a CRLF may be split across chunks); a line is
// `field: value` (one leading space of the value stripped) or `field` alone (empty value);
// `data` lines are joined with "\n"; lines starting with ':' are comments; a blank line ends
// the event. Fields other than `event` and `data` (`id`, `retry`, unknown) are kept in `raw`
// only. A leading UTF-8 BOM is not stripped (OpenAI-compatible servers do not send one).
//
// Byte accounting: every input byte belongs to exactly one event's `raw`, in order, except the
// incomplete tail still buffered. So forwarding every `raw` reproduces the upstream stream
// byte for byte, and forwarding a subset drops whole events. Every blank-line-terminated block
// is reported, including comment-only blocks and lone blank lines (`has_data == false`).
//
// Split CRLF: when a chunk ends in the "\r" of a blank line, the event is dispatched at once
// (no waiting for the next read). If the next chunk starts with the "\n" that completes that
// CRLF, the "\n" is counted in the next event's `raw` (as its first byte) and is not read as a
// blank line. Only that case makes a `raw` start with a line terminator.
//
// Zero-copy: an event that lies entirely inside the chunk passed to Feed is reported with
// views into that chunk (`data` too, unless it has several data lines: they are joined into an
// internal buffer). Only an incomplete tail is copied, and only once per read.
//
// Thread safety: none; one parser per stream, used by the worker that owns the stream.
// Errors: an event larger than `max_event_bytes` (counting the buffered tail) makes Feed
// return kUpstreamBadResponse; the parser then stays failed and every later Feed returns the
// same error (the stream is unusable: its framing is lost).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/error.h"
#include "common/result.h"

namespace turnpike::stream {

struct SseEvent {
  std::string_view raw;    // the event's bytes exactly as received, with its blank line
  std::string_view event;  // the last "event:" field's value, empty if none
  std::string_view data;   // data lines joined with "\n" (empty if none)
  bool has_data = false;   // at least one data line (false for comment-only blocks)
};

class SseParser {
 public:
  static constexpr size_t kDefaultMaxEventBytes = size_t{1} << 20;

  explicit SseParser(size_t max_event_bytes = kDefaultMaxEventBytes);

  // Feeds the next chunk; calls on_event(const SseEvent&) for every event the chunk completes,
  // in order. The views are valid only during the callback; the callback must not call Feed on
  // this parser. Events completed before an over-size one are still delivered.
  template <typename F>
  Status Feed(std::string_view chunk, F&& on_event);

  // The same, offering each event that starts in `chunk` with nothing buffered before it to
  // `take` first: take(std::string_view rest), `rest` being the chunk from the event's first
  // byte on (at most max_event_bytes of it), returns the size of a whole event it recognised at
  // the start of `rest` and handled itself (on_event is not called for it), or 0 to have the
  // parser frame it. A caller's fast path for the events it expects: what it takes must be
  // exactly the event the parser would frame there, ending in its blank line.
  template <typename F, typename T>
  Status Feed(std::string_view chunk, F&& on_event, T&& take);

  // Bytes of the incomplete event held back until a later chunk completes it.
  size_t buffered_bytes() const { return tail_.size(); }

 private:
  enum class Step { kEvent, kNeedMore, kTooLarge };
  struct NoTake {};  // the plain Feed's `take`

  // Produces the next event of input_ into event_, or says why it cannot.
  Step Next();
  // The bytes from the current position (at most max_event_bytes_) when an event starts there
  // with nothing buffered before it (a released tail is cleared first), else empty.
  std::string_view EventStart();
  // Steps over an event of `size` bytes that a caller's `take` handled at EventStart().
  void Skip(size_t size) {
    pos_ += size;
    pending_lf_ = pos_ == input_.size() && input_[pos_ - 1] == '\r';
  }
  Step NextFromTail();
  // Clears a tail whose event was delivered (release_tail_).
  void ReleaseTail();
  // Parses one event starting at `begin` into event_; returns its size in bytes, or 0 if no
  // blank line ends it before `end`. `skip_lf` skips a first byte that completes a split CRLF.
  size_t ParseEvent(const char* begin, const char* end, bool skip_lf);
  Error TooLargeError() const;

  // Constant after construction.
  const size_t max_event_bytes_;

  // The current Feed call.
  std::string_view input_;
  size_t pos_ = 0;

  // Carried between Feed calls.
  std::string tail_;           // bytes of the incomplete event
  bool tail_skip_lf_ = false;  // tail_[0] is a "\n" completing the previous event's CRLF
  bool pending_lf_ = false;    // the last event ended with "\r" at the end of its chunk
  bool release_tail_ = false;  // event_ points into tail_; clear it before going on
  bool failed_ = false;

  std::string data_buf_;  // joined data of a multi-line event
  SseEvent event_;
};

template <typename F>
Status SseParser::Feed(std::string_view chunk, F&& on_event) {
  return Feed(chunk, std::forward<F>(on_event), NoTake{});
}

template <typename F, typename T>
Status SseParser::Feed(std::string_view chunk, F&& on_event, T&& take) {
  if (failed_) return TooLargeError();
  input_ = chunk;
  pos_ = 0;
  for (;;) {
    if constexpr (!std::is_same_v<std::decay_t<T>, NoTake>) {
      if (const std::string_view rest = EventStart(); !rest.empty()) {
        const size_t taken = take(rest);
        if (taken != 0) {
          Skip(taken);
          continue;
        }
      }
    }
    switch (Next()) {
      case Step::kEvent:
        on_event(static_cast<const SseEvent&>(event_));
        break;
      case Step::kNeedMore:
        return Ok{};
      case Step::kTooLarge:
        failed_ = true;
        return TooLargeError();
    }
  }
}

}  // namespace turnpike::stream
