// `turnpike bench --http2` against the mock provider served in-process (HTTP/2 by prior
// knowledge): -c connections with --streams-per-conn streams each, counted at both ends. Every
// run is bounded by --requests, so the assertions are on counts, never on timings.
#include <gtest/gtest.h>

#include <string>

#include "loadgen/driver.h"
#include "loadgen/request_template.h"
#include "mock_client.h"

namespace turnpike::loadgen {
namespace {

TEST(Http2BenchTest, StreamsShareTheConnectionsAndEveryRequestIsCounted) {
  mock::MockOptions mock_options;
  mock_options.tokens = 3;
  mock::testing::RunningMock mock(mock_options);
  BenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(mock.port()) + "/v1/chat/completions";
  o.http2 = true;
  o.connections = 2;
  o.streams_per_connection = 5;
  o.duration_s = 60;  // far longer than the run: --requests ends it
  o.max_requests = 60;
  o.stream_every = 2;
  o.body = std::string(kDefaultBody);
  o.quiet = true;
  const BenchResult r = RunBench(o, nullptr);
  EXPECT_EQ(r.stats.ok(), 60u);
  EXPECT_EQ(r.stats.failed(), 0u);
  EXPECT_EQ(r.stats.streams_ok, 30u);
  EXPECT_EQ(r.stats.ttft.count(), 30u);
  const http::Http2Totals seen = mock.server().http2_totals();
  EXPECT_EQ(seen.connections, 2u);  // 10 streams, at most 5 per connection
  EXPECT_EQ(seen.streams, 60u);
}

TEST(Http2BenchTest, RefusesAgentRunsAndZeroStreams) {
  BenchOptions o;
  o.url = "http://127.0.0.1:1/";
  o.body = std::string(kDefaultBody);
  o.http2 = true;
  o.agent = "a1";
  EXPECT_THROW(RunBench(o, nullptr), std::invalid_argument);
  o.agent.clear();
  o.streams_per_connection = 0;
  EXPECT_THROW(RunBench(o, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace turnpike::loadgen
