// Every door's request metrics: one RequestProbe per worker (single writer), summed by the ops
// door's /metrics over all workers through ProbeRegistry. The `route` label is the router's
// (core/router.h: one label per route a door declares, "other" for unmatched paths).
//
// Series (Prometheus names):
//   turnpike_requests_total{route,model,status}        counter
//   turnpike_requests_in_flight                         gauge (the autoscaling signal)
//   turnpike_accept_errors_total{reason}                counter: failed accepts (written by app/)
//   turnpike_gateway_overhead_seconds                   histogram: time the gateway itself spent
//       (request read -> upstream request written, minus a new connection's connect time,
//        plus upstream head -> client head)
//   turnpike_upstream_ttfb_seconds                      histogram: upstream request written -> head
//   turnpike_ttft_seconds                               histogram: request read -> first token out
//   turnpike_request_duration_seconds                   histogram: request read -> response end
//   turnpike_upstream_retries_total                     counter: attempts after the first
//   turnpike_client_cancels_total                       counter: clients gone before the end
// plus the upstream pool's counters (upstream/pool.h), the access log's drops, and with
// governance on the call log's drops and the store's series (control/governance_service.h),
// and each response cache's series (cache/cache_metrics.h).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "observability/metrics.h"
#include "store/call_log_buffer.h"
#include "upstream/pool.h"

namespace turnpike::core {

// Status codes get a dense slot; codes not listed fall into a per-class slot ("2xx", ...).
constexpr std::array<int, 17> kTrackedStatuses = {200, 400, 401, 403, 404, 405, 408, 413, 415,
                                                  429, 431, 499, 500, 502, 503, 504, 0};
constexpr size_t kPhaseCount = 5;  // == Phase::kCount, checked in request_probe.cc
constexpr size_t kStatusSlots = kTrackedStatuses.size() + 3;  // + "2xx" "4xx" "5xx"
size_t StatusSlot(int status);
std::string StatusLabel(size_t slot);

class RequestProbe {
 public:
  // `route_count` route slots (Router::labels()); `model_count` known models get slots
  // 0..n-1; slot n is "unknown" (also non-model routes).
  RequestProbe(size_t route_count, size_t model_count);

  void CountRequest(size_t route_slot, size_t model_slot, int status) {
    requests_[Index(route_slot, model_slot, StatusSlot(status))].Add();
  }
  size_t unknown_model_slot() const { return model_count_; }

  observability::Histogram overhead{observability::kLatencyBuckets};
  observability::Histogram upstream_ttfb{observability::kLatencyBuckets};
  observability::Histogram ttft{observability::kLatencyBuckets};
  observability::Histogram duration{observability::kLatencyBuckets};
  // Indexed by core::Phase (server_timing.h): the same phases as the Server-Timing header.
  std::array<observability::Histogram, kPhaseCount> phases;
  observability::Counter retries;
  observability::Counter client_cancels;

  uint64_t requests(size_t route_slot, size_t model_slot, size_t status_slot) const {
    return requests_[Index(route_slot, model_slot, status_slot)].value();
  }
  size_t model_count() const { return model_count_; }
  size_t route_count() const { return route_count_; }

 private:
  size_t Index(size_t route_slot, size_t model_slot, size_t status_slot) const {
    return (route_slot * (model_count_ + 1) + model_slot) * kStatusSlots + status_slot;
  }
  const size_t route_count_;
  const size_t model_count_;
  std::unique_ptr<observability::Counter[]> requests_;
};

// Every worker's probes, registered at start-up (before the workers run) and read by /metrics.
struct ProbeRegistry {
  std::vector<std::string> route_labels;  // Router::labels()
  std::vector<std::string> model_names;
  std::vector<const RequestProbe*> requests;  // every worker's
  std::vector<const upstream::PoolProbe*> pools;
  // Each response cache's series (cache/cache.h: Cache::WriteMetrics), added by app/.
  std::vector<std::function<void(observability::PrometheusWriter&)>> cache_metrics;
  // Each feature's own series (app/feature.h FeatureContext::metrics).
  std::vector<std::function<void(observability::PrometheusWriter&)>> feature_metrics;
  std::function<int64_t()> in_flight;
  std::function<uint64_t()> access_log_dropped;
  std::vector<const store::CallLogBuffer*> call_logs;  // governance on: every worker's
  std::function<void(observability::PrometheusWriter&)> store_metrics;
  std::function<void(observability::PrometheusWriter&)> counters_metrics;  // fleet mode: Redis
};

std::string RenderMetrics(const ProbeRegistry& registry);

}  // namespace turnpike::core
