#include "stream/ndjson_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace turnpike::stream {
namespace {

// An owning copy of the event a line gives, comparable in assertions.
struct Line {
  std::string raw, data;
  bool operator==(const Line&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Line& l) {
  return os << "{raw=" << testing::PrintToString(l.raw)
            << " data=" << testing::PrintToString(l.data) << "}";
}

std::vector<Line> Parse(const std::vector<std::string>& chunks, NdjsonParser& parser) {
  std::vector<Line> lines;
  for (const std::string& chunk : chunks) {
    Status status = parser.Feed(chunk, [&](const SseEvent& e) {
      EXPECT_TRUE(e.has_data);
      EXPECT_TRUE(e.event.empty());
      lines.push_back(Line{std::string(e.raw), std::string(e.data)});
    });
    EXPECT_TRUE(status.ok()) << status.error().message;
  }
  return lines;
}

std::vector<Line> Parse(const std::vector<std::string>& chunks) {
  NdjsonParser parser;
  return Parse(chunks, parser);
}

// Ollama-like lines, a CRLF line, blank and whitespace-only lines, a non-ASCII line.
const std::string kStream =
    "{\"message\":{\"content\":\"Hi\"},\"done\":false}\n"
    "\n"
    "{\"message\":{\"content\":\"«x»\"},\"done\":false}\r\n"
    " \t\r\n"
    "{\"done\":true}\n";

const std::vector<Line> kLines = {
    {"{\"message\":{\"content\":\"Hi\"},\"done\":false}\n",
     "{\"message\":{\"content\":\"Hi\"},\"done\":false}"},
    {"{\"message\":{\"content\":\"«x»\"},\"done\":false}\r\n",
     "{\"message\":{\"content\":\"«x»\"},\"done\":false}"},
    {"{\"done\":true}\n", "{\"done\":true}"},
};

TEST(NdjsonParser, SplitsLinesSkipsBlankOnesAndToleratesCrlf) {
  EXPECT_EQ(Parse({kStream}), kLines);
}

TEST(NdjsonParser, EverySplitPositionGivesTheSameLines) {
  for (size_t at = 0; at <= kStream.size(); ++at) {
    EXPECT_EQ(Parse({kStream.substr(0, at), kStream.substr(at)}), kLines) << "split at " << at;
  }
  for (size_t a = 0; a <= kStream.size(); ++a) {
    for (size_t b = a; b <= kStream.size(); ++b) {
      EXPECT_EQ(Parse({kStream.substr(0, a), kStream.substr(a, b - a), kStream.substr(b)}), kLines)
          << "split at " << a << " and " << b;
    }
  }
}

TEST(NdjsonParser, ByteByByte) {
  std::vector<std::string> bytes;
  for (char c : kStream) bytes.emplace_back(1, c);
  EXPECT_EQ(Parse(bytes), kLines);
}

TEST(NdjsonParser, AnIncompleteLastLineIsKeptNotReported) {
  NdjsonParser parser;
  EXPECT_EQ(Parse({"{\"a\":1}\n{\"b\":"}, parser),
            (std::vector<Line>{{"{\"a\":1}\n", "{\"a\":1}"}}));
  EXPECT_EQ(parser.buffered_bytes(), 5u);
  EXPECT_EQ(Parse({"2}\n"}, parser), (std::vector<Line>{{"{\"b\":2}\n", "{\"b\":2}"}}));
  EXPECT_EQ(parser.buffered_bytes(), 0u);
}

TEST(NdjsonParser, ALineInsideTheChunkIsAViewIntoIt) {
  NdjsonParser parser;
  const std::string chunk = "{\"a\":1}\n";
  const char* seen = nullptr;
  Status status = parser.Feed(chunk, [&](const SseEvent& e) { seen = e.data.data(); });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(seen, chunk.data());
}

TEST(NdjsonParser, ALineOverTheLimitIsAnErrorAndTheParserStaysFailed) {
  constexpr size_t kLimit = 8;
  {
    NdjsonParser parser(kLimit);
    int lines = 0;
    Status status = parser.Feed("{\"a\":1}\n{\"long\":12345}\n", [&](const SseEvent&) { ++lines; });
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kUpstreamBadResponse);
    EXPECT_EQ(lines, 1) << "the line before the over-size one is delivered";
    EXPECT_FALSE(parser.Feed("{}\n", [&](const SseEvent&) { ++lines; }).ok());
    EXPECT_EQ(lines, 1);
  }
  {
    // Over the limit across reads: the buffered part counts.
    NdjsonParser parser(kLimit);
    EXPECT_TRUE(parser.Feed("{\"abc\"", [](const SseEvent&) {}).ok());
    EXPECT_FALSE(parser.Feed(":12}\n", [](const SseEvent&) {}).ok());
  }
  {
    // Exactly at the limit (terminator included) is fine, whole or split.
    NdjsonParser parser(kLimit);
    EXPECT_EQ(Parse({"{\"a\":1}\n"}, parser).size(), 1u);
    EXPECT_EQ(Parse({"{\"a\"", ":1}\n"}, parser).size(), 1u);
  }
}

}  // namespace
}  // namespace turnpike::stream
