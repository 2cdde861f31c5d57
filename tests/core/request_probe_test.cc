#include "core/request_probe.h"

#include <gtest/gtest.h>

namespace turnpike::core {
namespace {

TEST(RequestProbeTest, StatusesGetSlotsAndOthersTheirClass) {
  EXPECT_EQ(StatusLabel(StatusSlot(200)), "200");
  EXPECT_EQ(StatusLabel(StatusSlot(499)), "499");
  EXPECT_EQ(StatusLabel(StatusSlot(201)), "2xx");
  EXPECT_EQ(StatusLabel(StatusSlot(418)), "4xx");
  EXPECT_EQ(StatusLabel(StatusSlot(599)), "5xx");
  EXPECT_EQ(StatusLabel(StatusSlot(302)), "other");
}

TEST(RequestProbeTest, RenderSumsWorkersPerRouteModelAndStatus) {
  RequestProbe w0(2, 2);
  RequestProbe w1(2, 2);
  w0.CountRequest(0, 1, 200);
  w1.CountRequest(0, 1, 200);
  w1.CountRequest(0, w1.unknown_model_slot(), 404);
  w0.retries.Add(3);
  ProbeRegistry registry;
  registry.route_labels = {"chat_completions", "other"};
  registry.model_names = {"a", "b"};
  registry.requests = {&w0, &w1};
  registry.in_flight = [] { return int64_t{5}; };
  const std::string text = RenderMetrics(registry);
  EXPECT_NE(
      text.find(
          "turnpike_requests_total{route=\"chat_completions\",model=\"b\",status=\"200\"} 2\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "turnpike_requests_total{route=\"chat_completions\",model=\"\",status=\"404\"} 1\n"),
      std::string::npos);
  EXPECT_EQ(text.find("model=\"a\""), std::string::npos) << "series with no requests are left out";
  EXPECT_NE(text.find("turnpike_requests_in_flight 5\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_upstream_retries_total 3\n"), std::string::npos);
}

TEST(RequestProbeTest, RenderIncludesEachCachesSeries) {
  ProbeRegistry registry;
  for (const char* name : {"search", "llm"}) {
    registry.cache_metrics.push_back([name](observability::PrometheusWriter& w) {
      w.Family("turnpike_cache_hits_total", "Hits.", observability::MetricType::kCounter);
      w.Sample("turnpike_cache_hits_total", {{"cache", name}}, 1);
    });
  }
  const std::string text = RenderMetrics(registry);
  EXPECT_NE(text.find("turnpike_cache_hits_total{cache=\"search\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_cache_hits_total{cache=\"llm\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::core
