// Bytes an upstream sends on one connection, read as upstream/call.cc reads them: responses one
// after another (keep-alive), each head by net::ReadHeader into net::ResponseParser (its fields
// in a HeaderArena), then its body by net::ReadBodySome into a buffer of a few bytes or a few
// KiB (alternating, so that bodies stop at the buffer's end as well as at reads' ends). The
// bytes arrive through an in-memory stream in reads whose sizes the input gives (chunk_plan.h),
// then end of stream. Checks that a head reported complete is at most kMaxHeadBytes, that no
// body read writes past its buffer or reports more bytes than it was given, that a body with a
// Content-Length (in a status that has a body) delivers exactly that many bytes, and that the
// fields can be walked and looked up (ASan watches the arena). Then the differential: Beast's
// response_parser reads the same bytes whole, and wherever both parsers completed a response
// they must agree on its status, body, keep-alive and where it ended (each may refuse what the
// other takes: ResponseParser's rules are its own, response_parser.h).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_plan.h"
#include "chunked_stream.h"
#include "net/header_arena.h"
#include "net/http_read.h"
#include "net/response_parser.h"

namespace {

namespace asio = boost::asio;

constexpr size_t kMaxHeadBytes = 1024;
constexpr int kMaxResponses = 8;  // per connection
constexpr size_t kSmallRead = 7;
constexpr size_t kLargeRead = 4096;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// A response as a parser read it.
struct Response {
  unsigned status = 0;
  std::string body;
  bool keep_alive = false;
  size_t end = 0;  // payload offset just past it
  bool operator==(const Response&) const = default;
};

// The payload read whole by Beast's parser, response after response while kept alive.
std::vector<Response> BeastReads(std::string_view payload) {
  namespace bhttp = boost::beast::http;
  std::vector<Response> out;
  size_t at = 0;
  for (int i = 0; i < kMaxResponses; ++i) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.header_limit(static_cast<uint32_t>(kMaxHeadBytes));
    // Bounded: string_body reserves the Content-Length it is told (no payload here is larger).
    parser.body_limit(uint64_t{1} << 20);
    while (!parser.is_done()) {
      boost::beast::error_code ec;
      const size_t used = parser.put(asio::buffer(payload.data() + at, payload.size() - at), ec);
      at += used;
      if (ec == bhttp::error::need_more) {
        // It was given all that is left: the input has ended.
        if (!parser.got_some()) return out;
        parser.put_eof(ec);
        if (ec || !parser.is_done()) return out;
      } else if (ec || (used == 0 && !parser.is_done())) {
        return out;
      }
    }
    out.push_back({parser.get().result_int(), parser.get().body(), parser.keep_alive(), at});
    if (!parser.keep_alive()) return out;
  }
  return out;
}

// Reads every byte of a view; returns its size.
size_t Touch(std::string_view text) {
  static volatile unsigned char sink;
  for (char c : text) sink = static_cast<unsigned char>(sink ^ static_cast<unsigned char>(c));
  return text.size();
}

asio::awaitable<void> ReadConnection(turnpike::fuzz::ChunkedStream& stream,
                                     std::vector<Response>& read) {
  namespace tpnet = turnpike::net;
  tpnet::HeaderArena arena;
  boost::beast::flat_buffer buffer;
  // One byte past each read's room, which no read may touch.
  char body[kLargeRead + 1];
  for (int i = 0; i < kMaxResponses; ++i) {
    arena.Reset();  // the previous response's parser is gone
    tpnet::ResponseParser parser(arena);
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    const size_t consumed_before = stream.handed_out() - buffer.size();
    const boost::beast::error_code hec =
        co_await tpnet::ReadHeader(stream, buffer, parser, kMaxHeadBytes);
    if (hec) co_return;
    Check(parser.is_header_done());
    const size_t head_bytes = stream.handed_out() - buffer.size() - consumed_before;
    Check(head_bytes <= kMaxHeadBytes);
    Check(parser.status() <= 999);
    const size_t field_bytes = Touch(parser.field(boost::beast::http::field::content_type)) +
                               Touch(parser.field("x-request-id")) +
                               Touch(parser.field("Retry-After")) +
                               Touch(parser.field(boost::beast::http::field::transfer_encoding));
    Check(field_bytes <= head_bytes);
    const auto length = parser.content_length();
    uint64_t received = 0;
    std::string whole;
    for (size_t read = 0; !parser.is_done(); ++read) {
      const size_t room = read % 2 == 0 ? kSmallRead : kLargeRead;
      body[room] = '\x5a';
      auto [ec, got] = co_await tpnet::ReadBodySome(stream, buffer, parser, body, room);
      Check(got <= room);
      Check(body[room] == '\x5a');
      whole.append(body, got);
      received += got;
      if (ec) co_return;
      if (got == 0 && !parser.is_done()) co_return;  // cannot happen without an error: stop
    }
    // 1xx, 204 and 304 have no body whatever their Content-Length says.
    const unsigned status = parser.status();
    const bool bodiless = status < 200 || status == 204 || status == 304;
    if (length && !bodiless) Check(received == *length);
    read.push_back(
        {status, std::move(whole), parser.keep_alive(), stream.handed_out() - buffer.size()});
    if (!parser.keep_alive()) co_return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static asio::io_context io;
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));
  turnpike::fuzz::ChunkedStream stream(io.get_executor(), plan);
  io.restart();
  std::vector<Response> read;
  asio::co_spawn(io, ReadConnection(stream, read), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
  const std::vector<Response> beast = BeastReads(plan.payload());
  for (size_t i = 0; i < read.size() && i < beast.size(); ++i) Check(read[i] == beast[i]);
  return 0;
}
