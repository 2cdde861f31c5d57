#include "observability/metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace turnpike::observability {
namespace {

using std::chrono::duration_cast;
using std::chrono::nanoseconds;

nanoseconds Seconds(double s) { return nanoseconds(std::llround(s * 1e9)); }

TEST(CounterTest, Adds) {
  Counter c;
  EXPECT_EQ(c.value(), 0u);
  c.Add();
  c.Add(41);
  EXPECT_EQ(c.value(), 42u);
}

TEST(GaugeTest, AddsAndSets) {
  Gauge g;
  g.Add(5);
  g.Add(-7);
  EXPECT_EQ(g.value(), -2);
  g.Set(10);
  EXPECT_EQ(g.value(), 10);
}

TEST(HistogramTest, BoundaryValuesLandInTheirOwnBucket) {
  Histogram h;  // kLatencyBuckets
  for (double bound : kLatencyBuckets) h.Observe(Seconds(bound));
  const HistogramSnapshot s = h.Snapshot();
  ASSERT_EQ(s.counts.size(), kLatencyBuckets.size() + 1);
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) EXPECT_EQ(s.counts[i], 1u) << "bucket " << i;
  EXPECT_EQ(s.counts.back(), 0u);
  EXPECT_EQ(s.count, kLatencyBuckets.size());
}

TEST(HistogramTest, JustAboveABoundGoesToTheNextBucket) {
  Histogram h;
  for (double bound : kLatencyBuckets) h.Observe(Seconds(bound) + nanoseconds(1));
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.counts[0], 0u);
  for (size_t i = 1; i < s.counts.size(); ++i) EXPECT_EQ(s.counts[i], 1u) << "bucket " << i;
}

TEST(HistogramTest, ZeroNegativeAndHugeValues) {
  Histogram h(std::vector<double>{0.001, 0.01});
  h.Observe(nanoseconds(0));
  h.Observe(nanoseconds(-5));
  h.Observe(std::chrono::hours(1));
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.counts, (std::vector<uint64_t>{2, 0, 1}));
  EXPECT_DOUBLE_EQ(s.sum, 3600.0);
  EXPECT_EQ(s.count, 3u);
}

TEST(HistogramTest, SumCountAndCumulative) {
  Histogram h(std::vector<double>{0.001, 0.01, 0.1});
  h.Observe(std::chrono::microseconds(500));
  h.Observe(std::chrono::milliseconds(5));
  h.Observe(std::chrono::milliseconds(5));
  h.Observe(std::chrono::milliseconds(50));
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_DOUBLE_EQ(s.sum, 0.0605);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.CumulativeCount(0), 1u);
  EXPECT_EQ(s.CumulativeCount(1), 3u);
  EXPECT_EQ(s.CumulativeCount(2), 4u);
  EXPECT_EQ(s.CumulativeCount(3), 4u);  // +Inf
}

TEST(HistogramTest, RejectsBadBounds) {
  EXPECT_THROW(Histogram(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(Histogram(std::vector<double>{0.1, 0.1}), std::invalid_argument);
  EXPECT_THROW(Histogram(std::vector<double>{0.2, 0.1}), std::invalid_argument);
  EXPECT_THROW(Histogram(std::vector<double>{0, 1}), std::invalid_argument);
}

TEST(HistogramSnapshotTest, MergeAddsMatchingBoundsOnly) {
  Histogram a(std::vector<double>{1, 2});
  Histogram b(std::vector<double>{1, 2});
  Histogram other(std::vector<double>{1, 3});
  a.Observe(std::chrono::milliseconds(500));
  b.Observe(std::chrono::milliseconds(1500));
  b.Observe(std::chrono::seconds(5));
  other.Observe(std::chrono::seconds(1));

  HistogramSnapshot total;
  ASSERT_TRUE(total.Merge(a.Snapshot()));  // empty adopts the bounds
  ASSERT_TRUE(total.Merge(b.Snapshot()));
  EXPECT_EQ(total.counts, (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(total.count, 3u);
  EXPECT_DOUBLE_EQ(total.sum, 7.0);
  EXPECT_FALSE(total.Merge(other.Snapshot()));
  EXPECT_EQ(total.count, 3u);
}

TEST(HistogramTest, ReaderSeesMonotonicValuesWhileOneWriterObserves) {
  constexpr int kObservations = 200'000;
  Histogram h;
  Counter c;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kObservations; ++i) {
      h.Observe(std::chrono::microseconds(i % 1000));
      c.Add();
    }
    done.store(true);
  });
  uint64_t last_count = 0;
  uint64_t last_counter = 0;
  while (!done.load()) {
    const uint64_t count = h.Snapshot().count;
    const uint64_t counter = c.value();
    EXPECT_GE(count, last_count);
    EXPECT_GE(counter, last_counter);
    last_count = count;
    last_counter = counter;
  }
  writer.join();
  EXPECT_EQ(h.Snapshot().count, static_cast<uint64_t>(kObservations));
  EXPECT_EQ(c.value(), static_cast<uint64_t>(kObservations));
}

}  // namespace
}  // namespace turnpike::observability
