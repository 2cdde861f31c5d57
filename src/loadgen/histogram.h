// A log-linear histogram of durations in nanoseconds, for latency percentiles.
//
// Values below 256 ns are counted exactly; above, each power of two is split into 128 equal
// buckets, so a bucket is at most 1/128 of its lower bound wide. Percentiles report the bucket
// midpoint, hence a relative error of at most 0.4% (stated as "within 1%" in the docs and
// tests). Values above kMaxValue (about 18 minutes) are clamped to it; min/max/sum are exact.
//
// Memory is fixed (about 36 KiB) whatever the number of samples, so a long run never grows.
//
// Ownership and threads: a plain value type with no internal locking. Each load generator
// thread owns one and records into it; after the threads are joined, Merge() adds them up.
#pragma once

#include <cstdint>
#include <vector>

namespace turnpike::loadgen {

class Histogram {
 public:
  static constexpr uint64_t kMaxValue = uint64_t{1} << 40;

  Histogram();

  // Counts one value (nanoseconds). Never fails; clamps values above kMaxValue.
  void Record(uint64_t value_ns);

  // Adds every sample of `other` into this histogram.
  void Merge(const Histogram& other);

  // The value at quantile `q` in [0, 1] (0.99 for p99): the smallest recorded value such that
  // at least q of all samples are at or below it, up to the bucket resolution. Returns the
  // exact max() for q >= 1 and 0 when empty.
  uint64_t Percentile(double q) const;

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const;

  // Exposed for tests: the bucket a value falls into and that bucket's [low, high] range.
  static int BucketIndex(uint64_t value);
  static uint64_t BucketLow(int index);
  static uint64_t BucketHigh(int index);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
};

}  // namespace turnpike::loadgen
