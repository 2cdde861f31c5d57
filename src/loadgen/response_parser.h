// An incremental parser for HTTP/1.1 responses, as the load generator reads them.
//
// Feed() takes the bytes of each socket read as they come; the parser keeps only a partial
// header line between calls, so it does not allocate once warm. It understands Content-Length,
// chunked transfer coding and read-until-close bodies, `Connection: close` / keep-alive (and
// HTTP/1.0's default), and skips 1xx interim responses. With `scan_sse`, it also watches the
// decoded body for Server-Sent Events lines: the first `data:` line, a `data: [DONE]` line (a
// chat stream's end), an `event: response.completed` line (a Responses stream's) and an
// `event: response.output_text.delta` line (a Responses stream's first token). The body
// itself is not kept, unless asked (`keep_body`, up to kMaxKeptBody bytes: a small JSON answer
// the load generator reads, such as a created conversation's id).
//
// Errors: a response that cannot be parsed yields kBadResponse; the parser never throws and
// never trusts a length it was sent beyond counting it down.
//
// Threads: a value owned by one connection; no locking.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace turnpike::loadgen {

enum class ParseResult {
  kNeedMore,     // the response is not complete yet; feed more bytes (or FeedEof)
  kComplete,     // the whole response has been read; bytes after it were ignored
  kBadResponse,  // not a valid HTTP/1.x response; the connection must be closed
};

class ResponseParser {
 public:
  static constexpr size_t kMaxKeptBody = 64 * 1024;

  // Prepares for the next response on the connection. `scan_sse` turns on the SSE watch;
  // `keep_body` keeps the decoded body's first kMaxKeptBody bytes (body()).
  void Reset(bool scan_sse, bool keep_body = false);

  // Consumes the next bytes from the socket. Once kComplete or kBadResponse is returned,
  // further calls return the same result until Reset().
  ParseResult Feed(std::string_view data);

  // The peer closed the connection: completes a read-until-close body, otherwise returns
  // kNeedMore, meaning the response was cut short.
  ParseResult FeedEof();

  bool started() const { return started_; }  // any byte of this response arrived
  bool headers_done() const { return state_ > State::kHeaders; }
  int status() const { return status_; }                   // 0 until the status line is read
  bool keep_alive() const { return keep_alive_; }          // valid once headers_done()
  uint64_t body_bytes() const { return body_bytes_; }      // decoded body bytes so far
  bool saw_data_event() const { return saw_data_; }        // a `data:` line was completed
  bool saw_done() const { return saw_done_; }              // a `data: [DONE]` line was completed
  bool saw_completed() const { return saw_completed_; }    // `event: response.completed` too
  bool saw_text_delta() const { return saw_text_delta_; }  // `event: response.output_text.delta`
  const std::string& body() const { return body_; }        // kept body (Reset's keep_body)

 private:
  enum class State {
    kStatusLine,
    kHeaders,
    kBodyLength,
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kUntilClose,
    kComplete,
    kBad,
  };

  // Moves the next complete line (without CR LF) into `line`; false if more bytes are needed.
  bool TakeLine(std::string_view& data, std::string_view& line);
  bool ParseStatusLine(std::string_view line);
  void ParseHeader(std::string_view line);
  void HeaderLine(std::string_view line);
  void ChunkSizeLine(std::string_view line);
  void EnterBody();
  void ConsumeBody(std::string_view bytes);
  void ScanSse(std::string_view bytes);
  void EndSseLine();
  ParseResult Result() const;

  static constexpr size_t kSsePrefixCapacity = 40;

  State state_ = State::kStatusLine;
  bool scan_sse_ = false;
  bool started_ = false;
  int status_ = 0;
  bool keep_alive_ = true;
  bool chunked_ = false;
  bool has_length_ = false;
  uint64_t content_length_ = 0;
  uint64_t remaining_ = 0;
  uint64_t body_bytes_ = 0;
  std::string partial_;  // a line split across reads; keeps its capacity
  size_t header_bytes_ = 0;

  // SSE watch: the first bytes of the current line and its full length.
  char sse_prefix_[kSsePrefixCapacity] = {};
  size_t sse_line_length_ = 0;
  bool saw_data_ = false;
  bool saw_done_ = false;
  bool saw_completed_ = false;
  bool saw_text_delta_ = false;

  bool keep_body_ = false;
  std::string body_;
};

}  // namespace turnpike::loadgen
