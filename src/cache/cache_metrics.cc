#include "cache/cache_metrics.h"

namespace turnpike::cache {

void WriteCacheMetrics(observability::PrometheusWriter& writer, std::string_view name,
                       std::span<const CacheProbe* const> probes, const L1Stats& l1) {
  using observability::MetricType;
  struct Series {
    std::string_view family;
    std::string_view help;
    observability::Counter CacheProbe::*counter;
  };
  static constexpr Series kCounters[] = {
      {"turnpike_cache_hits_total", "Answers served from the cache.", &CacheProbe::hits},
      {"turnpike_cache_misses_total", "Answers computed on a cache miss.", &CacheProbe::misses},
      {"turnpike_cache_bypasses_total", "Requests that did not use the cache.",
       &CacheProbe::bypasses},
      {"turnpike_cache_coalesced_total", "Hits that waited for another request's computation.",
       &CacheProbe::coalesced},
      {"turnpike_cache_flight_timeouts_total",
       "Waiters that computed themselves (wait bound reached or too many waiters).",
       &CacheProbe::flight_timeouts},
      {"turnpike_cache_l2_errors_total", "Failed L2 calls (the answer was computed anyway).",
       &CacheProbe::l2_errors},
  };
  for (const Series& series : kCounters) {
    uint64_t total = 0;
    for (const CacheProbe* probe : probes) total += (probe->*series.counter).value();
    writer.Family(series.family, series.help, MetricType::kCounter);
    writer.Sample(series.family, {{"cache", name}}, static_cast<double>(total));
  }
  const struct {
    std::string_view family;
    std::string_view help;
    MetricType type;
    uint64_t value;
  } l1_series[] = {
      {"turnpike_cache_evictions_total", "L1 entries evicted by the byte caps.",
       MetricType::kCounter, l1.evictions},
      {"turnpike_cache_stale_total", "L1 entries dropped as of an old generation or expired.",
       MetricType::kCounter, l1.stale},
      {"turnpike_cache_rejected_total", "Answers too large to store in L1.", MetricType::kCounter,
       l1.rejected},
      {"turnpike_cache_bytes", "L1 bytes charged.", MetricType::kGauge, l1.bytes},
      {"turnpike_cache_entries", "L1 entries.", MetricType::kGauge, l1.entries},
  };
  for (const auto& series : l1_series) {
    writer.Family(series.family, series.help, series.type);
    writer.Sample(series.family, {{"cache", name}}, static_cast<double>(series.value));
  }
}

}  // namespace turnpike::cache
