// An HTTP/1.1 request parser for the server side: the request line, the fields and the body
// (Content-Length or chunked) of one request into a Beast message (ArenaRequest) whose fields
// live in the connection's HeaderArena, the message every door reads (http/exchange.h).
//
// Why not Beast's request_parser: it tokenizes a field a byte at a time through tables, runs
// each one through its own checks (Connection, Content-Length, Transfer-Encoding, Upgrade) by
// string comparisons, and classifies every name by hashing it: about 700 instructions a field
// before the field is even stored (callgrind, docs/BENCHMARKS.md "Reading a request's head").
// This one finds the head's end with memchr, checks a field line in one pass, and classifies
// the names clients send most often by their length and one comparison. The message and its
// fields are Beast's, so nothing that reads a request changes. The interface is the part of
// Beast's basic_parser that net/http_read.h and http/session.cc use, with Beast's error codes;
// fuzz/http_read_fuzz.cc reads the same bytes with both parsers and checks that this one
// accepts nothing Beast refuses and reads what both accept identically.
//
// What it accepts (RFC 9112, as a server reads requests):
//   - a request line "METHOD SP target SP HTTP/1.x" ended by CRLF: a token method, a target of
//     visible characters or obs-text (Beast's set), HTTP/1.0 or HTTP/1.1 (any other version is
//     bad_version);
//   - fields "name: value": a token name, optional blanks around the value, no folded lines
//     (obs-fold is bad_value: RFC 9112 5.2 lets a server refuse it), each line ended by CRLF;
//     Connection and Proxy-Connection options must be tokens (Beast's bad_value);
//   - framing by RFC 9112 6.3: Transfer-Encoding must be exactly "chunked" (any other coding,
//     chunked twice, or together with Content-Length is bad_transfer_encoding: this gateway
//     decodes no other coding, and a server must not guess the framing); else Content-Length
//     (digits only, in one field or repeated with the same value; bad_content_length
//     otherwise); else no body;
//   - chunks: a hex size (at most 15 digits), extensions after ';' checked against RFC 9112's
//     grammar (net/http1_syntax.h) and skipped, CRLF, the data, CRLF; trailer fields after the
//     last chunk are checked like the head's and added to the message, as Beast adds them (a
//     Content-Length or Transfer-Encoding among them is refused).
// A body longer than body_limit (a Content-Length above it, as soon as the head ends) is
// body_limit; a head (or the trailers) longer than header_limit is header_limit. Stricter than
// Beast, by design: obs-fold, versions other than 1.0 and 1.1, transfer codings other than
// chunked, a list in Content-Length.
//
// put() consumes the request line as soon as it is complete (so an error answer knows the
// target), then the fields only once all of them are in the input (nothing of an unfinished
// field block is consumed: the caller keeps it buffered and bounds it, net::ParseBufferedHeader),
// and returns right after the head; in the body it takes all it can.
//
// Ownership: borrows the arena, which must outlive the message (release() hands it over) and
// be Reset only after it is gone. Thread safety: none (one exchange on one worker).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/header_arena.h"

namespace turnpike::net {

using ArenaFields = boost::beast::http::basic_fields<ArenaAllocator<char>>;
using ArenaRequest = boost::beast::http::request<boost::beast::http::string_body, ArenaFields>;

class RequestParser {
 public:
  explicit RequestParser(HeaderArena& arena);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Feeds input; returns how many bytes of it were consumed (see above).
  size_t put(boost::asio::const_buffer input, boost::beast::error_code& ec);
  // The connection closed: partial_message unless the request is complete.
  void put_eof(boost::beast::error_code& ec);

  // A head longer than this is header_limit (while it is still incomplete, too).
  void header_limit(uint32_t bytes) { header_limit_ = bytes; }
  // A body longer than this is body_limit. Beast's default for requests: 1 MiB.
  void body_limit(uint64_t bytes) { body_limit_ = bytes; }

  bool got_some() const { return got_some_; }
  bool is_header_done() const { return state_ > State::kFields; }
  bool is_done() const { return state_ == State::kDone; }

  // The request so far: after an error, what was parsed of it (the target once the request
  // line was read).
  ArenaRequest& get() { return message_; }
  const ArenaRequest& get() const { return message_; }
  ArenaRequest release() { return std::move(message_); }

 private:
  enum class State {
    kRequestLine,
    kFields,
    kLength,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailers,
    kDone
  };

  // The request line [begin, end) without its CRLF.
  void ParseRequestLine(const char* begin, const char* end, boost::beast::error_code& ec);
  // The field block [begin, end): field lines, each with its CRLF, then the empty line.
  void ParseFields(const char* begin, const char* end, boost::beast::error_code& ec);
  // One field (a trailer when `trailer`): its framing role checked, then added.
  void AddField(std::string_view name, std::string_view value, bool trailer,
                boost::beast::error_code& ec);
  // The body's framing, once the head is complete.
  void Frame(boost::beast::error_code& ec);
  // Appends up to `left_` bytes of [p, end) to the body; returns how many.
  size_t TakeBody(const char* p, const char* end, boost::beast::error_code& ec);

  ArenaRequest message_;
  State state_ = State::kRequestLine;
  bool got_some_ = false;
  bool chunked_ = false;  // Transfer-Encoding: chunked (the only coding accepted)
  bool has_length_ = false;
  size_t scanned_ = 0;     // bytes of the unfinished line or field block already searched
  size_t head_bytes_ = 0;  // of the head, consumed so far (the request line)
  uint32_t header_limit_ = 8192;
  uint64_t body_limit_ = 1024 * 1024;
  uint64_t length_ = 0;  // the Content-Length
  uint64_t left_ = 0;    // of the Content-Length, or of the current chunk
};

}  // namespace turnpike::net
