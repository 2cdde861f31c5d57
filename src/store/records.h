// Store: the durable state behind governance — plans, tenants, virtual keys, price overrides,
// the monthly spend of every tenant and key, and the call log — behind one interface, so that
// PostgreSQL can follow SQLite (sqlite_store.h) without touching its callers.
//
// Calls are synchronous and made only from the store thread (store_thread.h); worker threads
// never call a Store. SQL is kept portable where it is cheap (no SQLite-only types; upserts use
// ON CONFLICT ... DO UPDATE, which PostgreSQL shares).
//
// Spend: one row per scope ("tenant" or "key"), scope id and month ("YYYY-MM"). WriteCalls
// adds each record's cost to its tenant's and key's rows in the same transaction that inserts
// the call-log rows, so the persisted spend always equals the sum of the logged rows plus the
// spend of rows that were never logged (log_store off, or dropped by the queue's drop policy);
// the reconcile job finds the latter as drift.
//
// Errors: kInternal for SQLite failures, kConflict for a duplicate id, kNotFound for an update
// of a missing row; nothing is half-written (each call is one transaction).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "governance/snapshot.h"
#include "store/call_record.h"

namespace turnpike::store {

enum class SpendScope { kTenant, kKey };

struct SpendRow {
  SpendScope scope = SpendScope::kTenant;
  std::string scope_id;  // tenant id or key public id
  std::string month;     // "YYYY-MM"
  int64_t spent_micros = 0;
};

struct PriceOverride {
  std::string model;
  governance::ModelPrice price;
  int64_t updated_at = 0;
};

// Filters of a call-log page; unset fields do not filter. Newest first; `before_id` continues
// a page (the last id of the previous page).
struct CallQuery {
  std::string tenant_id;
  std::string key_id;
  std::string model;
  int status = 0;
  int64_t since_ms = 0;
  int64_t until_ms = 0;  // 0: no upper bound
  int64_t before_id = 0;
  int limit = 100;
};

struct CallRow {
  int64_t id = 0;
  CallRecord record;
};

// Everything the governance snapshot is built from, as the store has it.
struct GovernanceRows {
  std::vector<governance::Plan> plans;
  std::vector<governance::Tenant> tenants;
  std::vector<governance::Key> keys;
  std::vector<PriceOverride> prices;
};

class Store {
 public:
  virtual ~Store() = default;

  // Applies the migrations the database has not seen yet, in order, each in a transaction.
  virtual Status Migrate() = 0;
  virtual int SchemaVersion() = 0;

  virtual Result<GovernanceRows> LoadGovernance() = 0;
  // A number that changes when another connection or process committed (SQLite's
  // data_version; PostgreSQL will use a change signal instead). One statement.
  virtual Result<int64_t> ChangeVersion() = 0;

  virtual Status UpsertPlan(const governance::Plan& plan) = 0;
  virtual Status InsertTenant(const governance::Tenant& tenant) = 0;
  virtual Status UpdateTenant(const governance::Tenant& tenant) = 0;  // kNotFound if absent
  virtual Status InsertKey(const governance::Key& key) = 0;
  virtual Status SetKeyStatus(std::string_view public_id, governance::KeyStatus status,
                              int64_t at) = 0;
  virtual Status UpsertPrice(const PriceOverride& price) = 0;
  virtual Status DeletePrice(std::string_view model) = 0;  // kNotFound if absent

  // Spend rows of the given months (every scope).
  virtual Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) = 0;

  // One transaction: inserts the records of every part, in order, into the call log when
  // `log_rows`, and adds their costs to the spend rows (+ `extra_spend`, spend carried without
  // a row).
  virtual Status WriteCalls(CallBatchParts parts, bool log_rows,
                            std::span<const SpendRow> extra_spend) = 0;

  virtual Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) = 0;

  // Reconcile: the call log's cost per scope in `month`, and overwriting spend rows.
  virtual Result<std::vector<SpendRow>> SumCallLog(const std::string& month) = 0;
  virtual Status SetSpend(std::span<const SpendRow> rows) = 0;
};

}  // namespace turnpike::store
