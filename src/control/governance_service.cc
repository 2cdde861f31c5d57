#include "store/governance_service.h"

#include <chrono>
#include <cstdio>
#include <map>

#include "common/clock.h"
#include "governance/default_prices.h"
#include "governance/keys.h"
#include "store/sqlite_store.h"

namespace turnpike::store {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

Error NotFound(std::string message, std::string param = "") {
  return Error{ErrorCode::kNotFound, std::move(message), std::move(param)};
}

// The snapshot's own validation speaks of ids; the admin API answers 400.
Error AsInvalid(const Error& error) {
  if (error.code != ErrorCode::kInvalidRequest) return error;
  return Invalid(error.message, error.param);
}

template <typename T, typename Pred>
T* FindIf(std::vector<T>& items, Pred pred) {
  for (T& item : items) {
    if (pred(item)) return &item;
  }
  return nullptr;
}

}  // namespace

std::string_view PriceSourceName(PriceSource source) {
  switch (source) {
    case PriceSource::kBuiltIn:
      return "built_in";
    case PriceSource::kConfig:
      return "config";
    case PriceSource::kAdmin:
      return "admin";
  }
  return "built_in";
}

Result<std::unique_ptr<GovernanceService>> GovernanceService::Open(const config::Config& config) {
  std::unique_ptr<GovernanceService> service(new GovernanceService(config));
  Result<std::unique_ptr<SqliteStore>> opened =
      SqliteStore::Open(config.store.path, config.store.synchronous_full, &service->counts_);
  if (!opened.ok()) return opened.error();
  service->store_ = std::move(opened.value());
  Store& store = *service->store_;
  Status migrated = store.Migrate();
  if (!migrated.ok()) return migrated.error();
  Result<GovernanceRows> rows = store.LoadGovernance();
  if (!rows.ok()) return rows.error();
  Result<governance::SnapshotPtr> snapshot = service->BuildFrom(rows.value());
  if (!snapshot.ok()) {
    return Error{ErrorCode::kInternal,
                 "the store holds inconsistent governance data: " + snapshot.error().message, ""};
  }
  service->rows_ = std::move(rows.value());

  // This month's persisted spend becomes the counters' starting point.
  const governance::MonthId month = governance::MonthOf(UnixSeconds());
  const std::string months[] = {governance::FormatMonth(month)};
  Result<std::vector<SpendRow>> spend = store.LoadSpend(months);
  if (!spend.ok()) return spend.error();
  for (const SpendRow& row : spend.value()) {
    if (row.scope == SpendScope::kTenant) {
      if (const auto* t = snapshot.value()->FindTenant(row.scope_id)) {
        t->counters->budget.Restore(month, row.spent_micros);
      }
    } else if (const auto* k = snapshot.value()->FindKey(row.scope_id)) {
      k->counters->budget.Restore(month, row.spent_micros);
    }
  }
  service->cell_ = std::make_unique<governance::SnapshotCell>(std::move(snapshot.value()));
  Result<int64_t> version = store.ChangeVersion();
  if (version.ok()) service->data_version_ = version.value();

  StoreThreadOptions options;
  options.max_jobs = config.store.queue_jobs;
  options.max_records = config.call_log.queue_rows;
  options.batch_rows = config.call_log.batch_rows;
  GovernanceService* self = service.get();
  service->thread_ = std::make_unique<StoreThread>(
      store, options, [self](Store& s, CallBatchParts parts) { self->WriteBatch(s, parts); },
      [self](Store& s) { self->Tick(s); });
  const auto now = std::chrono::steady_clock::now();
  service->next_version_check_ = now + config.governance.snapshot_ttl;
  service->next_reconcile_ = now + config.governance.reconcile_interval;
  service->thread_->Start();
  return service;
}

GovernanceService::~GovernanceService() { Stop(); }

void GovernanceService::Stop() {
  if (thread_) thread_->Stop();
}

CallLogBufferOptions GovernanceService::buffer_options() const {
  CallLogBufferOptions o;
  o.batch_rows = config_.call_log.batch_rows;
  o.drop_when_full = config_.call_log.drop_when_full;
  o.max_wait = config_.call_log.max_wait;
  o.max_rows = config_.call_log.queue_rows;
  return o;
}

std::vector<PriceInfo> GovernanceService::EffectivePrices(
    const std::vector<PriceOverride>& overrides) const {
  std::map<std::string, PriceInfo> merged;
  for (const governance::DefaultPrice& p : governance::DefaultPrices()) {
    merged[std::string(p.model)] = {std::string(p.model), p.price, PriceSource::kBuiltIn};
  }
  for (const config::PriceConfig& p : config_.prices) {
    merged[p.model] = {
        p.model,
        {p.input_micros_per_mtok, p.output_micros_per_mtok, p.cached_input_micros_per_mtok,
         p.max_output_tokens, p.cache_write_micros_per_mtok},
        PriceSource::kConfig};
  }
  for (const PriceOverride& p : overrides) {
    merged[p.model] = {p.model, p.price, PriceSource::kAdmin};
  }
  std::vector<PriceInfo> out;
  out.reserve(merged.size());
  for (auto& [model, info] : merged) out.push_back(std::move(info));
  return out;
}

Result<PriceInfo> GovernanceService::PriceOf(const std::string& model) const {
  for (PriceInfo& info : EffectivePrices(rows_.prices)) {
    if (info.model == model) return std::move(info);
  }
  return NotFound("no price for model " + model, "model");
}

Result<governance::SnapshotPtr> GovernanceService::BuildFrom(const GovernanceRows& rows) const {
  governance::SnapshotData data;
  data.plans = rows.plans;
  data.tenants = rows.tenants;
  data.keys = rows.keys;
  // The prices of `rows`, not of rows_: a price write publishes its own new price, and at
  // start-up rows_ is still empty.
  for (PriceInfo& info : EffectivePrices(rows.prices)) {
    data.prices.emplace_back(std::move(info.model), info.price);
  }
  const governance::SnapshotPtr previous = cell_ ? cell_->Load() : nullptr;
  return governance::GovernanceSnapshot::Build(std::move(data), previous.get());
}

template <typename Write>
Status GovernanceService::Commit(GovernanceRows rows, Write&& write) {
  Result<governance::SnapshotPtr> built = BuildFrom(rows);
  if (!built.ok()) return AsInvalid(built.error());
  Status written = write();
  if (!written.ok()) return written;
  rows_ = std::move(rows);
  cell_->Publish(std::move(built.value()));
  snapshot_publishes_.Add();
  return Ok{};
}

Status GovernanceService::ReloadOnThread(Store& store) {
  Result<GovernanceRows> rows = store.LoadGovernance();
  if (!rows.ok()) return rows.error();
  Result<governance::SnapshotPtr> built = BuildFrom(rows.value());
  if (!built.ok()) return built.error();
  rows_ = std::move(rows.value());
  cell_->Publish(std::move(built.value()));
  snapshot_publishes_.Add();
  return Ok{};
}

boost::asio::awaitable<Status> GovernanceService::Reload() {
  auto job = [this](Store& store) -> Result<Ok> { return ReloadOnThread(store); };
  Status done = co_await thread_->Call<Ok>(std::move(job));
  co_return done;
}

boost::asio::awaitable<Result<Plan>> GovernanceService::PutPlan(Plan plan) {
  auto job = [this, plan = std::move(plan)](Store& store) -> Result<Plan> {
    GovernanceRows rows = rows_;
    if (Plan* existing = FindIf(rows.plans, [&](const Plan& p) { return p.id == plan.id; })) {
      *existing = plan;
    } else {
      rows.plans.push_back(plan);
    }
    Status done = Commit(std::move(rows), [&] { return store.UpsertPlan(plan); });
    if (!done.ok()) return done.error();
    return plan;
  };
  Result<Plan> result = co_await thread_->Call<Plan>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Tenant>> GovernanceService::CreateTenant(Tenant tenant) {
  auto job = [this, tenant = std::move(tenant)](Store& store) mutable -> Result<Tenant> {
    GovernanceRows rows = rows_;
    if (FindIf(rows.tenants, [&](const Tenant& t) { return t.id == tenant.id; })) {
      return Error{ErrorCode::kConflict, "tenant " + tenant.id + " exists already", "id"};
    }
    if (!FindIf(rows.plans, [&](const Plan& p) { return p.id == tenant.plan_id; })) {
      return Invalid("no plan " + tenant.plan_id + "; create it first", "plan");
    }
    tenant.created_at = UnixSeconds();
    rows.tenants.push_back(tenant);
    Status done = Commit(std::move(rows), [&] { return store.InsertTenant(tenant); });
    if (!done.ok()) return done.error();
    return tenant;
  };
  Result<Tenant> result = co_await thread_->Call<Tenant>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Tenant>> GovernanceService::UpdateTenant(TenantPatch patch) {
  auto job = [this, patch = std::move(patch)](Store& store) -> Result<Tenant> {
    GovernanceRows rows = rows_;
    Tenant* tenant = FindIf(rows.tenants, [&](const Tenant& t) { return t.id == patch.id; });
    if (tenant == nullptr) return NotFound("no tenant " + patch.id);
    if (patch.name) tenant->name = *patch.name;
    if (patch.status) tenant->status = *patch.status;
    if (patch.log_bodies) tenant->log_bodies = *patch.log_bodies;
    if (patch.plan_id) {
      if (!FindIf(rows.plans, [&](const Plan& p) { return p.id == *patch.plan_id; })) {
        return Invalid("no plan " + *patch.plan_id, "plan");
      }
      tenant->plan_id = *patch.plan_id;
    }
    Tenant updated = *tenant;
    Status done = Commit(std::move(rows), [&] { return store.UpdateTenant(updated); });
    if (!done.ok()) return done.error();
    return updated;
  };
  Result<Tenant> result = co_await thread_->Call<Tenant>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<CreatedKey>> GovernanceService::CreateKey(Key key) {
  auto job = [this, key = std::move(key)](Store& store) mutable -> Result<CreatedKey> {
    GovernanceRows rows = rows_;
    if (!FindIf(rows.tenants, [&](const Tenant& t) { return t.id == key.tenant_id; })) {
      return NotFound("no tenant " + key.tenant_id, "tenant");
    }
    Result<governance::GeneratedKey> generated = governance::GenerateKey();
    if (!generated.ok()) return generated.error();
    key.public_id = generated->public_id;
    key.secret_hash = generated->secret_hash;
    key.status = KeyStatus::kActive;
    key.created_at = UnixSeconds();
    rows.keys.push_back(key);
    Status done = Commit(std::move(rows), [&] { return store.InsertKey(key); });
    if (!done.ok()) return done.error();
    return CreatedKey{key, std::move(generated->key)};
  };
  Result<CreatedKey> result = co_await thread_->Call<CreatedKey>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Key>> GovernanceService::RevokeKey(std::string public_id) {
  auto job = [this, public_id = std::move(public_id)](Store& store) -> Result<Key> {
    GovernanceRows rows = rows_;
    Key* key = FindIf(rows.keys, [&](const Key& k) { return k.public_id == public_id; });
    if (key == nullptr) return NotFound("no key " + public_id);
    key->status = KeyStatus::kRevoked;
    Key revoked = *key;
    const int64_t now = UnixSeconds();
    Status done = Commit(std::move(rows),
                         [&] { return store.SetKeyStatus(public_id, KeyStatus::kRevoked, now); });
    if (!done.ok()) return done.error();
    return revoked;
  };
  Result<Key> result = co_await thread_->Call<Key>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<PriceInfo>> GovernanceService::PutPrice(PriceOverride price) {
  auto job = [this, price = std::move(price)](Store& store) mutable -> Result<PriceInfo> {
    GovernanceRows rows = rows_;
    price.updated_at = UnixSeconds();
    if (PriceOverride* existing =
            FindIf(rows.prices, [&](const PriceOverride& p) { return p.model == price.model; })) {
      *existing = price;
    } else {
      rows.prices.push_back(price);
    }
    Status done = Commit(std::move(rows), [&] { return store.UpsertPrice(price); });
    if (!done.ok()) return done.error();
    return PriceOf(price.model);
  };
  Result<PriceInfo> result = co_await thread_->Call<PriceInfo>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<PriceInfo>> GovernanceService::DeletePrice(std::string model) {
  auto job = [this, model = std::move(model)](Store& store) -> Result<PriceInfo> {
    GovernanceRows rows = rows_;
    const size_t before = rows.prices.size();
    std::erase_if(rows.prices, [&](const PriceOverride& p) { return p.model == model; });
    if (rows.prices.size() == before) {
      return NotFound("no admin price override for model " + model, "model");
    }
    Status done = Commit(std::move(rows), [&] { return store.DeletePrice(model); });
    if (!done.ok()) return done.error();
    Result<PriceInfo> now = PriceOf(model);
    if (!now.ok()) return PriceInfo{model, {}, PriceSource::kAdmin};  // unpriced from now on
    return now;
  };
  Result<PriceInfo> result = co_await thread_->Call<PriceInfo>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<std::vector<PriceInfo>>> GovernanceService::Prices() {
  auto job = [this](Store&) -> Result<std::vector<PriceInfo>> {
    return EffectivePrices(rows_.prices);
  };
  Result<std::vector<PriceInfo>> result =
      co_await thread_->Call<std::vector<PriceInfo>>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<std::vector<SpendInfo>>> GovernanceService::Spend(std::string month) {
  auto job = [this, month = std::move(month)](Store& store) -> Result<std::vector<SpendInfo>> {
    const governance::MonthId current = governance::MonthOf(UnixSeconds());
    const governance::SnapshotPtr snapshot = cell_->Load();
    std::vector<SpendInfo> out;
    if (month == governance::FormatMonth(current)) {
      for (const governance::TenantEntry& t : snapshot->tenants()) {
        const governance::BudgetUsage u = t.counters->budget.Read(current);
        out.push_back({SpendScope::kTenant, t.tenant.id, t.tenant.id, month, u.spent,
                       u.committed - u.spent, t.plan->monthly_budget_micros});
      }
      for (const governance::KeyEntry& k : snapshot->keys()) {
        const governance::BudgetUsage u = k.counters->budget.Read(current);
        out.push_back({SpendScope::kKey, k.key.public_id, k.key.tenant_id, month, u.spent,
                       u.committed - u.spent, k.key.monthly_budget_micros});
      }
      return out;
    }
    const std::string months[] = {month};
    Result<std::vector<SpendRow>> rows = store.LoadSpend(months);
    if (!rows.ok()) return rows.error();
    for (SpendRow& row : rows.value()) {
      SpendInfo info{row.scope, row.scope_id, "", row.month, row.spent_micros, 0, std::nullopt};
      if (row.scope == SpendScope::kTenant) {
        info.tenant_id = row.scope_id;
      } else if (const governance::KeyEntry* k = snapshot->FindKey(row.scope_id)) {
        info.tenant_id = k->key.tenant_id;
      }
      out.push_back(std::move(info));
    }
    return out;
  };
  Result<std::vector<SpendInfo>> result =
      co_await thread_->Call<std::vector<SpendInfo>>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<std::vector<CallRow>>> GovernanceService::Calls(CallQuery query) {
  auto job = [query = std::move(query)](Store& store) -> Result<std::vector<CallRow>> {
    return store.QueryCalls(query);
  };
  Result<std::vector<CallRow>> result =
      co_await thread_->Call<std::vector<CallRow>>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<ReconcileReport>> GovernanceService::ReconcileNow() {
  auto job = [this](Store& store) -> Result<ReconcileReport> { return Reconcile(store); };
  Result<ReconcileReport> result = co_await thread_->Call<ReconcileReport>(std::move(job));
  co_return result;
}

void GovernanceService::WriteBatch(Store& store, CallBatchParts parts) {
  const std::span<const SpendRow> no_extra;
  Status written = store.WriteCalls(parts, config_.call_log.log_store, no_extra);
  size_t rows = 0;
  for (const CallBatchPart& part : parts) rows += part.size();
  last_batch_rows_.Set(static_cast<int64_t>(rows));
  if (!written.ok()) {
    // The rows and their spend are lost to the store (the live counters still hold the spend
    // until a restart). Loud, counted, and the thread goes on.
    write_errors_.Add(rows);
    std::fprintf(stderr, "turnpike: call log write failed (%zu rows): %s\n", rows,
                 written.error().message.c_str());
    return;
  }
  call_log_rows_.Add(rows);
}

Result<ReconcileReport> GovernanceService::Reconcile(Store& store) {
  ReconcileReport report;
  if (!config_.call_log.log_store) {
    return Error{ErrorCode::kInvalidRequest,
                 "call_log.log_store is off: there is no call log to reconcile against", ""};
  }
  const governance::MonthId current = governance::MonthOf(UnixSeconds());
  const governance::SnapshotPtr snapshot = cell_->Load();
  std::vector<SpendRow> corrections;
  for (governance::MonthId month : {current, current - 1}) {
    const std::string name = governance::FormatMonth(month);
    Result<std::vector<SpendRow>> logged = store.SumCallLog(name);
    if (!logged.ok()) return logged.error();
    const std::string months[] = {name};
    Result<std::vector<SpendRow>> persisted = store.LoadSpend(months);
    if (!persisted.ok()) return persisted.error();
    std::map<std::pair<SpendScope, std::string>, std::pair<int64_t, int64_t>> both;
    for (const SpendRow& r : logged.value()) both[{r.scope, r.scope_id}].first = r.spent_micros;
    for (const SpendRow& r : persisted.value()) {
      both[{r.scope, r.scope_id}].second = r.spent_micros;
    }
    for (const auto& [scope, sums] : both) {
      const int64_t drift = sums.first - sums.second;
      if (drift == 0) continue;
      report.drift_micros += drift < 0 ? -drift : drift;
      ++report.scopes_corrected;
      corrections.push_back({scope.first, scope.second, name, sums.first});
      if (month != current) continue;
      governance::BudgetCounter* counter = nullptr;
      if (scope.first == SpendScope::kTenant) {
        if (const auto* t = snapshot->FindTenant(scope.second)) counter = &t->counters->budget;
      } else if (const auto* k = snapshot->FindKey(scope.second)) {
        counter = &k->counters->budget;
      }
      if (counter != nullptr) counter->Correct(month, drift);
    }
  }
  if (!corrections.empty()) {
    Status set = store.SetSpend(corrections);
    if (!set.ok()) return set.error();
  }
  reconcile_runs_.Add();
  drift_micros_.Set(report.drift_micros);
  return report;
}

void GovernanceService::Tick(Store& store) {
  const auto now = std::chrono::steady_clock::now();
  if (config_.governance.snapshot_ttl.count() > 0 && now >= next_version_check_) {
    next_version_check_ = now + config_.governance.snapshot_ttl;
    Result<int64_t> version = store.ChangeVersion();
    if (version.ok() && version.value() != data_version_) {
      data_version_ = version.value();
      Status reloaded = ReloadOnThread(store);
      if (!reloaded.ok()) {
        std::fprintf(stderr, "turnpike: snapshot reload failed: %s\n",
                     reloaded.error().message.c_str());
      }
    }
  }
  if (config_.governance.reconcile_interval.count() > 0 && config_.call_log.log_store &&
      now >= next_reconcile_) {
    next_reconcile_ = now + config_.governance.reconcile_interval;
    Result<ReconcileReport> report = Reconcile(store);
    if (!report.ok()) {
      std::fprintf(stderr, "turnpike: reconcile failed: %s\n", report.error().message.c_str());
    }
  }
}

void GovernanceService::RenderMetrics(observability::PrometheusWriter& w) const {
  using observability::MetricType;
  w.Family("turnpike_store_statements_total",
           "Statements the store executed, by purpose (request path: none).", MetricType::kCounter);
  for (size_t i = 0; i < static_cast<size_t>(StoreOp::kCount); ++i) {
    const auto op = static_cast<StoreOp>(i);
    w.Sample("turnpike_store_statements_total", {{"op", StoreOpName(op)}},
             static_cast<double>(counts_.value(op)));
  }
  w.Family("turnpike_call_log_rows_total", "Call-log records written (rows or spend only).",
           MetricType::kCounter);
  w.Sample("turnpike_call_log_rows_total", {}, static_cast<double>(call_log_rows_.value()));
  w.Family("turnpike_call_log_write_errors_total", "Records a failed transaction lost.",
           MetricType::kCounter);
  w.Sample("turnpike_call_log_write_errors_total", {}, static_cast<double>(write_errors_.value()));
  w.Family("turnpike_call_log_queued", "Records waiting for the store thread.", MetricType::kGauge);
  w.Sample("turnpike_call_log_queued", {}, static_cast<double>(thread_->queued_records()));
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
}

}  // namespace turnpike::store
