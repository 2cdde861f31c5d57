// The cache's series in /metrics, per cache name (label `cache`):
//   turnpike_cache_hits_total          counter  answers served from the cache (L1, L2, or a
//                                               single-flight leader's result)
//   turnpike_cache_misses_total        counter  answers computed (and offered to Fill)
//   turnpike_cache_bypasses_total      counter  requests that did not use the cache
//   turnpike_cache_coalesced_total     counter  hits that waited for a leader (single flight)
//   turnpike_cache_flight_timeouts_total counter waiters that gave up at the bound, or found
//                                               too many waiters, and computed themselves
//   turnpike_cache_l2_errors_total     counter  L2 calls that failed (answer computed anyway)
//   turnpike_cache_evictions_total     counter  L1 entries evicted by the byte caps
//   turnpike_cache_stale_total         counter  L1 entries dropped as old-generation/expired
//   turnpike_cache_rejected_total      counter  answers too large to store in L1
//   turnpike_cache_bytes               gauge    L1 bytes charged
//   turnpike_cache_entries             gauge    L1 entries
// The counters are per worker (observability's single-writer rule) and summed when scraped;
// the L1 figures come from the shared L1 (l1_cache.h).
#pragma once

#include <span>
#include <string_view>

#include "cache/l1_cache.h"
#include "observability/metrics.h"

namespace turnpike::cache {

struct CacheProbe {
  observability::Counter hits;
  observability::Counter misses;
  observability::Counter bypasses;
  observability::Counter coalesced;
  observability::Counter flight_timeouts;
  observability::Counter l2_errors;
};

void WriteCacheMetrics(observability::PrometheusWriter& writer, std::string_view name,
                       std::span<const CacheProbe* const> probes, const L1Stats& l1);

}  // namespace turnpike::cache
