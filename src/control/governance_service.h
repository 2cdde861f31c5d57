// GovernanceService: the governed core's durable side on one node. It publishes governance
// snapshots, restores and persists spend, writes the call log, reconciles, and performs the
// admin API's operations, speaking only the store's roles (store/engine.h): it never knows
// which engine runs.
//
// Snapshots (DESIGN.md "Threading and state"): the snapshot is built from three price layers
// (the built-in table, config `prices:`, admin overrides in the records, later ones winning)
// and the records' plans, tenants and keys. It is published
//   - at start, with this month's persisted spend restored into the budget counters;
//   - by every admin write, at once: the write is validated by building the new snapshot
//     first, committed, then that snapshot is published (a revoked key fails on the very next
//     request, on every worker);
//   - by the store thread's tick when the records' change feed reports another writer
//     (store/records.h: Notified, read every tick without a round trip, by an engine with a
//     notification channel; PollChanges, one poll per snapshot_ttl, the bound if a
//     notification is lost), while requests keep the snapshot they hold;
//   - by Reload() on every request when snapshot_ttl is 0 (read-through, for debugging).
// Budget and rate counters carry over from snapshot to snapshot (snapshot.h).
//
// Tenants' provider keys (BYOK): rows of the "security" store role (security_store.h), sealed
// with the current data key (governance/data_keys.h, given to Start; none: the keys cannot be
// stored, and stored ones are not used), opened on the store thread whenever the records are
// loaded (start, change feed, Reload) and published in the snapshot with the tenants
// (governance::TenantEntry::provider_keys): a call never reads the store for them. A row that
// does not open (altered, moved to another tenant, its data key not configured) is left out
// with a line on stderr naming the tenant and deployment; the tenant's calls then use the
// deployment's configured key. RotateProviderKeys re-seals every row under the current key.
// Another replica's write reaches this one through the records' change feed (SQLite's
// data_version; PostgreSQL: the role's trigger bumps the records' version and notifies).
//
// Retention (call_log.retention > 0, log_store on): every purge_interval the log lane starts
// deleting call-log rows older than the retention (CallLogStore::PurgeBefore), one batch of
// kPurgeBatch rows per log-lane tick (between call-log batches, never beside one), until a
// batch comes back short; turnpike_call_log_purged_rows_total counts them. Spend rows stay.
// Every replica of a fleet runs it over the shared store: the same deletes, idempotent.
//
// The admin audit log: RecordAudit queues one row (admin_api.cc, after each admin write's
// answer) as a control-lane job and returns; a refused job (queue full) is counted, not
// waited for (turnpike_admin_audit_dropped_total). Audit pages the rows, newest first.
//
// Spend and the call log: see store/call_log.h and store/call_log_buffer.h. Reconcile (every
// reconcile_interval, and on demand) compares, for this month and the last, each scope's
// persisted spend with the call log's sum; a difference is written over the spend row,
// applied to the live counter (this month), and exported as turnpike_spend_drift_usd. With
// log_store off there is no log to reconcile against and the job does not run.
//
// Ownership: borrows the engine and the store thread (app/ builds both, and they exist
// whenever some role needs them: store/engine.h), and the config; all must outlive it. The
// service gives the thread its call-log writer and ticks, so the thread must stop before the
// service goes: Stop, and the destructor, stop it.
// Threads: Start and the shutdown calls run on the main thread; the awaitable operations are
// called from worker coroutines and run their store work on the store threads
// (store/store_thread.h): what changes the service's state (admin writes, reloads, Prices,
// which reads rows_) on the control lane, one at a time; Calls and Spend, which read only the
// store and the published snapshot, on a read lane; reconcile (scheduled or on demand) on a
// read lane too: the store compares and corrects in one snapshot and adds the difference
// (store/call_log.h), so call-log batches committing meanwhile (here or on another replica)
// keep their spend, and a long month's sum does not hold up the call-log writer. cell(),
// statements() and RenderMetrics() are safe from any thread.
// Errors: operations return the engine's errors, kInvalidRequest (with param naming the field)
// when the resulting snapshot would be inconsistent, kNotFound for unknown ids.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "control/admin_types.h"
#include "control/security_store.h"
#include "governance/counters.h"
#include "governance/data_keys.h"
#include "governance/snapshot.h"
#include "governance/snapshot_cell.h"
#include "observability/metrics.h"
#include "store/call_log_buffer.h"
#include "store/daily_spend.h"
#include "store/engine.h"
#include "store/store_thread.h"

namespace turnpike::control {

class GovernanceService {
 public:
  // Loads the records of `engine` (migrated by its builder: every role's migrations run
  // together, store/engine.h), publishes the first snapshot (this month's spend restored),
  // marks the change feed's starting point, then starts `thread` (which must run over
  // `engine`, not started yet) with the service's call-log writer and ticks. Errors: the
  // engine's; kInternal when the records are inconsistent. `counters` (the counters role:
  // governance/counters.h) makes the live state of every tenant and key the snapshots name;
  // it must outlive the service and every snapshot.
  static Result<std::unique_ptr<GovernanceService>> Start(
      const config::Config& config, store::Engine& engine, store::StoreThread& thread,
      governance::Counters& counters, const governance::DataKeys* data_keys = nullptr);
  ~GovernanceService();

  const governance::SnapshotCell& cell() const { return *cell_; }
  store::StoreThread& thread() { return thread_; }
  const config::Config& config() const { return config_; }
  store::CallLogBufferOptions buffer_options() const;

  boost::asio::awaitable<Status> Reload();

  boost::asio::awaitable<Result<governance::Plan>> PutPlan(governance::Plan plan);
  boost::asio::awaitable<Result<governance::Tenant>> CreateTenant(governance::Tenant tenant);
  boost::asio::awaitable<Result<governance::Tenant>> UpdateTenant(TenantPatch patch);
  // `key`: everything but public_id, secret_hash and created_at, which are made here (the
  // secret with the prefix of key.kind: "tp-" or, for a tenant's admin token, "tpa-").
  // With an `idempotency_key` (the request's Idempotency-Key, checked by the caller) the id is
  // derived from it (governance::IdempotentPublicId): a retry after an answer that never came,
  // or a 503 past the deadline whose write landed anyway, is a kConflict naming the key made
  // first, never a second key. The secret was shown once, to the request that made it.
  boost::asio::awaitable<Result<CreatedKey>> CreateKey(governance::Key key,
                                                       std::string idempotency_key = {});
  boost::asio::awaitable<Result<governance::Key>> RevokeKey(std::string public_id);
  // Removes the key from the store and from the snapshot (the key as it was): from the next
  // request on it is unknown (the generic 401), and it no longer takes memory. Its call-log
  // rows and spend history stay.
  boost::asio::awaitable<Result<governance::Key>> DeleteKey(std::string public_id);
  boost::asio::awaitable<Result<PriceInfo>> PutPrice(store::PriceOverride price);
  boost::asio::awaitable<Result<PriceInfo>> DeletePrice(std::string model);  // the price now
  boost::asio::awaitable<Result<std::vector<PriceInfo>>> Prices();
  // "YYYY-MM"; this month's figures come from the live counters.
  boost::asio::awaitable<Result<std::vector<SpendInfo>>> Spend(std::string month);
  boost::asio::awaitable<Result<std::vector<store::CallRow>>> Calls(store::CallQuery query);
  // The daily spend counters (store/daily_spend.h), on the read lane.
  boost::asio::awaitable<Result<std::vector<store::DailySpendRow>>> DailySpend(
      store::DailySpendQuery query);
  boost::asio::awaitable<Result<ReconcileReport>> ReconcileNow();

  // BYOK (see above). kForbidden without a data key; kNotFound for an unknown tenant or a
  // missing key; `deployment` is checked by the caller (the route table's names).
  boost::asio::awaitable<Result<governance::ProviderKey>> PutProviderKey(
      governance::ProviderKey key);
  boost::asio::awaitable<Result<governance::ProviderKey>> DeleteProviderKey(std::string tenant,
                                                                            std::string deployment);
  // Re-seals every row under the current data key; the number of rows re-sealed.
  boost::asio::awaitable<Result<int64_t>> RotateProviderKeys();
  bool has_data_keys() const { return data_keys_ != nullptr && !data_keys_->empty(); }
  const std::string& data_key_id() const { return data_keys_->current_id(); }  // has_data_keys

  // The admin audit log (see above). RecordAudit: any thread.
  void RecordAudit(AuditRow row);
  boost::asio::awaitable<Result<std::vector<AuditRow>>> Audit(AuditQuery query);

  // Shutdown (store/store_thread.h): CloseJobs before the workers go, Stop after their last
  // flush. The destructor stops too: the thread runs the service's functions.
  void CloseJobs() { thread_.CloseJobs(); }
  void Stop();

  void RenderMetrics(observability::PrometheusWriter& writer) const;
  const store::StatementCounts& statements() const { return engine_.statements(); }

 private:
  GovernanceService(const config::Config& config, store::Engine& engine, store::StoreThread& thread,
                    governance::Counters& counters);

  // Store-thread side of everything below (and Start's, before the thread runs).
  Result<governance::SnapshotPtr> BuildFrom(const store::GovernanceRows& rows) const;
  // Validates `rows` by building, runs `write`, then adopts and publishes.
  Status Commit(store::GovernanceRows rows, const std::function<Status()>& write);
  Status ReloadOnThread(store::Engine& engine);
  // The "security" role's provider keys of `engine`, opened, into `rows` (none without the role).
  Status LoadProviderKeys(store::Engine& engine, store::GovernanceRows& rows) const;
  // This month's persisted spend into the counters of `snapshot` (start).
  Status RestoreSpend(store::CallLogStore& log, const governance::GovernanceSnapshot& snapshot);
  void WriteBatch(store::CallLogStore& log, store::CallBatchParts parts);
  // The log lane's tick (engine upkeep, the reconcile schedule) and the control lane's (the
  // change feed); one thread runs both when the engine has one session.
  void LogTick(store::Engine& engine);
  // One retention batch when one is due (the log lane's tick).
  void PurgeTick(store::Engine& engine, std::chrono::steady_clock::time_point now);
  void ControlTick(store::Engine& engine);
  Result<ReconcileReport> Reconcile(store::CallLogStore& log);
  // Built-in, then config, then `overrides` (the admin's), each replacing the one before.
  std::vector<PriceInfo> EffectivePrices(const std::vector<store::PriceOverride>& overrides) const;
  Result<PriceInfo> PriceOf(const std::string& model) const;

  const config::Config& config_;
  const governance::DataKeys* data_keys_ = nullptr;  // may be null: no BYOK
  governance::Counters& counters_;
  store::Engine& engine_;
  store::StoreThread& thread_;  // over engine_
  std::unique_ptr<governance::SnapshotCell> cell_;

  // The control lane only (and Start, before the threads start).
  store::GovernanceRows rows_;
  std::chrono::steady_clock::time_point next_change_poll_{};
  // The log lane only (and Start).
  std::chrono::steady_clock::time_point next_reconcile_{};
  std::chrono::steady_clock::time_point next_purge_{};
  bool purging_ = false;  // a purge is under way: one batch per tick until a short one
  // A scheduled reconcile is queued or running on a read lane.
  std::atomic<bool> reconcile_queued_{false};

  // Written by the store thread, read by /metrics.
  observability::Counter snapshot_publishes_;
  observability::Counter call_log_rows_;
  observability::Counter write_errors_;
  observability::Counter reconcile_runs_;
  observability::Gauge drift_micros_;  // the last reconcile's drift
  observability::Gauge last_batch_rows_;
  std::atomic<uint64_t> audit_dropped_{0};
  observability::Counter
      purged_rows_;  // the log lane's  // any thread (a refusal runs on the poster's)
};

}  // namespace turnpike::control
