// Write-path cost of the metric primitives (single writer: relaxed load + store).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>

#include "observability/metrics.h"

namespace {

using turnpike::observability::Counter;
using turnpike::observability::Histogram;
using turnpike::observability::HistogramSnapshot;
using turnpike::observability::PrometheusWriter;

void BM_CounterAdd(benchmark::State& state) {
  Counter counter;
  for (auto _ : state) counter.Add();
  benchmark::DoNotOptimize(counter.value());
}
BENCHMARK(BM_CounterAdd);

// What Counter::Add avoids: a locked read-modify-write, needed only with several writers.
void BM_AtomicFetchAddForComparison(benchmark::State& state) {
  std::atomic<uint64_t> value{0};
  for (auto _ : state) value.fetch_add(1, std::memory_order_relaxed);
  benchmark::DoNotOptimize(value.load());
}
BENCHMARK(BM_AtomicFetchAddForComparison);

// Values spread over the default latency buckets, so the bucket search is not always the same.
void BM_HistogramObserve(benchmark::State& state) {
  Histogram histogram;
  constexpr int kValues = 64;
  std::chrono::nanoseconds values[kValues];
  for (int i = 0; i < kValues; ++i) values[i] = std::chrono::microseconds(37) * (i * i * i + 1);
  int i = 0;
  for (auto _ : state) {
    histogram.Observe(values[i]);
    i = (i + 1) % kValues;
  }
  benchmark::DoNotOptimize(histogram.Snapshot().count);
}
BENCHMARK(BM_HistogramObserve);

void BM_HistogramSnapshotAndWrite(benchmark::State& state) {
  Histogram histogram;
  histogram.Observe(std::chrono::milliseconds(3));
  PrometheusWriter writer;
  for (auto _ : state) {
    writer.WriteHistogram("turnpike_request_duration_seconds", {{"model", "gpt-4o-mini"}},
                          histogram.Snapshot());
    benchmark::DoNotOptimize(writer.Take());
  }
}
BENCHMARK(BM_HistogramSnapshotAndWrite);

}  // namespace
