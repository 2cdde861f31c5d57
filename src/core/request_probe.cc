#include "core/request_probe.h"

#include "core/server_timing.h"
#include "observability/allocation_count.h"

namespace turnpike::core {
namespace obs = observability;
static_assert(kPhaseCount == static_cast<size_t>(Phase::kCount));

size_t StatusSlot(int status) {
  for (size_t i = 0; i + 1 < kTrackedStatuses.size(); ++i) {
    if (kTrackedStatuses[i] == status) return i;
  }
  const size_t class_base = kTrackedStatuses.size();
  if (status >= 200 && status < 300) return class_base;
  if (status >= 400 && status < 500) return class_base + 1;
  if (status >= 500 && status < 600) return class_base + 2;
  return kTrackedStatuses.size() - 1;  // "other"
}

std::string StatusLabel(size_t slot) {
  const size_t class_base = kTrackedStatuses.size();
  if (slot == class_base) return "2xx";
  if (slot == class_base + 1) return "4xx";
  if (slot == class_base + 2) return "5xx";
  if (slot == kTrackedStatuses.size() - 1) return "other";
  return std::to_string(kTrackedStatuses[slot]);
}

RequestProbe::RequestProbe(size_t route_count, size_t model_count)
    : route_count_(route_count),
      model_count_(model_count),
      requests_(std::make_unique<obs::Counter[]>(route_count * (model_count + 1) * kStatusSlots)) {}

namespace {

void WriteHistogramFamily(obs::PrometheusWriter& w, const ProbeRegistry& registry,
                          std::string_view name, std::string_view help,
                          const obs::Histogram RequestProbe::*member) {
  obs::HistogramSnapshot merged;
  for (const RequestProbe* probe : registry.requests) merged.Merge((probe->*member).Snapshot());
  w.Family(name, help, obs::MetricType::kHistogram);
  w.WriteHistogram(name, {}, merged);
}

template <typename Get>
void WriteSum(obs::PrometheusWriter& w, std::string_view name, std::string_view help,
              obs::MetricType type, Get get) {
  w.Family(name, help, type);
  w.Sample(name, {}, get());
}

}  // namespace

std::string RenderMetrics(const ProbeRegistry& registry) {
  obs::PrometheusWriter w;
  constexpr std::string_view kRequests = "turnpike_requests_total";
  w.Family(kRequests, "Requests answered, by route, model and status.", obs::MetricType::kCounter);
  if (!registry.requests.empty()) {
    const size_t models = registry.requests.front()->model_count();
    const size_t routes = registry.requests.front()->route_count();
    for (size_t r = 0; r < routes && r < registry.route_labels.size(); ++r) {
      for (size_t m = 0; m <= models; ++m) {
        for (size_t s = 0; s < kStatusSlots; ++s) {
          uint64_t total = 0;
          for (const RequestProbe* probe : registry.requests) {
            total += probe->requests(r, m, s);
          }
          if (total == 0) continue;
          const std::string status = StatusLabel(s);
          const std::string_view model =
              m < models ? std::string_view(registry.model_names[m]) : "";
          w.Sample(kRequests,
                   {{"route", registry.route_labels[r]}, {"model", model}, {"status", status}},
                   static_cast<double>(total));
        }
      }
    }
  }
  WriteSum(w, "turnpike_requests_in_flight", "Requests being handled now.", obs::MetricType::kGauge,
           [&] { return static_cast<double>(registry.in_flight ? registry.in_flight() : 0); });
  // turnpike_accept_errors_total{reason} is written by app/ (serve_command.cc), by cause.
  WriteHistogramFamily(w, registry, "turnpike_gateway_overhead_seconds",
                       "Time the gateway itself spent on a request, excluding upstream time.",
                       &RequestProbe::overhead);
  WriteHistogramFamily(w, registry, "turnpike_upstream_ttfb_seconds",
                       "Upstream request written to upstream response head.",
                       &RequestProbe::upstream_ttfb);
  WriteHistogramFamily(w, registry, "turnpike_ttft_seconds",
                       "Request received to first token sent to the client (streams).",
                       &RequestProbe::ttft);
  WriteHistogramFamily(w, registry, "turnpike_request_duration_seconds",
                       "Request received to response end.", &RequestProbe::duration);
  constexpr std::string_view kPhases = "turnpike_phase_seconds";
  w.Family(kPhases, "Time in each phase of a request (the Server-Timing phases).",
           obs::MetricType::kHistogram);
  for (size_t i = 0; i < kPhaseCount; ++i) {
    obs::HistogramSnapshot merged;
    for (const RequestProbe* probe : registry.requests) merged.Merge(probe->phases[i].Snapshot());
    w.WriteHistogram(kPhases, {{"phase", PhaseName(static_cast<Phase>(i))}}, merged);
  }
  auto sum_gateway = [&](const obs::Counter RequestProbe::*member) {
    uint64_t total = 0;
    for (const RequestProbe* probe : registry.requests) total += (probe->*member).value();
    return static_cast<double>(total);
  };
  if (obs::counting_allocations()) {
    WriteSum(w, "turnpike_allocations_total",
             "C++ heap allocations (operator new) by every thread of the process; the C "
             "libraries' own mallocs are not counted.",
             obs::MetricType::kCounter, [] { return static_cast<double>(obs::AllocationCount()); });
  }
  WriteSum(w, "turnpike_upstream_retries_total", "Upstream attempts after the first.",
           obs::MetricType::kCounter, [&] { return sum_gateway(&RequestProbe::retries); });
  WriteSum(w, "turnpike_client_cancels_total", "Clients that went away before the response ended.",
           obs::MetricType::kCounter, [&] { return sum_gateway(&RequestProbe::client_cancels); });
  auto sum_pool = [&](const obs::Counter upstream::PoolProbe::*member) {
    uint64_t total = 0;
    for (const upstream::PoolProbe* probe : registry.pools) total += (probe->*member).value();
    return static_cast<double>(total);
  };
  WriteSum(w, "turnpike_upstream_connects_total", "New upstream connections.",
           obs::MetricType::kCounter, [&] { return sum_pool(&upstream::PoolProbe::connects); });
  WriteSum(w, "turnpike_upstream_connect_errors_total", "Failed upstream connects.",
           obs::MetricType::kCounter,
           [&] { return sum_pool(&upstream::PoolProbe::connect_errors); });
  WriteSum(w, "turnpike_upstream_reuses_total", "Upstream exchanges on a pooled connection.",
           obs::MetricType::kCounter, [&] { return sum_pool(&upstream::PoolProbe::reuses); });
  WriteSum(w, "turnpike_upstream_stale_retries_total",
           "Pooled connections found closed and retried on a new one.", obs::MetricType::kCounter,
           [&] { return sum_pool(&upstream::PoolProbe::stale_retries); });
  WriteSum(w, "turnpike_upstream_reaped_total",
           "Idle upstream connections the reaper closed (expired, closed by the origin, or above "
           "the recent peak).",
           obs::MetricType::kCounter, [&] { return sum_pool(&upstream::PoolProbe::reaped); });
  WriteSum(w, "turnpike_upstream_queued_total",
           "Upstream exchanges that waited for a slot (upstream.pool.max_active_per_origin).",
           obs::MetricType::kCounter, [&] { return sum_pool(&upstream::PoolProbe::queued); });
  WriteSum(w, "turnpike_upstream_queue_timeouts_total",
           "Upstream exchanges that found no slot within the connect timeout.",
           obs::MetricType::kCounter,
           [&] { return sum_pool(&upstream::PoolProbe::queue_timeouts); });
  WriteSum(w, "turnpike_upstream_idle_connections", "Upstream connections idle in the pools.",
           obs::MetricType::kGauge, [&] {
             int64_t total = 0;
             for (const upstream::PoolProbe* probe : registry.pools) total += probe->idle.value();
             return static_cast<double>(total);
           });
  WriteSum(
      w, "turnpike_access_log_dropped_lines_total",
      "Access log lines dropped because the writer fell behind.", obs::MetricType::kCounter, [&] {
        return static_cast<double>(registry.access_log_dropped ? registry.access_log_dropped() : 0);
      });
  for (const auto& write_cache_metrics : registry.cache_metrics) write_cache_metrics(w);
  for (const auto& write_feature_metrics : registry.feature_metrics) write_feature_metrics(w);
  if (!registry.call_logs.empty()) {
    WriteSum(w, "turnpike_call_log_dropped_rows_total",
             "Call-log rows dropped by call_log.when_full (their spend is kept).",
             obs::MetricType::kCounter, [&] {
               uint64_t sum = 0;
               for (const auto* buffer : registry.call_logs) sum += buffer->dropped_rows();
               return static_cast<double>(sum);
             });
  }
  if (registry.store_metrics) registry.store_metrics(w);
  if (registry.counters_metrics) registry.counters_metrics(w);
  return w.Take();
}

}  // namespace turnpike::core
