// Histogram and HistogramSnapshot from metrics.h.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "observability/metrics.h"

namespace turnpike::observability {
namespace {

constexpr double kNanosPerSecond = 1e9;

}  // namespace

Histogram::Histogram(std::span<const double> upper_bounds_seconds)
    : bounds_seconds_(upper_bounds_seconds.begin(), upper_bounds_seconds.end()),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_seconds.size() + 1)) {
  if (bounds_seconds_.empty()) throw std::invalid_argument("histogram needs at least one bucket");
  for (size_t i = 0; i < bounds_seconds_.size(); ++i) {
    const double bound = bounds_seconds_[i];
    if (!(bound > 0) || !std::isfinite(bound) || (i > 0 && bound <= bounds_seconds_[i - 1])) {
      throw std::invalid_argument("histogram bounds must be positive and strictly increasing");
    }
    bounds_ns_.push_back(std::llround(bound * kNanosPerSecond));
  }
}

void Histogram::Observe(std::chrono::nanoseconds value) {
  const int64_t ns = std::max<int64_t>(value.count(), 0);
  // First bound >= value: a value equal to a bound belongs to that bound's bucket.
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_ns_.begin(), bounds_ns_.end(), ns) - bounds_ns_.begin());
  std::atomic<uint64_t>& count = counts_[bucket];
  count.store(count.load(kRelaxed) + 1, kRelaxed);
  sum_ns_.store(sum_ns_.load(kRelaxed) + static_cast<uint64_t>(ns), kRelaxed);
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.upper_bounds = bounds_seconds_;
  snapshot.counts.resize(bounds_seconds_.size() + 1);
  for (size_t i = 0; i < snapshot.counts.size(); ++i) {
    snapshot.counts[i] = counts_[i].load(kRelaxed);
    snapshot.count += snapshot.counts[i];
  }
  snapshot.sum = static_cast<double>(sum_ns_.load(kRelaxed)) / kNanosPerSecond;
  return snapshot;
}

uint64_t HistogramSnapshot::CumulativeCount(size_t i) const {
  uint64_t total = 0;
  for (size_t b = 0; b <= i && b < counts.size(); ++b) total += counts[b];
  return total;
}

bool HistogramSnapshot::Merge(const HistogramSnapshot& other) {
  if (upper_bounds.empty() && counts.empty()) {
    *this = other;
    return true;
  }
  if (upper_bounds != other.upper_bounds || counts.size() != other.counts.size()) return false;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
  sum += other.sum;
  count += other.count;
  return true;
}

}  // namespace turnpike::observability
