#include "net/request_parser.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::net {
namespace {

namespace bhttp = boost::beast::http;
using boost::beast::error_code;

// Feeds `wire` in pieces of `step` bytes, keeping what put() did not consume, as
// net/http_read.h does; returns the first error other than need_more (or none) and leaves the
// unconsumed rest in `rest`.
error_code Feed(RequestParser& parser, std::string_view wire, size_t step,
                std::string* rest = nullptr) {
  std::string pending;
  size_t at = 0;
  for (;;) {
    error_code ec;
    const size_t used = parser.put(boost::asio::buffer(pending), ec);
    pending.erase(0, used);
    if (ec && ec != bhttp::error::need_more) return ec;
    if (parser.is_done()) break;
    if (!ec && used > 0) continue;
    if (at == wire.size()) {
      parser.put_eof(ec);
      return ec;
    }
    const size_t n = std::min(step, wire.size() - at);
    pending.append(wire.substr(at, n));
    at += n;
  }
  pending.append(wire.substr(at));
  if (rest != nullptr) *rest = pending;
  return {};
}

std::vector<std::string> Names(const ArenaRequest& request) {
  std::vector<std::string> out;
  for (const auto& f : request) out.emplace_back(f.name_string());
  return out;
}

TEST(RequestParserTest, ReadsALineFieldsAndAContentLengthBodyInAnyPieces) {
  const std::string_view wire =
      "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
      "Authorization: Bearer k\r\nX-Custom:  spaced value \t\r\nContent-Length: 7\r\n\r\n"
      "{\"a\":1}GET / HTTP/1.1\r\n\r\n";
  for (size_t step : {1, 2, 7, 64, 4096}) {
    HeaderArena arena;
    RequestParser parser(arena);
    std::string rest;
    ASSERT_FALSE(Feed(parser, wire, step, &rest)) << step;
    const ArenaRequest& r = parser.get();
    EXPECT_EQ(r.method(), bhttp::verb::post);
    EXPECT_EQ(r.target(), "/v1/chat/completions?x=1");
    EXPECT_EQ(r.version(), 11);
    EXPECT_EQ(r.body(), "{\"a\":1}");
    EXPECT_EQ(r[bhttp::field::authorization], "Bearer k");
    EXPECT_EQ(r["x-custom"], "spaced value");
    EXPECT_EQ(r[bhttp::field::content_type], "application/json");
    EXPECT_EQ(Names(r), (std::vector<std::string>{"Host", "Content-Type", "Authorization",
                                                  "X-Custom", "Content-Length"}));
    EXPECT_TRUE(r.keep_alive());
    EXPECT_EQ(rest, "GET / HTTP/1.1\r\n\r\n") << "the next request stays in the input";
  }
}

TEST(RequestParserTest, NamesGetTheFieldBeastWouldGiveThem) {
  HeaderArena arena;
  RequestParser parser(arena);
  ASSERT_FALSE(Feed(parser,
                    "GET / HTTP/1.1\r\nHOST: a\r\ncontent-TYPE: b\r\nIf-None-Match: c\r\n"
                    "x-api-key: d\r\nHostx: e\r\n\r\n",
                    4096));
  std::vector<bhttp::field> fields;
  for (const auto& f : parser.get()) fields.push_back(f.name());
  EXPECT_EQ(fields, (std::vector<bhttp::field>{bhttp::field::host, bhttp::field::content_type,
                                               bhttp::field::if_none_match, bhttp::field::unknown,
                                               bhttp::field::unknown}));
}

TEST(RequestParserTest, ReadsAChunkedBodyWithExtensionsAndTrailers) {
  const std::string_view wire =
      "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nWiki\r\n5 ; a = \"q\\\"x\" ;b\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (size_t step : {1, 3, 4096}) {
    HeaderArena arena;
    RequestParser parser(arena);
    ASSERT_FALSE(Feed(parser, wire, step)) << step;
    EXPECT_EQ(parser.get().body(), "Wikipedia");
    EXPECT_EQ(parser.get()["x-trailer"], "t");
  }
}

TEST(RequestParserTest, NoFramingMeansNoBody) {
  HeaderArena arena;
  RequestParser parser(arena);
  error_code ec;
  const std::string_view wire = "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
  EXPECT_EQ(parser.put(boost::asio::buffer(wire.data(), wire.size()), ec), wire.size());
  EXPECT_FALSE(ec);
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(parser.get().version(), 10);
  EXPECT_TRUE(parser.get().keep_alive());
}

TEST(RequestParserTest, TheTargetIsKnownOnceTheRequestLineIsInEvenIfTheHeadFails) {
  HeaderArena arena;
  RequestParser parser(arena);
  parser.header_limit(64);
  error_code ec;
  const std::string head = "POST /v1/messages HTTP/1.1\r\nX-Big: " + std::string(100, 'a');
  const size_t used = parser.put(boost::asio::buffer(head), ec);
  EXPECT_EQ(ec, bhttp::error::header_limit);
  EXPECT_EQ(used, std::string_view("POST /v1/messages HTTP/1.1\r\n").size());
  EXPECT_EQ(parser.get().target(), "/v1/messages");
}

TEST(RequestParserTest, RefusesWhatCouldSmuggleOrIsMalformed) {
  const std::pair<std::string_view, bhttp::error> cases[] = {
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
       bhttp::error::bad_transfer_encoding},
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       bhttp::error::bad_content_length},
      {"GET / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", bhttp::error::bad_content_length},
      {"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", bhttp::error::bad_content_length},
      {"GET / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
       bhttp::error::bad_content_length},
      {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", bhttp::error::bad_value},
      {"GET / HTTP/1.1\r\nX : a\r\n\r\n", bhttp::error::bad_field},
      {"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", bhttp::error::bad_field},
      {"GET / HTTP/1.1\r\nX: a\n\r\n", bhttp::error::bad_line_ending},
      {"GET / HTTP/1.1\n\r\n", bhttp::error::bad_line_ending},
      {"GET / HTTP/1.1\r\nConnection: keep alive\r\n\r\n", bhttp::error::bad_value},
      {"GET / HTTP/2.0\r\n\r\n", bhttp::error::bad_version},
      {"GET / HTTP/1.1 \r\n\r\n", bhttp::error::bad_version},
      {"GET  / HTTP/1.1\r\n\r\n", bhttp::error::bad_target},
      {"GET /a\x7f HTTP/1.1\r\n\r\n", bhttp::error::bad_target},
      {"G(T / HTTP/1.1\r\n\r\n", bhttp::error::bad_method},
      {"\r\nGET / HTTP/1.1\r\n\r\n", bhttp::error::bad_method},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", bhttp::error::bad_chunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1 \r\n", bhttp::error::bad_chunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;a\xf4\r\n", bhttp::error::bad_chunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;a=\"x\r\n", bhttp::error::bad_chunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", bhttp::error::bad_chunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nContent-Length: 1\r\n\r\n",
       bhttp::error::bad_content_length},
  };
  for (const auto& [wire, expected] : cases) {
    for (size_t step : {1, 4096}) {
      HeaderArena arena;
      RequestParser parser(arena);
      EXPECT_EQ(Feed(parser, wire, step), expected) << wire << " step " << step;
    }
  }
}

TEST(RequestParserTest, LimitsTheBodyAndTheHead) {
  {
    HeaderArena arena;
    RequestParser parser(arena);
    parser.body_limit(4);
    EXPECT_EQ(Feed(parser, "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 4096),
              bhttp::error::body_limit)
        << "refused by its length, before any body byte";
  }
  {
    HeaderArena arena;
    RequestParser parser(arena);
    parser.body_limit(4);
    EXPECT_EQ(
        Feed(parser, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n",
             1),
        bhttp::error::body_limit);
  }
  {
    HeaderArena arena;
    RequestParser parser(arena);
    parser.header_limit(40);
    EXPECT_EQ(Feed(parser, "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", 1),
              bhttp::error::header_limit);
  }
  {
    HeaderArena arena;
    RequestParser parser(arena);
    parser.header_limit(40);
    EXPECT_EQ(Feed(parser,
                   "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " +
                       std::string(50, 't') + "\r\n\r\n",
                   4096),
              bhttp::error::header_limit)
        << "trailers are bounded like a head";
  }
}

TEST(RequestParserTest, EndOfStreamInsideARequestIsAPartialMessage) {
  HeaderArena arena;
  RequestParser parser(arena);
  EXPECT_EQ(Feed(parser, "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", 4096),
            bhttp::error::partial_message);
  EXPECT_TRUE(parser.got_some());
}

}  // namespace
}  // namespace turnpike::net
