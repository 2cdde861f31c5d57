#include "loadgen/response_parser.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "loadgen/outcome.h"

namespace turnpike::loadgen {
namespace {

// One canned exchange: what the server sent, whether it then closed, and what we expect.
struct Case {
  std::string name;
  std::string bytes;
  bool streaming;
  bool eof_after;  // the server closed the connection after `bytes`
  Outcome outcome;
  int status;
  uint64_t body_bytes;
  bool keep_alive;
};

// gtest prints the case name instead of the struct's bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr std::string_view kSseHeaders =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string Chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

const std::string kEvent1 = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n";
const std::string kDone = "data: [DONE]\n\n";
const std::string kFakeDone = "data: {\"text\":\"[DONE]\"}\n\n";

std::vector<Case> Cases() {
  return {
      {"content_length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, false,
       Outcome::kOk, 200, 5, true},
      {"content_length_case_and_close",
       "HTTP/1.1 200 OK\r\ncontent-LENGTH:  3 \r\nConnection: close\r\n\r\nabc", false, false,
       Outcome::kOk, 200, 3, false},
      {"http10_closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false, false,
       Outcome::kOk, 200, 2, false},
      {"chunked",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + Chunk("hello ") + Chunk("world") +
           "0\r\n\r\n",
       false, false, Outcome::kOk, 200, 11, true},
      {"chunked_extension_and_trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n0\r\nX-T: 1\r\n\r\n",
       false, false, Outcome::kOk, 200, 4, true},
      {"until_close", "HTTP/1.1 200 OK\r\n\r\nsome body", false, true, Outcome::kOk, 200, 9, false},
      {"no_content", "HTTP/1.1 204 No Content\r\n\r\n", false, false, Outcome::kOk, 204, 0, true},
      {"interim_100_skipped",
       "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", false, false,
       Outcome::kOk, 200, 1, true},
      {"status_500", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 7\r\n\r\nboom!!!",
       false, false, Outcome::kHttpStatus, 500, 7, true},
      {"status_429_stream", "HTTP/1.1 429 Too Many\r\nContent-Length: 0\r\n\r\n", true, false,
       Outcome::kHttpStatus, 429, 0, true},
      {"sse_with_done", std::string(kSseHeaders) + Chunk(kEvent1) + Chunk(kDone) + "0\r\n\r\n",
       true, false, Outcome::kOk, 200, kEvent1.size() + kDone.size(), true},
      {"sse_done_without_space",
       std::string(kSseHeaders) + Chunk(kEvent1) + Chunk("data:[DONE]\r\n\r\n") + "0\r\n\r\n", true,
       false, Outcome::kOk, 200, kEvent1.size() + 15, true},
      {"sse_without_done", std::string(kSseHeaders) + Chunk(kEvent1) + "0\r\n\r\n", true, false,
       Outcome::kStreamMissingDone, 200, kEvent1.size(), true},
      {"sse_truncated", std::string(kSseHeaders) + Chunk(kEvent1), true, true,
       Outcome::kStreamTruncated, 200, kEvent1.size(), true},
      {"sse_until_close_with_done",
       "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + kEvent1 + "data: [DONE]",
       true, true, Outcome::kOk, 200, kEvent1.size() + 12, false},
      {"done_inside_json_is_not_done", std::string(kSseHeaders) + Chunk(kFakeDone) + "0\r\n\r\n",
       true, false, Outcome::kStreamMissingDone, 200, kFakeDone.size(), true},
      {"plain_body_cut_short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, true,
       Outcome::kReadError, 200, 3, true},
      {"closed_before_anything", "", false, true, Outcome::kReadError, 0, 0, true},
      {"headers_cut_short", "HTTP/1.1 200 OK\r\nContent-Le", true, true, Outcome::kReadError, 200,
       0, true},
      {"not_http", "SSH-2.0-OpenSSH_9.2\r\n", false, false, Outcome::kBadResponse, 0, 0, true},
      {"bad_content_length", "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", false, false,
       Outcome::kBadResponse, 200, 0, true},
      {"bad_chunk_size",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", false, false,
       Outcome::kBadResponse, 200, 0, true},
  };
}

// Feeds `bytes` in pieces of `step` bytes (0: all at once), then EOF if asked.
Outcome FeedCase(const Case& c, size_t step, ResponseParser& parser) {
  parser.Reset(c.streaming);
  ParseResult result = ParseResult::kNeedMore;
  std::string_view rest = c.bytes;
  while (!rest.empty() && result == ParseResult::kNeedMore) {
    const size_t n = step == 0 ? rest.size() : std::min(step, rest.size());
    result = parser.Feed(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  if (c.eof_after && result == ParseResult::kNeedMore) result = parser.FeedEof();
  return ClassifyResponse(parser, result, c.streaming);
}

class ResponseParserTest : public testing::TestWithParam<Case> {};

TEST_P(ResponseParserTest, ClassifiesWhateverTheReadBoundaries) {
  const Case& c = GetParam();
  for (size_t step : {size_t{0}, size_t{1}, size_t{2}, size_t{7}}) {
    ResponseParser parser;
    EXPECT_EQ(OutcomeName(FeedCase(c, step, parser)), OutcomeName(c.outcome)) << "step " << step;
    EXPECT_EQ(parser.status(), c.status) << "step " << step;
    EXPECT_EQ(parser.body_bytes(), c.body_bytes) << "step " << step;
    if (c.outcome == Outcome::kOk) {
      EXPECT_EQ(parser.keep_alive(), c.keep_alive);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Canned, ResponseParserTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ResponseParserReuseTest, ResetClearsPreviousResponse) {
  ResponseParser parser;
  parser.Reset(true);
  const std::string stream = std::string(kSseHeaders) + Chunk(kEvent1) + Chunk(kDone) + "0\r\n\r\n";
  ASSERT_EQ(parser.Feed(stream), ParseResult::kComplete);
  EXPECT_TRUE(parser.saw_data_event());
  EXPECT_TRUE(parser.saw_done());
  parser.Reset(true);
  EXPECT_FALSE(parser.started());
  EXPECT_FALSE(parser.saw_data_event());
  EXPECT_FALSE(parser.saw_done());
  EXPECT_EQ(parser.status(), 0);
}

TEST(ResponseParserReuseTest, FirstDataEventAppearsWithItsLine) {
  ResponseParser parser;
  parser.Reset(true);
  ASSERT_EQ(parser.Feed(std::string(kSseHeaders) + "1a\r\n: comment\n\ndata: {\"a\""),
            ParseResult::kNeedMore);
  EXPECT_FALSE(parser.saw_data_event());  // the data line is not complete yet
  ASSERT_EQ(parser.Feed(":1}\n\n\r\n"), ParseResult::kNeedMore);
  EXPECT_TRUE(parser.saw_data_event());
  EXPECT_FALSE(parser.saw_done());
}

TEST(ResponseParserReuseTest, PlainRequestIgnoresSseLines) {
  ResponseParser parser;
  parser.Reset(false);
  ASSERT_EQ(parser.Feed("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\ndata: [DONE]\n"),
            ParseResult::kComplete);
  EXPECT_FALSE(parser.saw_data_event());
  EXPECT_FALSE(parser.saw_done());
}

TEST(ResponseParserReuseTest, ResponsesStreamEndsOnResponseCompleted) {
  const std::string delta = "event: response.output_text.delta\ndata: {\"delta\":\"Hi\"}\n\n";
  const std::string completed = "event: response.completed\ndata: {\"type\":\"x\"}\n\n";
  const std::string failed = "event: response.failed\ndata: {\"type\":\"x\"}\n\n";
  for (size_t step : {size_t{1}, size_t{5}, size_t{1000}}) {
    for (const bool ends : {true, false}) {
      ResponseParser parser;
      parser.Reset(true);
      const std::string stream =
          std::string(kSseHeaders) + Chunk(delta) + Chunk(ends ? completed : failed) + "0\r\n\r\n";
      ParseResult result = ParseResult::kNeedMore;
      for (size_t at = 0; at < stream.size(); at += step) {
        result = parser.Feed(std::string_view(stream).substr(at, step));
      }
      ASSERT_EQ(result, ParseResult::kComplete);
      EXPECT_EQ(parser.saw_completed(), ends) << "step " << step;
      EXPECT_TRUE(parser.saw_text_delta()) << "step " << step;
      EXPECT_FALSE(parser.saw_done());
      EXPECT_EQ(ClassifyResponse(parser, result, true, StreamEnd::kResponseCompleted),
                ends ? Outcome::kOk : Outcome::kStreamMissingDone);
      EXPECT_EQ(ClassifyResponse(parser, result, true), Outcome::kStreamMissingDone);
    }
  }
}

TEST(ResponseParserReuseTest, KeepsTheBodyWhenAsked) {
  const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"id\":\"conv_1\"}";
  ResponseParser parser;
  parser.Reset(false, true);
  ASSERT_EQ(parser.Feed(answer.substr(0, 40)), ParseResult::kNeedMore);
  ASSERT_EQ(parser.Feed(answer.substr(40)), ParseResult::kComplete);
  EXPECT_EQ(parser.body(), "{\"id\":\"conv_1\"}");
  parser.Reset(false);
  ASSERT_EQ(parser.Feed(answer), ParseResult::kComplete);
  EXPECT_EQ(parser.body(), "");
  EXPECT_FALSE(parser.saw_text_delta());
}

TEST(ResponseParserReuseTest, OversizedHeadersAreRejected) {
  ResponseParser parser;
  parser.Reset(false);
  std::string huge = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70 * 1024, 'a');
  EXPECT_EQ(parser.Feed(huge), ParseResult::kBadResponse);
}

}  // namespace
}  // namespace turnpike::loadgen
