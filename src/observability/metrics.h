// Metric primitives (Counter, Gauge, Histogram) and the Prometheus text writer.
// Implementation: histogram.cc, prometheus_writer.cc.
//
// Single-writer rule: every probe object has exactly ONE writing thread, the worker that owns
// it (each worker owns its own probes; see DESIGN.md "Threads have owners"). Writes are a
// relaxed load + relaxed store of a std::atomic, never a locked read-modify-write, so the
// write path costs a few plain instructions and takes no lock. Any thread (the /metrics
// scraper) may read concurrently: reads are relaxed loads, so a scrape sees each value as of
// some recent moment, and a histogram snapshot may be mid-update (sum a step apart from the
// bucket counts). Two threads writing the same probe lose updates: that is a bug in the
// caller. Totals across workers are formed at scrape time by summing values and merging
// HistogramSnapshots.
//
// Ownership: probes are plain members of their module's probe struct; they are neither
// copyable nor movable (atomics), so hold them by value inside an object with a stable address.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace turnpike::observability {

// Monotonic count. Add() from the owning thread only; value() from any thread.
class Counter {
 public:
  void Add(uint64_t n = 1) { value_.store(value_.load(std::memory_order_relaxed) + n, kRelaxed); }
  uint64_t value() const { return value_.load(kRelaxed); }

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down (open connections, in-flight requests). Add()/Set() from the
// owning thread only; value() from any thread. Per-worker gauges are summed when scraped, so a
// single worker's value may be negative (e.g. a connection handed between workers).
class Gauge {
 public:
  void Add(int64_t delta) {
    value_.store(value_.load(std::memory_order_relaxed) + delta, kRelaxed);
  }
  void Set(int64_t value) { value_.store(value, kRelaxed); }
  int64_t value() const { return value_.load(kRelaxed); }

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;
  std::atomic<int64_t> value_{0};
};

// Default latency bucket upper bounds, in seconds (50us .. 60s).
inline constexpr std::array<double, 19> kLatencyBuckets = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,     0.25,   0.5,     1,      2.5,   5,      10,    30,   60};

// A point-in-time copy of a Histogram, owned by the reader; plain data, freely copyable.
struct HistogramSnapshot {
  std::vector<double> upper_bounds;  // seconds, strictly increasing; +Inf is implicit
  std::vector<uint64_t> counts;      // per bucket, NOT cumulative; size upper_bounds + 1,
                                     // the last one counting values above every bound
  double sum = 0;                    // seconds
  uint64_t count = 0;                // == sum of counts

  // Cumulative count of bucket i (values <= upper_bounds[i]; i == upper_bounds.size() is +Inf).
  uint64_t CumulativeCount(size_t i) const;

  // Adds `other` into this. An empty (default) snapshot adopts other's bounds. Returns false
  // and changes nothing if the bounds differ.
  bool Merge(const HistogramSnapshot& other);
};

// Distribution of durations over fixed buckets. A value lands in the first bucket whose upper
// bound is >= the value (Prometheus `le` semantics), so a value equal to a bound counts in that
// bound's bucket. Observe() from the owning thread only; Snapshot() from any thread.
class Histogram {
 public:
  // Throws std::invalid_argument if the bounds are empty, not positive or not strictly
  // increasing (a programming error found at start-up).
  explicit Histogram(std::span<const double> upper_bounds_seconds = kLatencyBuckets);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Negative durations count as 0.
  void Observe(std::chrono::nanoseconds value);

  HistogramSnapshot Snapshot() const;

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;

  // Constant after construction.
  std::vector<double> bounds_seconds_;
  std::vector<int64_t> bounds_ns_;
  // Written by the owning thread only.
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds + 1 (+Inf)
  std::atomic<uint64_t> sum_ns_{0};
};

// One label pair of a sample. Views: valid for the duration of the call only.
struct Label {
  std::string_view name;
  std::string_view value;
};

// Builds one scrape in the Prometheus text exposition format 0.0.4. Single-threaded (used by
// the scraper); cheap to construct per scrape. Metric and label names are the caller's
// constants and are not validated; label values and help text are escaped.
//
//   PrometheusWriter w;
//   w.Family("turnpike_requests_total", "Requests served.", MetricType::kCounter);
//   w.Sample("turnpike_requests_total", {{"status", "200"}}, 42);
//   std::string body = w.Take();
enum class MetricType { kCounter, kGauge, kHistogram, kUntyped };

class PrometheusWriter {
 public:
  // Emits "# HELP" and "# TYPE" lines for `name`, once per name until Take().
  void Family(std::string_view name, std::string_view help, MetricType type);

  // `name{labels} value`. Integral values print without a decimal point; NaN and infinities
  // print as NaN, +Inf, -Inf.
  void Sample(std::string_view name, std::span<const Label> labels, double value);
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    Sample(name, std::span<const Label>(labels.begin(), labels.size()), value);
  }

  // `name_bucket{labels,le="..."}` for every bound (cumulative) and le="+Inf", then
  // `name_sum` and `name_count`.
  void WriteHistogram(std::string_view name, std::span<const Label> labels,
                      const HistogramSnapshot& snapshot);
  void WriteHistogram(std::string_view name, std::initializer_list<Label> labels,
                      const HistogramSnapshot& snapshot) {
    WriteHistogram(name, std::span<const Label>(labels.begin(), labels.size()), snapshot);
  }

  // Returns the text built so far and resets the writer (including the set of families seen).
  std::string Take();

 private:
  void AppendLabels(std::span<const Label> labels, std::string_view le);

  std::string out_;
  std::vector<std::string> families_;  // a scrape has tens of families: linear search is fine
};

}  // namespace turnpike::observability
