#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "observability/metrics.h"

namespace turnpike::observability {
namespace {

TEST(PrometheusWriterTest, ExactTextForASmallScrape) {
  PrometheusWriter w;
  w.Family("tp_requests_total", "Requests served.", MetricType::kCounter);
  w.Sample("tp_requests_total", {{"status", "200"}, {"model", "m"}}, 42);
  w.Family("tp_requests_total", "Requests served.", MetricType::kCounter);  // no repeat
  w.Sample("tp_requests_total", {{"status", "500"}, {"model", "m"}}, 1);
  w.Family("tp_open_connections", "Open client connections.", MetricType::kGauge);
  w.Sample("tp_open_connections", {}, -3);
  w.Family("tp_latency_seconds", "Latency.", MetricType::kHistogram);
  Histogram h(std::vector<double>{0.001, 0.01});
  h.Observe(std::chrono::milliseconds(1));
  h.Observe(std::chrono::milliseconds(5));
  h.Observe(std::chrono::seconds(2));
  w.WriteHistogram("tp_latency_seconds", {{"model", "m"}}, h.Snapshot());
  w.WriteHistogram("tp_idle_seconds", {}, Histogram(std::vector<double>{0.5}).Snapshot());

  EXPECT_EQ(w.Take(),
            "# HELP tp_requests_total Requests served.\n"
            "# TYPE tp_requests_total counter\n"
            "tp_requests_total{status=\"200\",model=\"m\"} 42\n"
            "tp_requests_total{status=\"500\",model=\"m\"} 1\n"
            "# HELP tp_open_connections Open client connections.\n"
            "# TYPE tp_open_connections gauge\n"
            "tp_open_connections -3\n"
            "# HELP tp_latency_seconds Latency.\n"
            "# TYPE tp_latency_seconds histogram\n"
            "tp_latency_seconds_bucket{model=\"m\",le=\"0.001\"} 1\n"
            "tp_latency_seconds_bucket{model=\"m\",le=\"0.01\"} 2\n"
            "tp_latency_seconds_bucket{model=\"m\",le=\"+Inf\"} 3\n"
            "tp_latency_seconds_sum{model=\"m\"} 2.006\n"
            "tp_latency_seconds_count{model=\"m\"} 3\n"
            "tp_idle_seconds_bucket{le=\"0.5\"} 0\n"
            "tp_idle_seconds_bucket{le=\"+Inf\"} 0\n"
            "tp_idle_seconds_sum 0\n"
            "tp_idle_seconds_count 0\n");
}

TEST(PrometheusWriterTest, EscapesLabelValuesAndHelp) {
  PrometheusWriter w;
  w.Family("x", "a \\ b\nc \"q\"", MetricType::kUntyped);
  w.Sample("x", {{"v", "a\\b\"c\nd"}}, 1);
  EXPECT_EQ(w.Take(),
            "# HELP x a \\\\ b\\nc \"q\"\n"
            "# TYPE x untyped\n"
            "x{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(PrometheusWriterTest, SpecialAndFractionalValues) {
  PrometheusWriter w;
  w.Sample("a", {}, std::numeric_limits<double>::quiet_NaN());
  w.Sample("b", {}, std::numeric_limits<double>::infinity());
  w.Sample("c", {}, -std::numeric_limits<double>::infinity());
  w.Sample("d", {}, 0.25);
  w.Sample("e", {}, 1e21);
  EXPECT_EQ(w.Take(), "a NaN\nb +Inf\nc -Inf\nd 0.25\ne 1e+21\n");
}

TEST(PrometheusWriterTest, TakeResetsFamilies) {
  PrometheusWriter w;
  w.Family("x", "h", MetricType::kGauge);
  EXPECT_FALSE(w.Take().empty());
  w.Family("x", "h", MetricType::kGauge);
  EXPECT_EQ(w.Take(), "# HELP x h\n# TYPE x gauge\n");
  EXPECT_EQ(w.Take(), "");
}

TEST(PrometheusWriterTest, MergedDefaultLatencyBuckets) {
  Histogram a;
  Histogram b;
  a.Observe(std::chrono::microseconds(50));
  b.Observe(std::chrono::seconds(61));
  HistogramSnapshot total;
  ASSERT_TRUE(total.Merge(a.Snapshot()));
  ASSERT_TRUE(total.Merge(b.Snapshot()));
  PrometheusWriter w;
  w.WriteHistogram("h", {}, total);
  const std::string text = w.Take();
  EXPECT_NE(text.find("h_bucket{le=\"5e-05\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_bucket{le=\"60\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_bucket{le=\"+Inf\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_count 2\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace turnpike::observability
