// Incremental newline-delimited JSON framing (application/x-ndjson, https://github.com/ndjson/
// ndjson-spec): the stream is a sequence of lines ending in "\n"; a "\r" before the "\n" is
// tolerated and not part of the line; lines holding only whitespace are skipped. Each line is
// reported as a stream::SseEvent whose `data` is the line (no terminator), `raw` the line with
// its terminator, `event` empty and `has_data` true, so the dialect decoders and the relay
// handle both framings through one event type. The JSON itself is not looked at here.
//
// Zero-copy like SseParser: a line inside the chunk passed to Feed is reported as a view into
// that chunk; only an incomplete last line is copied (kept across Feed calls until its "\n"
// arrives). A final line without "\n" at the end of the body is never reported
// (buffered_bytes() says it is there; a complete NDJSON stream ends every line).
//
// Thread safety: none; one parser per stream, used by the worker that owns the stream.
// Errors: a line longer than `max_line_bytes` (terminator and buffered part included) makes
// Feed return kUpstreamBadResponse; the parser then stays failed and every later Feed returns
// the same error (the stream is unusable: its framing is lost).
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/result.h"
#include "stream/sse_parser.h"

namespace turnpike::stream {

class NdjsonParser {
 public:
  static constexpr size_t kDefaultMaxLineBytes = SseParser::kDefaultMaxEventBytes;

  explicit NdjsonParser(size_t max_line_bytes = kDefaultMaxLineBytes);

  // Feeds the next chunk; calls on_event(const SseEvent&) for every non-blank line the chunk
  // completes, in order. The views are valid only during the callback; the callback must not
  // call Feed on this parser. Lines completed before an over-size one are still delivered.
  template <typename F>
  Status Feed(std::string_view chunk, F&& on_event);

  // Bytes of the incomplete last line held back until a later chunk completes it.
  size_t buffered_bytes() const { return tail_.size(); }

 private:
  // Fills event_ from one complete line (with its "\n"); false for a blank line.
  bool MakeEvent(std::string_view raw);
  void ReleaseTail();
  Status Fail();

  const size_t max_line_bytes_;  // constant after construction
  std::string tail_;             // the incomplete last line, carried between Feed calls
  bool failed_ = false;
  SseEvent event_;
};

template <typename F>
Status NdjsonParser::Feed(std::string_view chunk, F&& on_event) {
  if (failed_) return Fail();
  const char* p = chunk.data();
  const char* const end = chunk.data() + chunk.size();
  if (!tail_.empty()) {
    const void* found = p == end ? nullptr : std::memchr(p, '\n', static_cast<size_t>(end - p));
    const char* eol = found ? static_cast<const char*>(found) + 1 : end;
    if (tail_.size() + static_cast<size_t>(eol - p) > max_line_bytes_) return Fail();
    tail_.append(p, eol);
    p = eol;
    if (found == nullptr) return Ok{};
    if (MakeEvent(tail_)) on_event(static_cast<const SseEvent&>(event_));
    ReleaseTail();
  }
  while (p < end) {
    const void* found = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (found == nullptr) {
      if (static_cast<size_t>(end - p) > max_line_bytes_) return Fail();
      tail_.assign(p, end);
      return Ok{};
    }
    const char* eol = static_cast<const char*>(found) + 1;
    if (static_cast<size_t>(eol - p) > max_line_bytes_) return Fail();
    if (MakeEvent(std::string_view(p, static_cast<size_t>(eol - p)))) {
      on_event(static_cast<const SseEvent&>(event_));
    }
    p = eol;
  }
  return Ok{};
}

}  // namespace turnpike::stream
