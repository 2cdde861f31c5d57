#include "net/response_parser.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace turnpike::net {
namespace {

namespace bhttp = boost::beast::http;

// Feeds `wire` to the parser in pieces of `step` bytes (what a read would bring), with a body
// buffer of `room` bytes that is emptied into the result whenever it fills.
std::string Parse(ResponseParser& parser, std::string_view wire, size_t step, size_t room) {
  std::string body;
  std::string out(room, '\0');
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser.eager(true);
  std::string pending;
  size_t at = 0;
  while (!parser.is_done()) {
    if (at < wire.size()) {
      const size_t n = std::min(step, wire.size() - at);
      pending.append(wire.substr(at, n));
      at += n;
    }
    parser.SetBodyBuffer(out.data(), out.size());
    boost::beast::error_code ec;
    const size_t used = parser.put(boost::asio::buffer(pending), ec);
    pending.erase(0, used);
    body.append(out.data(), out.size() - parser.body_room());
    if (ec == bhttp::error::need_buffer || ec == bhttp::error::need_more) continue;
    EXPECT_FALSE(ec) << ec.message();
    if (ec || (at == wire.size() && used == 0 && !parser.is_done())) break;
  }
  return body;
}

TEST(ResponseParserTest, ReadsTheHeadAndAContentLengthBody) {
  HeaderArena arena;
  {
    ResponseParser parser(arena);
    const std::string body = Parse(parser,
                                   "HTTP/1.1 429 Too Many Requests\r\nContent-Type: "
                                   "application/json\r\nRetry-After: 3\r\nX-Thing: a\r\n"
                                   "x-thing: b\r\nContent-Length: 11\r\n\r\n{\"e\":\"xyz\"}",
                                   5, 4);
    EXPECT_EQ(body, "{\"e\":\"xyz\"}");
    EXPECT_EQ(parser.status(), 429u);
    EXPECT_EQ(parser.field(bhttp::field::content_type), "application/json");
    EXPECT_EQ(parser.field("retry-after"), "3");
    EXPECT_EQ(parser.field("RETRY-AFTER"), "3");
    EXPECT_EQ(parser.field("x-thing"), "a");  // the first of two
    EXPECT_EQ(parser.field("x-missing"), "");
    EXPECT_EQ(parser.field(bhttp::field::server), "");
    EXPECT_TRUE(parser.keep_alive());
  }
  arena.Reset();  // every field block was given back
}

TEST(ResponseParserTest, DecodesChunkedBodiesIntoSmallBuffers) {
  HeaderArena arena;
  ResponseParser parser(arena);
  const std::string body = Parse(parser,
                                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "6;x=1\r\ndata: \r\n5\r\nhello\r\n0\r\nTrailer: t\r\n\r\n",
                                 3, 2);
  EXPECT_EQ(body, "data: hello");
  EXPECT_TRUE(parser.is_done());
  EXPECT_TRUE(parser.keep_alive());
}

TEST(ResponseParserTest, ConnectionCloseAndHttp10AreNotKeptAlive) {
  HeaderArena arena;
  {
    ResponseParser parser(arena);
    Parse(parser, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 64, 8);
    EXPECT_FALSE(parser.keep_alive());
  }
  {
    ResponseParser parser(arena);
    Parse(parser, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 64, 8);
    EXPECT_FALSE(parser.keep_alive());
  }
}

TEST(ResponseParserTest, FieldsPastTheArenaGoToTheHeap) {
  HeaderArena arena;
  {
    ResponseParser parser(arena);
    std::string wire = "HTTP/1.1 200 OK\r\n";
    const std::string big(3000, 'v');  // larger than the arena
    wire += "X-Big: " + big + "\r\nX-Small: s\r\nContent-Length: 0\r\n\r\n";
    Parse(parser, wire, 512, 8);
    EXPECT_EQ(parser.field("x-big"), big);
    EXPECT_EQ(parser.field("x-small"), "s");
  }
  arena.Reset();
}

// Feeds the whole of `wire` once; returns the error (need_more when it wants more).
boost::beast::error_code PutAll(ResponseParser& parser, std::string_view wire) {
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(wire.data(), wire.size()), ec);
  return ec;
}

// Whole chunks of the usual shape are taken a run at a time (TakeWholeChunks), any other by the
// states: read whole into a roomy buffer or a few bytes at a time into a tiny one, the body is
// the same, and a broken chunk end is an error either way.
TEST(ResponseParserTest, WholeChunksReadAsTheStatesReadThem) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunks =
      "7\r\ndata: a\r\n1\r\n\n\r\n6;ext=1\r\ndata: \r\nA\r\n0123456789\r\n"
      "01\r\nb\r\n4;q\r\ncdef\r\n0\r\n\r\n";
  const std::string expected = "data: a\ndata: 0123456789bcdef";
  for (const auto& [step, room] :
       {std::pair<size_t, size_t>{1 << 16, 1 << 16}, {1 << 16, 5}, {3, 2}, {1, 1 << 16}}) {
    HeaderArena arena;
    ResponseParser parser(arena);
    EXPECT_EQ(Parse(parser, head + chunks, step, room), expected) << step << " " << room;
    EXPECT_TRUE(parser.is_done());
  }
  HeaderArena arena;
  ResponseParser parser(arena);
  std::string out(64, '\0');
  parser.SetBodyBuffer(out.data(), out.size());
  EXPECT_EQ(PutAll(parser, head), boost::beast::error_code());
  boost::beast::error_code ec;
  const std::string broken = "3\r\nabc\r\n3\r\ndefX\r\n";
  const size_t used = parser.put(boost::asio::buffer(broken), ec);
  EXPECT_EQ(ec, bhttp::error::bad_chunk);
  EXPECT_EQ(std::string(out.data(), out.size() - parser.body_room()), "abcdef");
  EXPECT_EQ(used, broken.size() - 3);
}

TEST(ResponseParserTest, RefusesWhatLeavesTheFramingInDoubt) {
  HeaderArena arena;
  const std::pair<std::string_view, bhttp::error> cases[] = {
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked/\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
       bhttp::error::bad_content_length},
      {"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\n", bhttp::error::bad_content_length},
      {"HTTP/1.1 200 OK\r\nX-A: a\r\n folded\r\n\r\n", bhttp::error::bad_value},
      {"HTTP/1.1 200 OK\r\nX A: a\r\n\r\n", bhttp::error::bad_field},
      {"HTTP/2.0 200 OK\r\n\r\n", bhttp::error::bad_version},
      {"HTTP/1.1 2x0 OK\r\n\r\n", bhttp::error::bad_status},
      {"HTTP/1.1 200 OK\nX-A: a\r\n\r\n", bhttp::error::bad_line_ending},
  };
  for (const auto& [wire, error] : cases) {
    ResponseParser parser(arena);
    EXPECT_EQ(PutAll(parser, wire), error) << wire;
  }
  arena.Reset();
}

TEST(ResponseParserTest, BoundsAnUnfinishedHead) {
  HeaderArena arena;
  ResponseParser parser(arena);
  parser.header_limit(32);
  EXPECT_EQ(PutAll(parser, "HTTP/1.1 200 OK\r\nX-A: a\r\n"), bhttp::error::need_more);
  EXPECT_FALSE(parser.is_header_done());
  EXPECT_EQ(PutAll(parser, "HTTP/1.1 200 OK\r\nX-A: aaaaaaaaaaaaaaaa\r\n"),
            bhttp::error::header_limit);
}

TEST(ResponseParserTest, ABodyUntilTheCloseEndsAtEof) {
  HeaderArena arena;
  ResponseParser parser(arena);
  char out[16];
  parser.SetBodyBuffer(out, sizeof out);
  const std::string_view head = "HTTP/1.1 200 OK\r\nConnection: x/y\r\n\r\n";
  boost::beast::error_code ec;
  EXPECT_EQ(parser.put(boost::asio::buffer(head.data(), head.size()), ec), head.size());
  EXPECT_FALSE(ec);
  EXPECT_TRUE(parser.need_eof());
  EXPECT_EQ(PutAll(parser, "abc"), bhttp::error::need_more);
  EXPECT_EQ(std::string_view(out, sizeof out - parser.body_room()), "abc");
  parser.put_eof(ec);
  EXPECT_FALSE(ec);
  EXPECT_TRUE(parser.is_done());
  EXPECT_FALSE(parser.keep_alive());
}

TEST(ResponseParserTest, NamesThatDifferInCaseAtTheirEndMatch) {
  HeaderArena arena;
  {
    ResponseParser parser(arena);
    // A field past the arena, so that its name ends its heap block (no value after it).
    std::string wire =
        "HTTP/1.1 204 No Content\r\nX-Big: " + std::string(3000, 'v') + "\r\nConnectioN:\r\n\r\n";
    EXPECT_FALSE(PutAll(parser, wire));
    EXPECT_EQ(parser.field("connection"), "");
    EXPECT_TRUE(parser.is_done());
  }
  arena.Reset();
}

}  // namespace
}  // namespace turnpike::net
