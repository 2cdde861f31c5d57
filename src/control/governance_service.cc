#include "control/governance_service.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <utility>

namespace turnpike::control {
namespace {

// Call-log rows one retention batch deletes at most (PostgreSQL: whole chunks, a little more).
constexpr int64_t kPurgeBatch = 10'000;

// The snapshot's own validation speaks of ids; the admin API answers 400.
Error AsInvalid(const Error& error) {
  if (error.code != ErrorCode::kInvalidRequest) return error;
  return Error{ErrorCode::kInvalidRequest, error.message, error.param};
}

// A store job from two functions: what it runs, and what a refusal (queue full or closed) does.
class FnJob final : public store::StoreJob {
 public:
  FnJob(std::function<void(store::Engine&)> run, std::function<void()> refused)
      : run_(std::move(run)), refused_(std::move(refused)) {}
  void Run(store::Engine& engine) override { run_(engine); }
  void Refuse(const Error&) override { refused_(); }

 private:
  std::function<void(store::Engine&)> run_;
  std::function<void()> refused_;
};

}  // namespace

Result<std::unique_ptr<GovernanceService>> GovernanceService::Start(
    const config::Config& config, store::Engine& engine, store::StoreThread& thread,
    governance::Counters& counters, const governance::DataKeys* data_keys) {
  std::unique_ptr<GovernanceService> service(
      new GovernanceService(config, engine, thread, counters));
  service->data_keys_ = data_keys;
  store::Engine& store = service->engine_;
  // The change feed's mark lives in the session that polls it (the control lane's).
  store::GovernanceRecords& records =
      service->thread_.lane_engine(store::JobLane::kControl).records();
  // An engine with a notification channel listens before the load, so a change committed
  // after the load is notified (its first answer, "reload once", is this load). The control
  // lane then sleeps on the channel from its first wait (store_thread.h).
  if (config.governance.snapshot_ttl.count() > 0) (void)records.Notified();
  Result<store::GovernanceRows> rows = records.LoadAll();
  if (!rows.ok()) return rows.error();
  Status opened = service->LoadProviderKeys(store, rows.value());
  if (!opened.ok()) return opened.error();
  Result<governance::SnapshotPtr> snapshot = service->BuildFrom(rows.value());
  if (!snapshot.ok()) {
    return Error{ErrorCode::kInternal,
                 "the store holds inconsistent governance data: " + snapshot.error().message, ""};
  }
  service->rows_ = std::move(rows.value());
  Status restored = service->RestoreSpend(store.call_log(), *snapshot.value());
  if (!restored.ok()) return restored.error();
  service->cell_ = std::make_unique<governance::SnapshotCell>(std::move(snapshot.value()));
  // Marks the feed's starting point; a failed poll leaves it unset, so the first tick reloads.
  (void)records.PollChanges();

  GovernanceService* self = service.get();
  const auto now = std::chrono::steady_clock::now();
  service->next_change_poll_ = now + config.governance.snapshot_ttl;
  service->next_reconcile_ = now + config.governance.reconcile_interval;
  service->next_purge_ = now;  // the first tick purges what is already past the retention
  service->thread_.Start([self](store::CallLogStore& log,
                                store::CallBatchParts parts) { self->WriteBatch(log, parts); },
                         [self](store::Engine& e) { self->LogTick(e); },
                         [self](store::Engine& e) { self->ControlTick(e); });
  return service;
}

GovernanceService::GovernanceService(const config::Config& config, store::Engine& engine,
                                     store::StoreThread& thread, governance::Counters& counters)
    : config_(config), counters_(counters), engine_(engine), thread_(thread) {}

GovernanceService::~GovernanceService() { Stop(); }

void GovernanceService::Stop() { thread_.Stop(); }

store::CallLogBufferOptions GovernanceService::buffer_options() const {
  store::CallLogBufferOptions o;
  o.batch_rows = config_.call_log.batch_rows;
  o.drop_when_full = config_.call_log.drop_when_full;
  o.max_wait = config_.call_log.max_wait;
  o.max_rows = config_.call_log.queue_rows;
  return o;
}

Result<governance::SnapshotPtr> GovernanceService::BuildFrom(
    const store::GovernanceRows& rows) const {
  governance::SnapshotData data;
  data.provider_keys = rows.provider_keys;
  data.plans = rows.plans;
  data.tenants = rows.tenants;
  data.keys = rows.keys;
  // The prices of `rows`, not of rows_: a price write publishes its own new price, and at
  // start-up rows_ is still empty.
  for (PriceInfo& info : EffectivePrices(rows.prices)) {
    data.prices.emplace_back(std::move(info.model), info.price);
  }
  const governance::SnapshotPtr previous = cell_ ? cell_->Load() : nullptr;
  return governance::GovernanceSnapshot::Build(std::move(data), previous.get(), counters_);
}

Status GovernanceService::Commit(store::GovernanceRows rows, const std::function<Status()>& write) {
  Result<governance::SnapshotPtr> built = BuildFrom(rows);
  if (!built.ok()) return AsInvalid(built.error());
  Status written = write();
  if (!written.ok()) return written;
  rows_ = std::move(rows);
  cell_->Publish(std::move(built.value()));
  snapshot_publishes_.Add();
  return Ok{};
}

Status GovernanceService::ReloadOnThread(store::Engine& engine) {
  Result<store::GovernanceRows> rows = engine.records().LoadAll();
  if (!rows.ok()) return rows.error();
  Status opened = LoadProviderKeys(engine, rows.value());
  if (!opened.ok()) return opened.error();
  Result<governance::SnapshotPtr> built = BuildFrom(rows.value());
  if (!built.ok()) return built.error();
  rows_ = std::move(rows.value());
  cell_->Publish(std::move(built.value()));
  snapshot_publishes_.Add();
  return Ok{};
}

boost::asio::awaitable<Status> GovernanceService::Reload() {
  auto job = [this](store::Engine& engine) -> Result<Ok> { return ReloadOnThread(engine); };
  Status done = co_await thread_.Call<Ok>(std::move(job));
  co_return done;
}

void GovernanceService::PurgeTick(store::Engine& engine,
                                  std::chrono::steady_clock::time_point now) {
  if (config_.call_log.retention.count() <= 0 || !config_.call_log.log_store) return;
  if (!purging_ && now < next_purge_) return;
  store::CallLogStore& log = engine.call_log();  // only now: taking it uses the lane's session
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  Result<int64_t> deleted =
      log.PurgeBefore(now_ms - config_.call_log.retention.count(), kPurgeBatch);
  if (!deleted.ok()) {
    std::fprintf(stderr, "turnpike: call-log retention failed: %s\n",
                 deleted.error().message.c_str());
  } else {
    purged_rows_.Add(static_cast<uint64_t>(deleted.value()));
  }
  purging_ = deleted.ok() && deleted.value() >= kPurgeBatch;
  if (!purging_) next_purge_ = now + config_.call_log.purge_interval;
}

void GovernanceService::LogTick(store::Engine& engine) {
  engine.Tick();
  const auto now = std::chrono::steady_clock::now();
  PurgeTick(engine, now);
  if (config_.governance.reconcile_interval.count() > 0 && config_.call_log.log_store &&
      now >= next_reconcile_) {
    next_reconcile_ = now + config_.governance.reconcile_interval;
    // On a read lane (its own connection when the store has a pool): a month's sum over a
    // large log takes seconds, which the call-log batches must not wait for. One at a time.
    if (!reconcile_queued_.exchange(true)) {
      auto run = [this](store::Engine& lane) {
        Result<ReconcileReport> report = Reconcile(lane.call_log());
        if (!report.ok()) {
          // kConflict: another replica is reconciling the same store; its run covers this one.
          std::fprintf(stderr, "turnpike: reconcile %s: %s\n",
                       report.error().code == ErrorCode::kConflict ? "skipped" : "failed",
                       report.error().message.c_str());
        }
        reconcile_queued_.store(false);
      };
      thread_.Post(
          std::make_unique<FnJob>(std::move(run), [this] { reconcile_queued_.store(false); }),
          store::JobLane::kRead);
    }
  }
}

void GovernanceService::ControlTick(store::Engine& engine) {
  const auto now = std::chrono::steady_clock::now();
  bool reload = false;
  if (config_.governance.snapshot_ttl.count() > 0) {
    // A notified change reloads at once; the poll once per snapshot_ttl is the bound when a
    // notification is lost (store/records.h).
    Result<bool> notified = engine.records().Notified();
    reload = notified.ok() && notified.value();
  }
  if (config_.governance.snapshot_ttl.count() > 0 && now >= next_change_poll_) {
    next_change_poll_ = now + config_.governance.snapshot_ttl;
    Result<bool> changed = engine.records().PollChanges();
    reload |= changed.ok() && changed.value();
  }
  if (reload) {
    Status reloaded = ReloadOnThread(engine);
    if (!reloaded.ok()) {
      std::fprintf(stderr, "turnpike: snapshot reload failed: %s\n",
                   reloaded.error().message.c_str());
    }
  }
}

void GovernanceService::RenderMetrics(observability::PrometheusWriter& w) const {
  using observability::MetricType;
  engine_.statements().Render(w);
  engine_.RenderMetrics(w);
  thread_.RenderMetrics(w);
  w.Family("turnpike_call_log_rows_total", "Call-log records written (rows or spend only).",
           MetricType::kCounter);
  w.Sample("turnpike_call_log_rows_total", {}, static_cast<double>(call_log_rows_.value()));
  w.Family("turnpike_call_log_write_errors_total", "Records a failed transaction lost.",
           MetricType::kCounter);
  w.Sample("turnpike_call_log_write_errors_total", {}, static_cast<double>(write_errors_.value()));
  w.Family("turnpike_call_log_queued", "Records waiting for the store thread.", MetricType::kGauge);
  w.Sample("turnpike_call_log_queued", {}, static_cast<double>(thread_.queued_records()));
  w.Family("turnpike_snapshot_publishes_total", "Governance snapshots published.",
           MetricType::kCounter);
  w.Sample("turnpike_snapshot_publishes_total", {},
           static_cast<double>(snapshot_publishes_.value()));
  w.Family("turnpike_reconcile_runs_total", "Reconcile runs completed.", MetricType::kCounter);
  w.Sample("turnpike_reconcile_runs_total", {}, static_cast<double>(reconcile_runs_.value()));
  w.Family("turnpike_spend_drift_usd",
           "Spend the last reconcile found between the call log and the counters (absolute).",
           MetricType::kGauge);
  w.Sample("turnpike_spend_drift_usd", {}, static_cast<double>(drift_micros_.value()) / 1e6);
  w.Family("turnpike_call_log_purged_rows_total",
           "Call-log rows deleted by the retention job (call_log.retention).",
           MetricType::kCounter);
  w.Sample("turnpike_call_log_purged_rows_total", {}, static_cast<double>(purged_rows_.value()));
  w.Family("turnpike_admin_audit_dropped_total",
           "Admin audit rows not written: the store's job queue was full.", MetricType::kCounter);
  w.Sample("turnpike_admin_audit_dropped_total", {}, static_cast<double>(audit_dropped_.load()));
}

}  // namespace turnpike::control
