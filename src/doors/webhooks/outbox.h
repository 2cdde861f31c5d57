// The webhook outbox: what the gateway announces to a tenant's endpoints (budget alerts, agent
// turns) goes into the store (webhook_store.h) and a delivery loop on its own thread
// (delivery.h) sends it, signed, retried with backoff, at least once.
//
// Enqueueing never blocks the request path: Emit and OnCrossing copy the event into a job on the
// store thread's bounded queue (store_thread.h, lane control) and return; a full or closed
// queue drops it, counted in turnpike_webhook_events_dropped_total. The job inserts one delivery
// per subscribed endpoint and wakes the delivery loop of this replica (another replica's loop
// finds it once it falls due or within its poll interval).
//
// Budget alerts (governance/budget_alerts.h is the check; this is the sink): a crossing's job
// inserts the (tenant, month, threshold) row; only the insert that created it (one per month,
// fleet-wide) counts turnpike_budget_alerts_total{threshold} and queues the event
// `budget.threshold_crossed` (and `budget.exceeded` at 100% and above).
//
// Event bodies follow the Standard Webhooks shape: {"type", "timestamp" (RFC 3339), "data"}.
//
// Ownership: one per gateway, shared (shared_ptr) by the feature's functions and the jobs in
// flight; the store thread it borrows outlives every job (jobs close before the store stops).
// Threads: Emit, OnCrossing, Wake and RenderMetrics from any thread; Start and Stop on the main
// thread.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "governance/budget_alerts.h"
#include "store/store_thread.h"

namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::webhooks {

class Deliverer;

// What the outbox counts (turnpike_webhook_*), shared with the delivery loop.
struct OutboxCounters {
  std::atomic<uint64_t> queued{0};     // deliveries inserted
  std::atomic<uint64_t> delivered{0};  // attempts answered 2xx
  std::atomic<uint64_t> retried{0};    // attempts that failed and will be retried
  std::atomic<uint64_t> failed{0};     // deliveries given up
  std::atomic<uint64_t> dropped{0};    // events refused by a full or closed store queue
  std::atomic<uint64_t> store_errors{0};
};

class Outbox : public std::enable_shared_from_this<Outbox> {
 public:
  Outbox(store::StoreThread& store, config::WebhooksConfig options);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Queues `payload` (a JSON object: the event's `data`) as event `type` for `tenant`'s
  // endpoints subscribed to it (see the top of this file).
  void Emit(std::string_view tenant, std::string_view type, std::string payload_data);
  // The budget alerts' sink (see the top of this file).
  void OnCrossing(const governance::BudgetCrossing& crossing);

  // The delivery loop (delivery.h): started once; Stop joins it (before the store's jobs close).
  void Start();
  void Stop();
  // Wakes the delivery loop at once (deliveries were queued on this replica).
  void Wake();

  // turnpike_budget_alerts_total{threshold}, turnpike_webhook_deliveries_total{outcome},
  // turnpike_webhook_events_dropped_total.
  void RenderMetrics(observability::PrometheusWriter& w) const;

  store::StoreThread& store() { return store_; }
  const config::WebhooksConfig& options() const { return options_; }
  OutboxCounters& counters() { return counters_; }
  // After an alert's row was inserted (one per threshold, month and tenant fleet-wide).
  void CountAlert(int percent);

 private:
  store::StoreThread& store_;
  const config::WebhooksConfig options_;
  OutboxCounters counters_;
  std::vector<int> percents_;  // the gateway's thresholds (options_.budget_alerts), sorted
  // Alerts announced by this replica, by percent (the gateway's and plans' own thresholds).
  std::array<std::atomic<uint64_t>, governance::kMaxBudgetAlertPercent + 1> alerts_{};
  std::unique_ptr<Deliverer> deliverer_;
};

// The event body (see the top of this file): {"type", "timestamp", "data": <data_json>}.
std::string EventBody(std::string_view type, int64_t unix_seconds, std::string_view data_json);

}  // namespace turnpike::webhooks
