// ResponseHeaders: lines as sent, inline until they outgrow the buffer, then spilled with
// everything added before kept in order.
#include "http/response_headers.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::http {
namespace {

TEST(ResponseHeadersTest, LinesAreSentAsAdded) {
  ResponseHeaders headers;
  EXPECT_TRUE(headers.empty());
  headers.Add("x-ratelimit-limit-requests", int64_t{600});
  headers.Add("Retry-After", "3");
  EXPECT_EQ(headers.lines(), "x-ratelimit-limit-requests: 600\r\nRetry-After: 3\r\n");
  EXPECT_EQ(headers.Find("retry-after"), "3");
  EXPECT_EQ(headers.Find("X-RateLimit-Limit-Requests"), "600");
  EXPECT_EQ(headers.Find("allow"), "");
}

TEST(ResponseHeadersTest, OutgrowingTheInlineBufferKeepsEveryLine) {
  ResponseHeaders headers;
  std::string expected;
  for (int i = 0; i < 40; ++i) {  // about 1 KiB, past kInlineBytes
    const std::string name = "x-header-" + std::to_string(i);
    headers.Add(name, int64_t{i} * 1'000'000);
    expected += name + ": " + std::to_string(int64_t{i} * 1'000'000) + "\r\n";
  }
  ASSERT_GT(expected.size(), ResponseHeaders::kInlineBytes);
  EXPECT_EQ(headers.lines(), expected);
  EXPECT_EQ(headers.Find("x-header-39"), "39000000");
}

TEST(ResponseHeadersTest, ALongValueAloneSpills) {
  ResponseHeaders headers;
  const std::string value(ResponseHeaders::kInlineBytes, 'v');
  headers.Add("Server-Timing", value);
  EXPECT_EQ(headers.Find("server-timing"), value);
}

}  // namespace
}  // namespace turnpike::http
