#include "core/server_timing.h"

#include <gtest/gtest.h>

namespace turnpike::core {
namespace {

using namespace std::chrono_literals;

TEST(ServerTimingTest, ListsReachedPhasesInMilliseconds) {
  const auto t0 = core::Clock::time_point{} + 1h;
  core::Phases p;
  p.received = t0;
  p.parsed = t0 + 20us;
  p.admitted = t0 + 25us;
  p.upstream_sent = t0 + 40us;
  p.upstream_head = t0 + 40us + 41700us;
  EXPECT_EQ(ServerTimingHeader(p, p.upstream_head + 15us),
            "parse;dur=0.020, route;dur=0.005, upstream_ttfb;dur=41.700, to_client;dur=0.015");
  p.upstream_connected = t0 + 335us;
  EXPECT_NE(ServerTimingHeader(p, p.upstream_head).find("upstream_connect;dur=0.310"),
            std::string::npos);
}

TEST(ServerTimingTest, PhasesNotReachedAreLeftOut) {
  core::Phases p;
  p.received = core::Clock::time_point{} + 1h;
  p.parsed = p.received + 1ms;
  EXPECT_EQ(ServerTimingHeader(p, p.parsed), "parse;dur=1.000");
  EXPECT_LT(PhaseDuration(p, Phase::kUpstreamTtfb).count(), 0);
}

}  // namespace
}  // namespace turnpike::core
