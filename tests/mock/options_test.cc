// Option parsing and the pure pieces: durations, addresses, validation, faults, renderer.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock/fault.h"
#include "mock/mock_options.h"
#include "mock/openai_render.h"

namespace turnpike::mock {
namespace {

TEST(MockOptions, ParsesDurations) {
  EXPECT_EQ(ParseDuration("--d", "0").value(), Millis(0));
  EXPECT_EQ(ParseDuration("--d", "50ms").value(), Millis(50));
  EXPECT_EQ(ParseDuration("--d", "2s").value(), Millis(2'000));
  EXPECT_EQ(ParseDuration("--d", "1m").value(), Millis(60'000));
  for (std::string_view bad : {"", "50", "ms", "-5ms", "5h", "5 ms", "1.5s"}) {
    Result<Millis> parsed = ParseDuration("--first-token-delay", bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("--first-token-delay"), std::string::npos);
  }
}

TEST(MockOptions, ParsesListenAddresses) {
  Result<HostPort> v4 = ParseHostPort("127.0.0.1:9000");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9000);
  Result<HostPort> v6 = ParseHostPort("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  for (std::string_view bad : {"", "9000", ":9000", "host:", "host:70000", "host:12x", "[::1:80"}) {
    EXPECT_FALSE(ParseHostPort(bad).ok()) << bad;
  }
}

TEST(MockOptions, ValidatesRanges) {
  EXPECT_TRUE(Validate(MockOptions{}).ok());
  MockOptions rates;
  rates.fail_rate = 0.5;
  rates.rate_limit_rate = 0.3;
  rates.reset_rate = 0.2;
  EXPECT_TRUE(Validate(rates).ok());
  rates.reset_rate = 0.3;
  EXPECT_FALSE(Validate(rates).ok());
  MockOptions negative;
  negative.fail_rate = -0.1;
  EXPECT_FALSE(Validate(negative).ok());
  MockOptions no_workers;
  no_workers.workers = 0;
  EXPECT_FALSE(Validate(no_workers).ok());
  MockOptions too_many;
  too_many.tokens = kMaxTokens + 1;
  EXPECT_FALSE(Validate(too_many).ok());
}

TEST(MockFaults, NamesRoundTrip) {
  for (size_t k = 1; k < kFaultKindCount; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    ASSERT_FALSE(FaultName(kind).empty());
    EXPECT_EQ(ParseFault(FaultName(kind)), kind);
  }
  EXPECT_FALSE(ParseFault("").has_value());
  EXPECT_FALSE(ParseFault("RESET").has_value());
}

TEST(MockFaults, DrawFollowsTheRates) {
  MockOptions options;
  std::mt19937_64 random(1);
  EXPECT_EQ(DrawFault(options, true, random), FaultKind::kNone);
  options.rate_limit_rate = 1;
  EXPECT_EQ(DrawFault(options, false, random), FaultKind::kHttp429);
  options.rate_limit_rate = 0;
  options.reset_rate = 1;
  EXPECT_EQ(DrawFault(options, true, random), FaultKind::kReset);
  EXPECT_EQ(DrawFault(options, false, random), FaultKind::kNone);
}

TEST(MockFaults, DrawSharesMatchRates) {
  MockOptions options;
  options.fail_rate = 0.25;
  std::mt19937_64 random(7);
  constexpr int kDraws = 10'000;
  int failed = 0;
  for (int i = 0; i < kDraws; ++i)
    failed += DrawFault(options, true, random) == FaultKind::kHttp500;
  // Seeded: deterministic; the band only guards against an off-by-a-lot mapping.
  EXPECT_GT(failed, kDraws / 5);
  EXPECT_LT(failed, kDraws * 3 / 10);
}

TEST(MockRender, ChunksAreValidJsonAndReuseTheBuffer) {
  ReplyIdentity identity{"chatcmpl-mock-0-1", "call_mock_0-1", 42, "m\"x", {}};
  ChunkRenderer renderer(identity, true);
  const std::string_view token = renderer.Token(12);
  ASSERT_TRUE(token.starts_with("data: "));
  ASSERT_TRUE(token.ends_with("\n\n"));
  boost::json::value chunk = boost::json::parse(token.substr(6));
  EXPECT_EQ(chunk.at("model"), "m\"x");
  EXPECT_EQ(chunk.at("created"), 42);
  EXPECT_EQ(chunk.at("choices").at(0).at("delta").at("content"), "tok12 ");
  EXPECT_TRUE(chunk.at("usage").is_null());
  const char* first = token.data();
  EXPECT_EQ(renderer.Token(13).data(), first) << "a token must not reallocate";
}

TEST(MockRender, ErrorEnvelope) {
  boost::json::value doc =
      boost::json::parse(RenderErrorBody(Error{ErrorCode::kRateLimited, "slow down", ""}));
  EXPECT_EQ(doc.at("error").at("message"), "slow down");
  EXPECT_EQ(doc.at("error").at("type"), "rate_limit_error");
  EXPECT_TRUE(doc.at("error").at("param").is_null());
  EXPECT_EQ(doc.at("error").at("code"), "rate_limited");
}

}  // namespace
}  // namespace turnpike::mock
