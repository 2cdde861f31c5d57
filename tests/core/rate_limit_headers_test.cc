// The x-ratelimit-* headers as OpenAI sends them, and Retry-After only on a refusal that waiting
// can cure.
#include "core/rate_limit_headers.h"

#include <gtest/gtest.h>

namespace turnpike::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

governance::RateDecision Decision(int64_t limit, int64_t remaining,
                                  std::chrono::nanoseconds reset) {
  governance::RateDecision d;
  d.allowed = true;
  d.limit = limit;
  d.remaining = remaining;
  d.reset = reset;
  return d;
}

TEST(RateLimitHeadersTest, ResetUsesOpenAisFormat) {
  char out[32];
  EXPECT_EQ(FormatRateReset(milliseconds(20), out), "20ms");
  EXPECT_EQ(FormatRateReset(milliseconds(999), out), "999ms");
  EXPECT_EQ(FormatRateReset(milliseconds(1000), out), "1s");
  EXPECT_EQ(FormatRateReset(milliseconds(1001), out), "2s");
  EXPECT_EQ(FormatRateReset(seconds(360), out), "6m0s");
  EXPECT_EQ(FormatRateReset(seconds(-5), out), "0ms");
}

TEST(RateLimitHeadersTest, SixLinesForBothLimits) {
  http::ResponseHeaders headers;
  AddRateLimitHeaders(headers, Decision(600, 599, milliseconds(100)),
                      Decision(150000, 149000, seconds(2)), false);
  EXPECT_EQ(headers.lines(),
            "x-ratelimit-limit-requests: 600\r\n"
            "x-ratelimit-remaining-requests: 599\r\n"
            "x-ratelimit-reset-requests: 100ms\r\n"
            "x-ratelimit-limit-tokens: 150000\r\n"
            "x-ratelimit-remaining-tokens: 149000\r\n"
            "x-ratelimit-reset-tokens: 2s\r\n");
}

TEST(RateLimitHeadersTest, NoLimitNoLinesAndRetryAfterOnlyWhenWaitingHelps) {
  http::ResponseHeaders none;
  AddRateLimitHeaders(none, governance::RateDecision{}, governance::RateDecision{}, false);
  EXPECT_TRUE(none.empty());

  governance::RateDecision refused = Decision(10, 0, seconds(6));
  refused.allowed = false;
  refused.retry_after = milliseconds(1500);
  http::ResponseHeaders wait;
  AddRateLimitHeaders(wait, refused, governance::RateDecision{}, true);
  EXPECT_EQ(wait.Find("retry-after"), "2");
  EXPECT_EQ(wait.Find("x-ratelimit-remaining-requests"), "0");

  refused.exceeds_limit = true;  // no wait admits it: no promise
  http::ResponseHeaders never;
  AddRateLimitHeaders(never, governance::RateDecision{}, refused, true);
  EXPECT_EQ(never.Find("retry-after"), "");
}

}  // namespace
}  // namespace turnpike::core
