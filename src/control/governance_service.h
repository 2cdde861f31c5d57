// GovernanceService: the governed core's durable side on one node. It owns the store and its
// thread, publishes governance snapshots, persists spend, writes the call log, reconciles, and
// performs the admin API's operations.
//
// Snapshots (DESIGN.md "Threading and state"): the snapshot is built from three price layers
// (the built-in table, config `prices:`, admin overrides in the store, later ones winning) and
// the store's plans, tenants and keys. It is published
//   - at start-up, with this month's persisted spend restored into the budget counters;
//   - by every admin write, at once: the write is validated by building the new snapshot
//     first, committed, then that snapshot is published (a revoked key fails on the very next
//     request, on every worker);
//   - by the store thread's tick when another process changed the database (SQLite's
//     `PRAGMA data_version`, one statement per snapshot_ttl), while requests keep the snapshot
//     they hold;
//   - by Reload() on every request when snapshot_ttl is 0 (read-through, for debugging: 4
//     statements per request).
// Budget and rate counters carry over from snapshot to snapshot (snapshot.h).
//
// Spend and the call log: see store.h and call_log_buffer.h. Reconcile (every
// reconcile_interval, and on demand) compares, for this month and the last, each scope's
// persisted spend with the call log's sum; a difference is written over the spend row,
// applied to the live counter (this month), and exported as turnpike_spend_drift_usd. With
// log_store off there is no log to reconcile against and the job does not run.
//
// Threads: Open and the shutdown calls run on the main thread; the awaitable operations are
// called from worker coroutines and run their store work on the store thread; cell() and
// RenderMetrics() are safe from any thread.
// Errors: operations return the Store's errors, kInvalidRequest (with param naming the field)
// when the resulting snapshot would be inconsistent, kNotFound for unknown ids.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "governance/snapshot.h"
#include "governance/snapshot_cell.h"
#include "observability/metrics.h"
#include "store/call_log_buffer.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_thread.h"

namespace turnpike::store {

struct TenantPatch {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> plan_id;
  std::optional<governance::TenantStatus> status;
  std::optional<bool> log_bodies;
};

struct CreatedKey {
  governance::Key key;
  std::string secret_key;  // the full "tp-..." key: shown once, never stored
};

enum class PriceSource { kBuiltIn, kConfig, kAdmin };
std::string_view PriceSourceName(PriceSource source);

struct PriceInfo {
  std::string model;
  governance::ModelPrice price;
  PriceSource source = PriceSource::kBuiltIn;
};

struct SpendInfo {
  SpendScope scope = SpendScope::kTenant;
  std::string scope_id;
  std::string tenant_id;
  std::string month;
  int64_t spent_micros = 0;
  int64_t reserved_micros = 0;           // live requests' reservations (this month only)
  std::optional<int64_t> budget_micros;  // the scope's monthly cap, if any
};

struct ReconcileReport {
  int64_t drift_micros = 0;  // sum of |log - persisted| over scopes and months
  int64_t scopes_corrected = 0;
};

class GovernanceService {
 public:
  static Result<std::unique_ptr<GovernanceService>> Open(const config::Config& config);
  ~GovernanceService();

  const governance::SnapshotCell& cell() const { return *cell_; }
  StoreThread& thread() { return *thread_; }
  const config::Config& config() const { return config_; }
  CallLogBufferOptions buffer_options() const;

  boost::asio::awaitable<Status> Reload();

  boost::asio::awaitable<Result<governance::Plan>> PutPlan(governance::Plan plan);
  boost::asio::awaitable<Result<governance::Tenant>> CreateTenant(governance::Tenant tenant);
  boost::asio::awaitable<Result<governance::Tenant>> UpdateTenant(TenantPatch patch);
  // `key`: everything but public_id, secret_hash and created_at, which are made here.
  boost::asio::awaitable<Result<CreatedKey>> CreateKey(governance::Key key);
  boost::asio::awaitable<Result<governance::Key>> RevokeKey(std::string public_id);
  boost::asio::awaitable<Result<PriceInfo>> PutPrice(PriceOverride price);
  boost::asio::awaitable<Result<PriceInfo>> DeletePrice(std::string model);  // the price now
  boost::asio::awaitable<Result<std::vector<PriceInfo>>> Prices();
  // "YYYY-MM"; this month's figures come from the live counters.
  boost::asio::awaitable<Result<std::vector<SpendInfo>>> Spend(std::string month);
  boost::asio::awaitable<Result<std::vector<CallRow>>> Calls(CallQuery query);
  boost::asio::awaitable<Result<ReconcileReport>> ReconcileNow();

  // Shutdown (store_thread.h): CloseJobs before the workers go, Stop after their last flush.
  void CloseJobs() { thread_->CloseJobs(); }
  void Stop();

  void RenderMetrics(observability::PrometheusWriter& writer) const;
  const StatementCounts& statements() const { return counts_; }

 private:
  explicit GovernanceService(const config::Config& config) : config_(config) {}

  // Store-thread side of everything below.
  Result<governance::SnapshotPtr> BuildFrom(const GovernanceRows& rows) const;
  // Validates `rows` by building, runs `write`, then adopts and publishes.
  template <typename Write>
  Status Commit(GovernanceRows rows, Write&& write);
  Status ReloadOnThread(Store& store);
  void WriteBatch(Store& store, CallBatchParts parts);
  void Tick(Store& store);
  Result<ReconcileReport> Reconcile(Store& store);
  // Built-in, then config, then `overrides` (the admin's), each replacing the one before.
  std::vector<PriceInfo> EffectivePrices(const std::vector<PriceOverride>& overrides) const;
  Result<PriceInfo> PriceOf(const std::string& model) const;

  const config::Config& config_;
  StatementCounts counts_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<governance::SnapshotCell> cell_;
  std::unique_ptr<StoreThread> thread_;

  // Store thread only (and Open, before the thread starts).
  GovernanceRows rows_;
  int64_t data_version_ = -1;
  std::chrono::steady_clock::time_point next_version_check_{};
  std::chrono::steady_clock::time_point next_reconcile_{};

  // Written by the store thread, read by /metrics.
  observability::Counter snapshot_publishes_;
  observability::Counter call_log_rows_;
  observability::Counter write_errors_;
  observability::Counter reconcile_runs_;
  observability::Gauge drift_micros_;  // the last reconcile's drift
  observability::Gauge last_batch_rows_;
};

}  // namespace turnpike::store
