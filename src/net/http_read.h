// Reading HTTP/1.1 messages by feeding a parser from our own read loop: the request parser
// (request_parser.h, for http/session.cc) or the upstream response parser (response_parser.h),
// which share the part of Beast's basic_parser interface these loops use (put, put_eof,
// got_some, is_header_done, is_done, header_limit) and Beast's error codes.
//
// Beast's composed read operations (async_read_header, async_read, async_read_some) cost
// about 10k instructions per message on top of the parsing itself (measured with callgrind:
// docs/BENCHMARKS.md). These loops do the same job with one async_read_some per network read
// and the parser's put() in between. They work on any AsyncReadStream (a TCP socket, a TLS
// stream) and leave timeouts to the caller (see net/deadline.h).
//
// Errors: the parser's own (header_limit, body_limit, bad_*), end_of_stream when the peer
// closed before a message began, partial_message when it closed inside one, or the stream's.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "net/header_arena.h"
#include "net/response_parser.h"

namespace turnpike::net {

inline constexpr size_t kReadChunkBytes = 16 * 1024;

// Accounts for one network read of `n` bytes into buffer.prepare(): commits them and reports
// end of stream to the parser. Returns the error to report.
template <typename Parser>
boost::beast::error_code CommitRead(boost::beast::flat_buffer& buffer, Parser& parser,
                                    boost::beast::error_code ec, size_t n) {
  buffer.commit(n);
  if (ec != boost::asio::error::eof) return ec;
  if (!parser.got_some()) return boost::beast::http::error::end_of_stream;
  boost::beast::error_code eof_ec;
  parser.put_eof(eof_ec);
  return eof_ec;  // ok for a close-delimited body, else partial_message
}

// A network read is written out where it is awaited (`co_await stream.async_read_some(
// buffer.prepare(kReadChunkBytes), kReadTuple)`, then CommitRead), not in a coroutine of its
// own: each coroutine's frame is an allocation and its set-up on every read (docs/BENCHMARKS.md,
// "Allocations that grow with connections").
inline constexpr auto kReadTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

// The message head from the bytes `buffer` holds, without I/O: true when they settle it (`ec`
// empty: the head is complete, the bytes after it still in `buffer`; else why it failed), false
// when more bytes must be read first. `head_bytes` counts what the parser consumed of the head
// so far, from one call to the next. The head, start line and every field together, may be at
// most `max_head_bytes` long, else header_limit. (Beast's own header_limit bounds the bytes one
// put() is given, and the parser consumes each complete field as it goes: without this sum, a
// head of many small fields had no bound.)
template <typename Parser>
bool ParseBufferedHeader(boost::beast::flat_buffer& buffer, Parser& parser, size_t max_head_bytes,
                         size_t& head_bytes, boost::beast::error_code& ec) {
  namespace bhttp = boost::beast::http;
  parser.header_limit(static_cast<uint32_t>(max_head_bytes));
  while (buffer.size() > 0) {
    ec = {};
    const size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    head_bytes += used;
    if (ec && ec != bhttp::error::need_more) return true;
    if (parser.is_header_done()) {
      ec = head_bytes > max_head_bytes ? bhttp::error::header_limit : boost::beast::error_code{};
      return true;
    }
    // What is left in the buffer is the head's unfinished rest.
    if (head_bytes + buffer.size() > max_head_bytes) {
      ec = bhttp::error::header_limit;
      return true;
    }
    if (ec) break;  // need_more
  }
  ec = {};
  return false;
}

// Reads until the message head is complete (ParseBufferedHeader, then network reads as needed).
// `head_bytes`: what a ParseBufferedHeader call before this one consumed of the head.
template <typename Stream, typename Parser>
boost::asio::awaitable<boost::beast::error_code> ReadHeader(Stream& stream,
                                                            boost::beast::flat_buffer& buffer,
                                                            Parser& parser, size_t max_head_bytes,
                                                            size_t head_bytes = 0) {
  for (;;) {
    boost::beast::error_code ec;
    if (ParseBufferedHeader(buffer, parser, max_head_bytes, head_bytes, ec)) co_return ec;
    auto [read_ec, n] =
        co_await stream.async_read_some(buffer.prepare(kReadChunkBytes), kReadTuple);
    if (const boost::beast::error_code read = CommitRead(buffer, parser, read_ec, n))
      co_return read;
  }
}

// The rest of the message from the bytes `buffer` holds, without I/O: true when they settle it
// (`ec` empty: the message is complete; else why it failed), false when more bytes must be read.
template <typename Parser>
bool ParseBufferedBody(boost::beast::flat_buffer& buffer, Parser& parser,
                       boost::beast::error_code& ec) {
  namespace bhttp = boost::beast::http;
  while (!parser.is_done()) {
    if (buffer.size() == 0) break;
    ec = {};
    const size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec && ec != bhttp::error::need_more) return true;
    if (ec || used == 0) break;  // the parser needs more input
  }
  ec = {};
  return parser.is_done();
}

// Reads the rest of the message into the parser's body (string_body and the like).
template <typename Stream, typename Parser>
boost::asio::awaitable<boost::beast::error_code> ReadBody(Stream& stream,
                                                          boost::beast::flat_buffer& buffer,
                                                          Parser& parser) {
  for (;;) {
    boost::beast::error_code ec;
    if (ParseBufferedBody(buffer, parser, ec)) co_return ec;
    auto [read_ec, n] =
        co_await stream.async_read_some(buffer.prepare(kReadChunkBytes), kReadTuple);
    if (const boost::beast::error_code read = CommitRead(buffer, parser, read_ec, n))
      co_return read;
  }
}

// The upstream response parser (response_parser.h).
using BodyParser = ResponseParser;

// Points the parser's body at [out, out + size) for PutBody / ReadBodySome, and makes one put()
// take every complete chunk the buffer holds (up to `size` body bytes) rather than stop after
// the first: a fast upstream's SSE events, one chunk each, then arrive together.
inline void SetBodyBuffer(BodyParser& parser, char* out, size_t size) {
  parser.SetBodyBuffer(out, size);
  parser.eager(true);
}

// Feeds what `buffer` holds to the parser, whose body buffer of `size` bytes SetBodyBuffer set.
// Returns true when a body read is over: `got` bytes arrived (> 0), the body ended, or `ec`
// says what failed; false when it needs another network read first. No I/O.
inline bool PutBody(boost::beast::flat_buffer& buffer, BodyParser& parser, size_t size,
                    boost::beast::error_code& ec, size_t& got) {
  namespace bhttp = boost::beast::http;
  ec = {};
  for (;;) {
    got = size - parser.body_room();
    if (parser.is_done()) return true;
    if (buffer.size() == 0) return false;
    boost::beast::error_code put_ec;
    const size_t used = parser.put(buffer.data(), put_ec);
    buffer.consume(used);
    got = size - parser.body_room();
    if (put_ec == bhttp::error::need_buffer || got > 0) return true;
    if (put_ec && put_ec != bhttp::error::need_more) {
      ec = put_ec;
      return true;
    }
    if (put_ec || used == 0) return false;  // the parser needs more input
  }
}

// Reads body bytes of a response into [out, out + size) until at least one byte
// arrived or the body ended. Returns the error and the count of bytes written.
template <typename Stream>
boost::asio::awaitable<std::pair<boost::beast::error_code, size_t>> ReadBodySome(
    Stream& stream, boost::beast::flat_buffer& buffer, BodyParser& parser, char* out, size_t size) {
  SetBodyBuffer(parser, out, size);
  for (;;) {
    boost::beast::error_code ec;
    size_t got = 0;
    if (PutBody(buffer, parser, size, ec, got)) co_return std::pair{ec, got};
    auto [read_ec, n] =
        co_await stream.async_read_some(buffer.prepare(kReadChunkBytes), kReadTuple);
    ec = CommitRead(buffer, parser, read_ec, n);
    if (ec) co_return std::pair{ec, size - parser.body_room()};
  }
}

}  // namespace turnpike::net
