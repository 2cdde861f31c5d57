#include "doors/webhooks/outbox.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

#include "common/clock.h"
#include "common/json_escape.h"
#include "doors/webhooks/delivery.h"
#include "doors/webhooks/webhook_store.h"
#include "observability/metrics.h"

namespace turnpike::webhooks {

namespace {

constexpr int kExceededPercent = 100;
constexpr double kMicrosPerUsd = 1e6;

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Inserts one event's deliveries; wakes this replica's loop when there are any.
void EnqueueOn(WebhookStore& store, Outbox& outbox, const NewEvent& event) {
  Result<int64_t> queued = store.Enqueue(event, NowMillis());
  if (!queued.ok()) {
    outbox.counters().store_errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (*queued == 0) return;
  outbox.counters().queued.fetch_add(static_cast<uint64_t>(*queued), std::memory_order_relaxed);
  outbox.Wake();
}

class EnqueueJob final : public store::StoreJob {
 public:
  EnqueueJob(std::shared_ptr<Outbox> outbox, NewEvent event)
      : outbox_(std::move(outbox)), event_(std::move(event)) {}
  void Run(store::Engine& engine) override {
    WebhookStore* store = engine.role<WebhookStore>();
    if (store == nullptr) return;
    EnqueueOn(*store, *outbox_, event_);
  }
  void Refuse(const Error&) override {
    outbox_->counters().dropped.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::shared_ptr<Outbox> outbox_;
  NewEvent event_;
};

class AlertJob final : public store::StoreJob {
 public:
  AlertJob(std::shared_ptr<Outbox> outbox, std::string tenant, governance::MonthId month,
           int percent, int64_t spent, int64_t budget)
      : outbox_(std::move(outbox)),
        tenant_(std::move(tenant)),
        month_(month),
        percent_(percent),
        spent_(spent),
        budget_(budget) {}

  void Run(store::Engine& engine) override {
    WebhookStore* store = engine.role<WebhookStore>();
    if (store == nullptr) return;
    const std::string month = governance::FormatMonth(month_);
    const int64_t now = UnixSeconds();
    Result<bool> fresh = store->RecordAlert(tenant_, month, percent_, now);
    if (!fresh.ok()) {
      outbox_->counters().store_errors.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (!*fresh) return;  // fired before: by this replica, another one, or before a restart
    outbox_->CountAlert(percent_);
    std::string data = "{\"tenant\":\"";
    AppendJsonEscaped(data, tenant_);
    data += "\",\"month\":\"" + month + "\",\"threshold_percent\":" + std::to_string(percent_) +
            ",\"spent_usd\":" + std::to_string(static_cast<double>(spent_) / kMicrosPerUsd) +
            ",\"budget_usd\":" + std::to_string(static_cast<double>(budget_) / kMicrosPerUsd) + "}";
    EnqueueOn(
        *store, *outbox_,
        {tenant_, "budget.threshold_crossed", EventBody("budget.threshold_crossed", now, data)});
    if (percent_ >= kExceededPercent) {
      EnqueueOn(*store, *outbox_,
                {tenant_, "budget.exceeded", EventBody("budget.exceeded", now, data)});
    }
  }
  void Refuse(const Error&) override {
    outbox_->counters().dropped.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::shared_ptr<Outbox> outbox_;
  std::string tenant_;
  governance::MonthId month_;
  int percent_;
  int64_t spent_;
  int64_t budget_;
};

}  // namespace

std::string EventBody(std::string_view type, int64_t unix_seconds, std::string_view data_json) {
  // The RFC 3339 text of the last second this thread stamped: events come many to a second.
  thread_local int64_t stamped_second = std::numeric_limits<int64_t>::min();
  thread_local char stamp[32] = {};
  thread_local size_t stamp_size = 0;
  if (unix_seconds != stamped_second) {
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    stamp_size = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    stamped_second = unix_seconds;
  }
  std::string body;
  constexpr size_t kFrame = 48;  // the members' names and punctuation
  body.reserve(type.size() + stamp_size + data_json.size() + kFrame);
  body.append("{\"type\":\"");
  AppendJsonEscaped(body, type);
  body.append("\",\"timestamp\":\"").append(stamp, stamp_size).append("\",\"data\":");
  body.append(data_json);
  body.push_back('}');
  return body;
}

Outbox::Outbox(store::StoreThread& store, config::WebhooksConfig options)
    : store_(store), options_(std::move(options)), percents_(options_.budget_alerts) {
  std::sort(percents_.begin(), percents_.end());
}

Outbox::~Outbox() { Stop(); }

void Outbox::Emit(std::string_view tenant, std::string_view type, std::string payload_data) {
  NewEvent event{std::string(tenant), std::string(type),
                 EventBody(type, UnixSeconds(), payload_data)};
  store_.Post(std::make_unique<EnqueueJob>(shared_from_this(), std::move(event)),
              store::JobLane::kControl);
}

void Outbox::OnCrossing(const governance::BudgetCrossing& crossing) {
  store_.Post(
      std::make_unique<AlertJob>(shared_from_this(), std::string(crossing.tenant), crossing.month,
                                 crossing.percent, crossing.spent, crossing.budget),
      store::JobLane::kControl);
}

void Outbox::CountAlert(int percent) {
  if (percent < 1 || percent > governance::kMaxBudgetAlertPercent) return;
  alerts_[static_cast<size_t>(percent)].fetch_add(1, std::memory_order_relaxed);
}

void Outbox::Start() {
  if (deliverer_ == nullptr) deliverer_ = std::make_unique<Deliverer>(*this);
}

void Outbox::Stop() {
  if (deliverer_ != nullptr) deliverer_->Stop();
}

void Outbox::Wake() {
  if (deliverer_ != nullptr) deliverer_->Wake();
}

void Outbox::RenderMetrics(observability::PrometheusWriter& w) const {
  constexpr std::string_view kAlerts = "turnpike_budget_alerts_total";
  w.Family(kAlerts, "Budget thresholds crossed, announced once per tenant and month fleet-wide",
           observability::MetricType::kCounter);
  // The gateway's thresholds always; a plan's own once one of them fired (at most 1,000
  // label values: percents are whole, 1 to 1000).
  for (size_t p = 1; p < alerts_.size(); ++p) {
    const uint64_t n = alerts_[p].load(std::memory_order_relaxed);
    if (n == 0 && !std::binary_search(percents_.begin(), percents_.end(), static_cast<int>(p))) {
      continue;
    }
    w.Sample(kAlerts, {{"threshold", std::to_string(p)}}, static_cast<double>(n));
  }
  constexpr std::string_view kDeliveries = "turnpike_webhook_deliveries_total";
  w.Family(kDeliveries, "Webhook deliveries queued and attempts by outcome",
           observability::MetricType::kCounter);
  const std::pair<std::string_view, const std::atomic<uint64_t>*> outcomes[] = {
      {"queued", &counters_.queued},
      {"delivered", &counters_.delivered},
      {"retried", &counters_.retried},
      {"failed", &counters_.failed}};
  for (const auto& [outcome, value] : outcomes) {
    w.Sample(kDeliveries, {{"outcome", outcome}},
             static_cast<double>(value->load(std::memory_order_relaxed)));
  }
  constexpr std::string_view kDropped = "turnpike_webhook_events_dropped_total";
  w.Family(kDropped, "Webhook events not queued: the store's job queue was full or closed",
           observability::MetricType::kCounter);
  w.Sample(kDropped, {}, static_cast<double>(counters_.dropped.load(std::memory_order_relaxed)));
  constexpr std::string_view kErrors = "turnpike_webhook_store_errors_total";
  w.Family(kErrors, "Webhook outbox statements that failed", observability::MetricType::kCounter);
  w.Sample(kErrors, {},
           static_cast<double>(counters_.store_errors.load(std::memory_order_relaxed)));
}

}  // namespace turnpike::webhooks
