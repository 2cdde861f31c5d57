// GovernanceRecords: the durable governance records (plans, tenants, virtual keys, price
// overrides) that the governance snapshot is built from, and their change feed. One role an
// engine implements (engine.h): the embedded engine over its file, a fleet engine over its
// server.
//
// Loading: LoadAll reads every record (they are small: a snapshot holds them all). Writes are
// one record each, each durable when it returns (one transaction).
//
// Change feed: PollChanges answers "did another writer commit changes to these records since
// the previous call?" - another connection, process or node. It is cheap (at most one
// statement or round trip, counted as StoreOp::kChangeCheck) and never waits: an engine that
// is told of changes (a notification channel) reports what arrived, one that must ask (a data
// version) asks. Writes made through this engine need not be reported (their writer publishes
// them at once) but may be: a spurious true costs one reload. The first call reports true
// (nothing was seen before it), so a caller marks its starting point by calling it once after
// its first LoadAll. A failed poll reports an error and leaves the mark where it was: the next
// successful poll still reports what it missed.
// Notified: an engine with a notification channel (PostgreSQL LISTEN) also answers, without a
// round trip and without waiting, whether a notification of another writer's commit arrived;
// the caller asks on every store-thread tick and reloads at once, and PollChanges (once per
// snapshot_ttl) stays the bound when a notification is lost. Engines without one say false.
// ChangeFd: such an engine also names the descriptor that becomes readable when a
// notification may have arrived (the LISTEN connection's socket), so the store thread that
// ticks the feed sleeps on it and ticks at once instead of polling (store_thread.h); -1 while
// there is none (not listening yet, reconnecting, or no channel).
//
// Threads: called only from the store thread (store_thread.h), or before it starts.
// Errors: kInternal when the engine fails; kConflict for a duplicate id; kNotFound for an
// update or delete of a missing record. Nothing is half-written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "governance/snapshot.h"

namespace turnpike::store {

struct PriceOverride {
  std::string model;
  governance::ModelPrice price;
  int64_t updated_at = 0;
};

// Everything the governance snapshot is built from, as the engine has it.
// provider_keys are not the records' (LoadAll leaves them empty): the governance service
// reads them from the "security" role and opens them (control/security_store.h).
struct GovernanceRows {
  std::vector<governance::ProviderKey> provider_keys;
  std::vector<governance::Plan> plans;
  std::vector<governance::Tenant> tenants;
  std::vector<governance::Key> keys;
  std::vector<PriceOverride> prices;
};

class GovernanceRecords {
 public:
  virtual ~GovernanceRecords() = default;

  virtual Result<GovernanceRows> LoadAll() = 0;
  // true: another writer committed since the previous call (see the top of this file).
  virtual Result<bool> PollChanges() = 0;
  // true: a notification of another writer's commit arrived (see the top of this file).
  virtual Result<bool> Notified() { return false; }
  // Readable when Notified may say true; -1 for none (see the top of this file).
  virtual int ChangeFd() const { return -1; }

  virtual Status UpsertPlan(const governance::Plan& plan) = 0;
  virtual Status InsertTenant(const governance::Tenant& tenant) = 0;  // kConflict if present
  virtual Status UpdateTenant(const governance::Tenant& tenant) = 0;  // kNotFound if absent
  virtual Status InsertKey(const governance::Key& key) = 0;           // kConflict if present
  virtual Status SetKeyStatus(std::string_view public_id, governance::KeyStatus status,
                              int64_t at) = 0;               // kNotFound if absent
  virtual Status DeleteKey(std::string_view public_id) = 0;  // kNotFound if absent
  virtual Status UpsertPrice(const PriceOverride& price) = 0;
  virtual Status DeletePrice(std::string_view model) = 0;  // kNotFound if absent
};

}  // namespace turnpike::store
