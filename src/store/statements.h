// Statement counting, the same for every engine: each statement or round trip an engine makes
// adds one to the slot of the StoreOp it was made for. The counts are the per-request-cost
// budget of DESIGN.md rule 2 ("every per-request cost is counted in a test"), exported as
// turnpike_store_statements_total{op}. An embedded engine counts statements; an engine behind
// a network counts round trips (one pipelined batch is one).
//
// Beyond StoreOp's purposes, a feature's store role (role.h) names its own: AddPurpose gives
// each a StoreOp value past kCount (at most kMaxPurposes in all), counted and rendered the same
// way.
//
// Ownership: an engine owns its StatementCounts (engine.h, statements()).
// Thread safety: any number of writers (an engine's sessions run on several threads: one
// atomic add per statement, next to a round trip); readers on any thread (relaxed atomics).
// AddPurpose only before the engine's threads start (a role's registration).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "observability/metrics.h"

namespace turnpike::store {

enum class StoreOp : uint8_t {
  kMigrate,        // schema migrations at start-up
  kSnapshotLoad,   // reading tenants, plans, keys and prices into a snapshot
  kChangeCheck,    // has another writer changed the records? (once per snapshot_ttl)
  kAdminRead,      // admin API reads (call log pages, spend of past months)
  kAdminWrite,     // admin API writes
  kCallLogInsert,  // one row of the call log (or one multi-row statement)
  kCallLogIndex,   // the call log's coarse indexes: a batch's tenant id ranges, a month's first id
  kCallLogRoute,   // a call-log route the engine did not know yet
  kSpendWrite,     // one spend row upserted (write-behind of the budget counters)
  kTransaction,    // BEGIN / COMMIT / ROLLBACK
  kReconcile,      // the reconcile job's sums and corrections
  kCallLogPurge,   // the retention job's deletes of old call-log rows
  kCount,
};
std::string_view StoreOpName(StoreOp op);

class StatementCounts {
 public:
  static constexpr size_t kMaxPurposes = 32;  // StoreOp's and the roles' together

  void Add(StoreOp op) { counts_[static_cast<size_t>(op)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t value(StoreOp op) const {
    return counts_[static_cast<size_t>(op)].load(std::memory_order_relaxed);
  }

  // A role's purpose `name` (snake_case, a constant: it is kept as a view), as a StoreOp past
  // kCount; the same op again for a name already added. false when kMaxPurposes are taken.
  bool AddPurpose(std::string_view name, StoreOp& op);
  // StoreOpName, or a role's purpose name.
  std::string_view Name(StoreOp op) const;

  // turnpike_store_statements_total{op}, one sample per StoreOp and per role purpose.
  void Render(observability::PrometheusWriter& writer) const;

 private:
  std::array<std::atomic<uint64_t>, kMaxPurposes> counts_{};
  std::array<std::string_view, kMaxPurposes> names_{};  // role purposes; constant once running
  size_t used_ = static_cast<size_t>(StoreOp::kCount);
};

}  // namespace turnpike::store
