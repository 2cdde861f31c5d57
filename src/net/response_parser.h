// An HTTP/1.1 response parser for upstream calls: the status line, the head's fields as a flat
// list in a HeaderArena, and the body's framing (Content-Length, chunked, or until the
// connection closes) with body bytes written where the caller points.
//
// Why not Beast's parser: its response_parser<buffer_body> keeps every field in an ordered
// multiset as well as a list (a case-insensitive tree insert per field), classifies every
// field name against its table of known names, and walks a chunked body a call per chunk
// header; an upstream response's head is read once and asked for two or three fields, and a
// streamed answer is a run of small chunks. Measured with callgrind: docs/BENCHMARKS.md
// ("Instructions per request against nginx"). The interface is the part of Beast's basic_parser
// that net/http_read.h and upstream/call.cc use, with Beast's error codes, so that both read as
// before; fuzz/http_response_fuzz.cc checks it against Beast's parser on the same bytes.
//
// What it accepts (RFC 9112, as a client reads responses):
//   - a status line "HTTP/1.0" or "HTTP/1.1", a space, three digits, a space and any reason
//     (the space and reason may be absent), each line ended by CRLF;
//   - fields "name: value": a token name, optional spaces or tabs around the value, no folded
//     lines (obs-fold is refused: RFC 9112 5.2 lets a client reject it);
//   - framing by RFC 9112 6.3: 1xx, 204 and 304 have no body; a Transfer-Encoding whose last
//     coding is chunked is chunked, any other one reads until the close; otherwise a
//     Content-Length (one value, or repeats of one value) gives the length; otherwise the body
//     runs until the close. Transfer-Encoding with Content-Length, or with a coding that is not
//     a token, is refused; a Connection option that is not a token means "close".
//   - chunks: a hex size (at most 15 digits), extensions after ';' checked against RFC 9112's
//     grammar (net/http1_syntax.h) and skipped, CRLF, the data, CRLF; the last chunk's trailer
//     fields are checked like the head's and dropped, but for a Connection: close, which is heeded
//     (the connection is not reused).
// Errors are Beast's http::error values (bad_version, bad_status, bad_field, bad_value,
// bad_line_ending, bad_content_length, bad_transfer_encoding, bad_chunk, header_limit,
// body_limit, partial_message); need_more means "give me more input", need_buffer "the body
// buffer is full".
//
// put() takes the head only once all of it is in the input (nothing of an unfinished head is
// consumed, so the caller keeps it buffered and bounds it: net::ParseBufferedHeader) and returns
// right after the head, leaving the body's bytes in the input; in the body it takes all it can.
// Views from field() stay valid until the parser is destroyed.
//
// Ownership: borrows the arena, which must outlive the parser and be Reset only after it is
// gone. Thread safety: none (one exchange on one worker).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/optional/optional.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/header_arena.h"

namespace turnpike::net {

class ResponseParser {
 public:
  explicit ResponseParser(HeaderArena& arena) : arena_(arena) {}
  ~ResponseParser();
  ResponseParser(const ResponseParser&) = delete;
  ResponseParser& operator=(const ResponseParser&) = delete;

  // Feeds input; returns how many bytes of it were consumed (see above).
  size_t put(boost::asio::const_buffer input, boost::beast::error_code& ec);
  // The connection closed: ends a body that runs until the close, else partial_message.
  void put_eof(boost::beast::error_code& ec);

  // A head longer than this is header_limit (while it is still incomplete, too).
  void header_limit(uint32_t bytes) { header_limit_ = bytes; }
  // A body longer than this is body_limit.
  void body_limit(uint64_t bytes) { body_limit_ = bytes; }
  // Beast's eager(): this parser always takes all the body it can; kept for the callers.
  void eager(bool) {}

  bool got_some() const { return got_some_; }
  bool is_header_done() const { return state_ > State::kHead; }
  bool is_done() const { return state_ == State::kDone; }
  // The body runs until the connection closes.
  bool need_eof() const { return until_close_; }
  // The connection may carry another request after this response: HTTP/1.1 without
  // "Connection: close", or HTTP/1.0 with "Connection: keep-alive"; never when the body runs
  // until the close.
  bool keep_alive() const;
  boost::optional<uint64_t> content_length() const { return content_length_; }

  // The status code (0 before the head is parsed).
  unsigned status() const { return status_; }
  // The value of the first field of that name (empty when absent), names compared
  // case-insensitively.
  std::string_view field(std::string_view name) const;
  std::string_view field(boost::beast::http::field name) const;

  // Where put() writes body bytes next, and how many it may write.
  void SetBodyBuffer(char* out, size_t size) {
    out_ = out;
    room_ = size;
  }
  size_t body_room() const { return room_; }

 private:
  enum class State {
    kHead,
    kLength,
    kUntilClose,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailers,
    kDone
  };
  struct Field {
    Field* next;
    std::string_view name;
    std::string_view value;
  };

  // Parses the complete head [begin, end) (its final CRLF CRLF included).
  void ParseHead(const char* begin, const char* end, boost::beast::error_code& ec);
  // One field line [begin, end) (no CRLF): checked, and kept when `keep` (else a trailer:
  // only a Connection field is read).
  bool ParseField(const char* begin, const char* end, bool keep);
  // A Connection field's options.
  void ReadConnection(std::string_view value);
  void Keep(std::string_view name, std::string_view value);
  // The framing fields, from the kept list, once the head is complete.
  void Frame(boost::beast::error_code& ec);
  // Copies up to `left` bytes of [p, end) to the body buffer; returns how many.
  size_t TakeBody(const char* p, const char* end, uint64_t left, boost::beast::error_code& ec);
  // From a chunk's start: every whole chunk in [p, end) of the usual shape (a size line of hex
  // digits and CRLF, its data and CRLF), not the last one, that the body buffer and the body
  // limit take, each in one step; where the first other chunk (or the input's end) starts.
  const char* TakeWholeChunks(const char* p, const char* end);

  HeaderArena& arena_;
  Field* first_ = nullptr;
  Field* last_ = nullptr;
  State state_ = State::kHead;
  unsigned status_ = 0;
  int version_ = 11;
  bool got_some_ = false;
  bool until_close_ = false;
  bool close_ = false;       // Connection: close
  bool keep_alive_ = false;  // Connection: keep-alive
  size_t head_scanned_ = 0;  // bytes of the unfinished head already searched for its end
  uint32_t header_limit_ = 8192;
  uint64_t body_limit_ = 8 * 1024 * 1024;
  uint64_t body_bytes_ = 0;
  uint64_t left_ = 0;  // of the Content-Length, or of the current chunk
  boost::optional<uint64_t> content_length_;
  char* out_ = nullptr;
  size_t room_ = 0;
};

}  // namespace turnpike::net
