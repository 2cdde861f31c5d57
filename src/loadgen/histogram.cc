#include "loadgen/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace turnpike::loadgen {
namespace {

// 2^kPrecisionBits buckets per power of two; values below 2^(kPrecisionBits + 1) are exact.
constexpr int kPrecisionBits = 7;
constexpr uint64_t kSubBuckets = uint64_t{1} << kPrecisionBits;
constexpr uint64_t kExactLimit = kSubBuckets * 2;

}  // namespace

int Histogram::BucketIndex(uint64_t value) {
  value = std::min(value, kMaxValue);
  if (value < kExactLimit) return static_cast<int>(value);
  // The top kPrecisionBits + 1 bits select the bucket; `shift` counts the dropped low bits.
  const int shift = std::bit_width(value) - 1 - kPrecisionBits;
  const uint64_t mantissa = value >> shift;  // in [kSubBuckets, 2 * kSubBuckets)
  return static_cast<int>(static_cast<uint64_t>(shift) * kSubBuckets + mantissa);
}

uint64_t Histogram::BucketLow(int index) {
  const uint64_t i = static_cast<uint64_t>(index);
  if (i < kExactLimit) return i;
  const uint64_t shift = i / kSubBuckets - 1;
  const uint64_t mantissa = i - shift * kSubBuckets;
  return mantissa << shift;
}

uint64_t Histogram::BucketHigh(int index) {
  if (static_cast<uint64_t>(index) < kExactLimit) return static_cast<uint64_t>(index);
  return BucketLow(index + 1) - 1;
}

Histogram::Histogram() : counts_(BucketIndex(kMaxValue) + 1, 0) {}

void Histogram::Record(uint64_t value_ns) {
  ++counts_[BucketIndex(value_ns)];
  ++count_;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
  sum_ += static_cast<double>(value_ns);
}

void Histogram::Merge(const Histogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

uint64_t Histogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 1.0) return max_;
  if (q <= 0.0) return min_;
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * count_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen < rank) continue;
    const int index = static_cast<int>(i);
    const uint64_t mid = BucketLow(index) + (BucketHigh(index) - BucketLow(index)) / 2;
    // The midpoint may lie outside what was actually seen; the exact extremes are better.
    return std::clamp(mid, min_, max_);
  }
  return max_;
}

double Histogram::Mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }

}  // namespace turnpike::loadgen
