#include "governance/snapshot.h"

#include <utility>

namespace turnpike::governance {
namespace {

Error Invalid(std::string message) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), ""};
}

// nullopt if `value` is unset or within [min, max].
std::optional<Error> CheckRange(const std::optional<int64_t>& value, int64_t min, int64_t max,
                                std::string_view what, std::string_view owner) {
  if (!value || (*value >= min && *value <= max)) return std::nullopt;
  return Invalid(std::string(what) + " of " + std::string(owner) + " is out of range");
}

// The first error of a plan's or key's budget and limits.
template <typename Scope>
std::optional<Error> CheckLimits(const Scope& scope, std::string_view owner) {
  if (auto e =
          CheckRange(scope.monthly_budget_micros, 0, kMaxBudgetMicros, "monthly budget", owner)) {
    return e;
  }
  if (auto e = CheckRange(scope.rpm, 1, kMaxRateLimit, "RPM", owner)) return e;
  return CheckRange(scope.tpm, 1, kMaxRateLimit, "TPM", owner);
}

std::optional<Error> CheckPrice(const std::string& model, const ModelPrice& price) {
  if (price.input_micros_per_mtok < 0 || price.output_micros_per_mtok < 0 ||
      price.cached_input_micros_per_mtok < 0) {
    return Invalid("negative price for model " + model);
  }
  if (price.max_output_tokens <= 0)
    return Invalid("max output tokens of " + model + " is not positive");
  return std::nullopt;
}

// Inserts `key` -> `value` into `index`; an error if the key is empty or already there.
template <typename T>
std::optional<Error> AddUnique(std::unordered_map<std::string_view, const T*>& index,
                               std::string_view key, const T* value, std::string_view what) {
  if (key.empty()) return Invalid(std::string(what) + " with an empty id");
  if (!index.emplace(key, value).second) {
    return Invalid("duplicate " + std::string(what) + " " + std::string(key));
  }
  return std::nullopt;
}

// The counters of the same tenant or key in the previous snapshot, or new ones.
template <typename Entry>
std::shared_ptr<ScopeCounters> CarryCounters(const Entry* previous, Counters& counters,
                                             ScopeKind kind, std::string_view id) {
  if (previous != nullptr) return previous->counters;
  return counters.MakeScope(kind, id);
}

template <typename T, typename Index>
const T* Lookup(const Index& index, std::string_view id) {
  auto it = index.find(id);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace

Result<SnapshotPtr> GovernanceSnapshot::Build(SnapshotData data, const GovernanceSnapshot* previous,
                                              Counters& counters) {
  // Private constructor: no make_shared.
  std::shared_ptr<GovernanceSnapshot> snapshot(new GovernanceSnapshot());
  snapshot->plans_ = std::move(data.plans);
  snapshot->prices_ = std::move(data.prices);
  snapshot->tenants_.reserve(data.tenants.size());
  for (Tenant& tenant : data.tenants)
    snapshot->tenants_.push_back({std::move(tenant), nullptr, {}, {}});
  if (!data.provider_keys.empty()) {
    std::unordered_map<std::string_view, TenantEntry*> by_id;
    for (TenantEntry& entry : snapshot->tenants_) by_id.emplace(entry.tenant.id, &entry);
    for (ProviderKey& key : data.provider_keys) {
      auto it = by_id.find(key.tenant_id);
      if (it != by_id.end()) it->second->provider_keys.push_back(std::move(key));
    }
  }
  snapshot->keys_.reserve(data.keys.size());
  for (Key& key : data.keys) snapshot->keys_.push_back({std::move(key), nullptr, {}});
  Status indexed = snapshot->Index(previous, counters);
  if (!indexed.ok()) return indexed.error();
  return SnapshotPtr(std::move(snapshot));
}

Status GovernanceSnapshot::Index(const GovernanceSnapshot* previous, Counters& counters) {
  for (const Plan& plan : plans_) {
    if (auto e = AddUnique(plan_index_, plan.id, &plan, "plan")) return *e;
    if (auto e = CheckLimits(plan, plan.id)) return *e;
    if (auto e = CheckRange(plan.max_request_cost_micros, 0, kMaxBudgetMicros,
                            "per-request cost cap", plan.id)) {
      return *e;
    }
    if (auto e = CheckRange(plan.search_query_price_micros, 0, kMaxBudgetMicros,
                            "search query price", plan.id)) {
      return *e;
    }
  }
  for (const auto& [model, price] : prices_) {
    if (auto e = AddUnique(price_index_, model, &price, "model price")) return *e;
    if (auto e = CheckPrice(model, price)) return *e;
  }
  for (TenantEntry& entry : tenants_) {
    const Tenant& tenant = entry.tenant;
    if (auto e = AddUnique(tenant_index_, tenant.id, &entry, "tenant")) return *e;
    entry.plan = FindPlan(tenant.plan_id);
    if (entry.plan == nullptr) {
      return Invalid("tenant " + tenant.id + " names unknown plan " + tenant.plan_id);
    }
    entry.counters = CarryCounters(previous != nullptr ? previous->FindTenant(tenant.id) : nullptr,
                                   counters, ScopeKind::kTenant, tenant.id);
  }
  for (KeyEntry& entry : keys_) {
    const Key& key = entry.key;
    if (!IsValidPublicId(key.public_id)) return Invalid("malformed key id " + key.public_id);
    if (auto e = AddUnique(key_index_, key.public_id, &entry, "key")) return *e;
    if (auto e = CheckLimits(key, key.public_id)) return *e;
    if (key.expires_at < 0) return Invalid("negative expiry of key " + key.public_id);
    entry.tenant = FindTenant(key.tenant_id);
    if (entry.tenant == nullptr) {
      return Invalid("key " + key.public_id + " names unknown tenant " + key.tenant_id);
    }
    entry.counters = CarryCounters(previous != nullptr ? previous->FindKey(key.public_id) : nullptr,
                                   counters, ScopeKind::kKey, key.public_id);
  }
  return Ok{};
}

const KeyEntry* GovernanceSnapshot::FindKey(std::string_view public_id) const {
  return Lookup<KeyEntry>(key_index_, public_id);
}

const TenantEntry* GovernanceSnapshot::FindTenant(std::string_view tenant_id) const {
  return Lookup<TenantEntry>(tenant_index_, tenant_id);
}

const Plan* GovernanceSnapshot::FindPlan(std::string_view plan_id) const {
  return Lookup<Plan>(plan_index_, plan_id);
}

const ModelPrice* GovernanceSnapshot::FindPrice(std::string_view model) const {
  return Lookup<ModelPrice>(price_index_, model);
}

}  // namespace turnpike::governance
