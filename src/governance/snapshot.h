// GovernanceSnapshot: tenants, plans, virtual keys and model prices as one immutable value,
// with the live counters (budget, RPM, TPM) of every tenant and key attached.
//
// Configuration is immutable after Build: a request takes one snapshot (snapshot_cell.h) and
// keeps it for its whole life, so every lookup of that request sees the same config. Counters
// are mutable state hung off the immutable entries (Envoy's FilterConfig owning its stats):
// Build hands the counter objects of every tenant and key that `previous` also had on to the
// new snapshot, so publishing a config change never resets spend or rate state; the Counters
// factory (counters.h) makes those of tenants and keys that are new. A tenant or key that
// disappears takes its counters with it once the last snapshot naming it is gone.
//
// Lookups are O(1) hash lookups over views into the snapshot's own strings; no allocation.
// Pointers returned stay valid as long as the snapshot (hold the shared_ptr).
//
// Limits: a Plan's limits apply to the tenant as a whole; a Key's optional limits apply to that
// key alone, inside its tenant's. A model is allowed iff the plan's list and the key's list
// each either is empty or names it.
//
// Thread safety: a built snapshot is safe to read from any thread; so are its counters.
// Errors: Build returns kInvalidRequest naming the first inconsistency (duplicate id, dangling
// reference, malformed public id, negative amount or limit); nothing is published then.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "governance/cost.h"
#include "governance/counters.h"
#include "governance/keys.h"

namespace turnpike::governance {

enum class TenantStatus { kActive, kSuspended };
enum class KeyStatus { kActive, kRevoked };

// What a key is for. A virtual key calls the gateway's doors on its tenant's account; an admin
// token ("tpa-..." keys.h) acts on the admin API for its tenant only. Each is refused where the
// other is expected (401, as an unknown key).
enum class KeyKind : uint8_t { kVirtual, kAdmin };

inline constexpr int64_t kNeverExpires = 0;

// Unset optionals mean "no limit".
// How a plan's tenants use the LLM response cache (doors/llm/response_cache.h).
struct CachePolicy {
  enum class Mode : uint8_t {
    kDefault,  // the gateway's llm_cache.enabled
    kOn,
    kOff,
  };
  Mode mode = Mode::kDefault;
  bool key_scope = false;   // entries are shared by one key's requests, not the tenant's
  bool tool_calls = false;  // answers that call tools are stored too
  int32_t semantic_bp = 0;  // semantic lookups' similarity threshold x 10000; 0: exact only
  bool operator==(const CachePolicy&) const = default;
};

struct Plan {
  std::string id;
  std::optional<int64_t> monthly_budget_micros;
  std::optional<int64_t> rpm;
  std::optional<int64_t> tpm;
  std::vector<std::string> allowed_models;  // empty: every model
  std::optional<int64_t> max_request_cost_micros;
  // A request the door bills per query (Billing::per_query: a search) costs exactly this, not
  // its tokens. Unset: priced by tokens like any other call.
  std::optional<int64_t> search_query_price_micros;
  // With shared counters (redis.url) unreachable and this replica's budget slice spent: admit
  // against this replica's own count (its restored and settled spend) instead of answering
  // 503. Gives up the zero-overshoot guarantee for this plan's tenants; off by default.
  bool fail_open = false;
  CachePolicy cache;
  // Percents of monthly_budget_micros announced once a month per tenant (budget_alerts.h):
  // ascending, distinct, each in [1, kMaxBudgetAlertPercent], at most kMaxBudgetAlerts of
  // them; empty: none. Unset: the gateway's webhooks.budget_alerts.
  std::optional<std::vector<int>> budget_alerts;
};

struct Tenant {
  std::string id;
  std::string name;
  TenantStatus status = TenantStatus::kActive;
  std::string plan_id;
  bool log_bodies = false;  // the call log keeps this tenant's request bodies
  int64_t created_at = 0;   // unix seconds
};

struct Key {
  std::string public_id;
  std::string tenant_id;
  std::string name;
  SecretHash secret_hash{};
  KeyStatus status = KeyStatus::kActive;
  int64_t expires_at = kNeverExpires;  // unix seconds; the key fails from this second on
  std::optional<int64_t> monthly_budget_micros;
  std::optional<int64_t> rpm;
  std::optional<int64_t> tpm;
  std::vector<std::string> allowed_models;  // empty: whatever the plan allows
  int64_t created_at = 0;                   // unix seconds
  KeyKind kind = KeyKind::kVirtual;
  bool cache_off = false;  // this key's requests never use the LLM response cache
};

// Everything a snapshot is built from (the store's rows, or a test's literals).
// A tenant's own API key for one deployment (BYOK: control/security_store.h), as the store
// opened it. The plaintext lives in memory only: in snapshots, never in a log or an answer.
struct ProviderKey {
  std::string tenant_id;
  std::string deployment;  // config `models[].deployments[].name`
  std::string api_key;
  std::string data_key_id;  // the data key it is sealed under (governance/data_keys.h)
  int64_t updated_at = 0;   // unix seconds
};

struct SnapshotData {
  std::vector<ProviderKey> provider_keys;  // of tenants not in `tenants`: ignored
  std::vector<Plan> plans;
  std::vector<Tenant> tenants;
  std::vector<Key> keys;
  std::vector<std::pair<std::string, ModelPrice>> prices;  // model name -> price
};

struct TenantEntry {
  Tenant tenant;
  const Plan* plan = nullptr;
  std::shared_ptr<ScopeCounters> counters;
  std::vector<ProviderKey> provider_keys;  // its own provider keys, few: searched in order

  // The tenant's own key for `deployment`, or nullptr (the deployment's configured key).
  const ProviderKey* FindProviderKey(std::string_view deployment) const {
    for (const ProviderKey& key : provider_keys) {
      if (key.deployment == deployment) return &key;
    }
    return nullptr;
  }
};

struct KeyEntry {
  Key key;
  const TenantEntry* tenant = nullptr;
  std::shared_ptr<ScopeCounters> counters;
};

class GovernanceSnapshot;
using SnapshotPtr = std::shared_ptr<const GovernanceSnapshot>;

class GovernanceSnapshot {
 public:
  // Validates `data` and builds a snapshot. A tenant or key that `previous` (may be null) also
  // has keeps its counters, whichever factory made them; `counters` makes those of the others
  // (MakeScope(kTenant, tenant id), MakeScope(kKey, public id)).
  static Result<SnapshotPtr> Build(SnapshotData data, const GovernanceSnapshot* previous,
                                   Counters& counters);

  // nullptr if absent.
  const KeyEntry* FindKey(std::string_view public_id) const;
  const TenantEntry* FindTenant(std::string_view tenant_id) const;
  const Plan* FindPlan(std::string_view plan_id) const;
  const ModelPrice* FindPrice(std::string_view model) const;

  size_t key_count() const { return keys_.size(); }
  const std::vector<Plan>& plans() const { return plans_; }
  const std::vector<TenantEntry>& tenants() const { return tenants_; }
  const std::vector<KeyEntry>& keys() const { return keys_; }
  const std::vector<std::pair<std::string, ModelPrice>>& prices() const { return prices_; }

 private:
  GovernanceSnapshot() = default;
  Status Index(const GovernanceSnapshot* previous, Counters& counters);

  // Entries never move after Build: the indexes hold views into them and pointers to them.
  std::vector<Plan> plans_;
  std::vector<TenantEntry> tenants_;
  std::vector<KeyEntry> keys_;
  std::vector<std::pair<std::string, ModelPrice>> prices_;
  std::unordered_map<std::string_view, const Plan*> plan_index_;
  std::unordered_map<std::string_view, const TenantEntry*> tenant_index_;
  std::unordered_map<std::string_view, const KeyEntry*> key_index_;
  std::unordered_map<std::string_view, const ModelPrice*> price_index_;
};

}  // namespace turnpike::governance
