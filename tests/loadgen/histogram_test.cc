#include "loadgen/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace turnpike::loadgen {
namespace {

// The documented bound is 1%; the design gives 1/256 (half a bucket of 1/128).
constexpr double kStatedRelativeError = 0.01;
constexpr double kDesignRelativeError = 1.0 / 256;

uint64_t ExactPercentile(std::vector<uint64_t> values, double q) {
  std::sort(values.begin(), values.end());
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * values.size())));
  return values[rank - 1];
}

void ExpectPercentilesClose(const std::vector<uint64_t>& values, double tolerance) {
  Histogram h;
  for (uint64_t v : values) h.Record(v);
  for (double q : {0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999}) {
    const double exact = static_cast<double>(ExactPercentile(values, q));
    const double got = static_cast<double>(h.Percentile(q));
    EXPECT_LE(std::abs(got - exact), exact * tolerance) << "q=" << q << " exact=" << exact;
  }
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h.count(), values.size());
}

TEST(HistogramTest, EmptyReportsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(0.5), 50u);
  EXPECT_EQ(h.Percentile(0.99), 99u);
  EXPECT_EQ(h.Percentile(1.0), 100u);
  EXPECT_DOUBLE_EQ(h.Mean(), 50.5);
}

TEST(HistogramTest, BucketsTileTheRangeWithBoundedWidth) {
  for (int i = 0; i < Histogram::BucketIndex(Histogram::kMaxValue); ++i) {
    ASSERT_EQ(Histogram::BucketHigh(i) + 1, Histogram::BucketLow(i + 1)) << i;
    const uint64_t low = Histogram::BucketLow(i);
    const uint64_t width = Histogram::BucketHigh(i) - low + 1;
    ASSERT_LE(static_cast<double>(width - 1), std::max(1.0, low * 2 * kDesignRelativeError)) << i;
    ASSERT_EQ(Histogram::BucketIndex(low), i);
    ASSERT_EQ(Histogram::BucketIndex(Histogram::BucketHigh(i)), i);
  }
}

TEST(HistogramTest, UniformMicrosecondsToSeconds) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> dist(1'000, 1'000'000'000);
  std::vector<uint64_t> values(200'000);
  for (auto& v : values) v = dist(rng);
  ExpectPercentilesClose(values, kDesignRelativeError);
}

TEST(HistogramTest, LogNormalLatencies) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(2e6), 0.8);  // around 2 ms, long tail
  std::vector<uint64_t> values(200'000);
  for (auto& v : values) v = static_cast<uint64_t>(dist(rng));
  ExpectPercentilesClose(values, kStatedRelativeError);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  Histogram a;
  Histogram b;
  Histogram all;
  for (uint64_t v = 1; v < 50'000; v += 7) {
    (v % 2 ? a : b).Record(v * 1000);
    all.Record(v * 1000);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.min(), all.min());
  for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(a.Percentile(q), all.Percentile(q));
}

TEST(HistogramTest, ClampsHugeValues) {
  Histogram h;
  h.Record(UINT64_MAX);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.max(), UINT64_MAX);
  EXPECT_EQ(Histogram::BucketIndex(UINT64_MAX), Histogram::BucketIndex(Histogram::kMaxValue));
}

}  // namespace
}  // namespace turnpike::loadgen
