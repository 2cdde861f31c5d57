// The admin API's writes and call-log pages. Each write runs on the store thread: it edits a
// copy of the records, and Commit validates it by building the snapshot, writes the one
// record, then publishes.
#include <algorithm>
#include <string>
#include <utility>

#include "common/clock.h"
#include "control/governance_service.h"
#include "governance/keys.h"

namespace turnpike::control {
namespace {

using governance::Key;
using governance::KeyStatus;
using governance::Plan;
using governance::Tenant;
using store::GovernanceRows;
using store::PriceOverride;

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

Error NotFound(std::string message, std::string param = "") {
  return Error{ErrorCode::kNotFound, std::move(message), std::move(param)};
}

// A create retried with the Idempotency-Key of one that was made (`id`: "" when the id the key
// derives belongs to another tenant, which is not named).
Error MadeBefore(const std::string& id) {
  if (id.empty()) {
    return Error{ErrorCode::kConflict,
                 "The id this Idempotency-Key derives is taken; use another Idempotency-Key.",
                 "Idempotency-Key"};
  }
  return Error{ErrorCode::kConflict,
               "A key was made with this Idempotency-Key already: " + id +
                   ". Its secret was shown once, to the request that made it: if that answer "
                   "was lost, revoke or delete " +
                   id + " and make another with a new Idempotency-Key.",
               "Idempotency-Key"};
}

template <typename T, typename Pred>
T* FindIf(std::vector<T>& items, Pred pred) {
  for (T& item : items) {
    if (pred(item)) return &item;
  }
  return nullptr;
}

}  // namespace

boost::asio::awaitable<Result<Plan>> GovernanceService::PutPlan(Plan plan) {
  auto job = [this, plan = std::move(plan)](store::Engine& engine) -> Result<Plan> {
    GovernanceRows rows = rows_;
    if (Plan* existing = FindIf(rows.plans, [&](const Plan& p) { return p.id == plan.id; })) {
      *existing = plan;
    } else {
      rows.plans.push_back(plan);
    }
    Status done = Commit(std::move(rows), [&] { return engine.records().UpsertPlan(plan); });
    if (!done.ok()) return done.error();
    return plan;
  };
  Result<Plan> result = co_await thread_.Call<Plan>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Tenant>> GovernanceService::CreateTenant(Tenant tenant) {
  auto job = [this, tenant = std::move(tenant)](store::Engine& engine) mutable -> Result<Tenant> {
    GovernanceRows rows = rows_;
    if (FindIf(rows.tenants, [&](const Tenant& t) { return t.id == tenant.id; })) {
      return Error{ErrorCode::kConflict, "tenant " + tenant.id + " exists already", "id"};
    }
    if (!FindIf(rows.plans, [&](const Plan& p) { return p.id == tenant.plan_id; })) {
      return Invalid("no plan " + tenant.plan_id + "; create it first", "plan");
    }
    tenant.created_at = UnixSeconds();
    rows.tenants.push_back(tenant);
    Status done = Commit(std::move(rows), [&] { return engine.records().InsertTenant(tenant); });
    if (!done.ok()) return done.error();
    return tenant;
  };
  Result<Tenant> result = co_await thread_.Call<Tenant>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Tenant>> GovernanceService::UpdateTenant(TenantPatch patch) {
  auto job = [this, patch = std::move(patch)](store::Engine& engine) -> Result<Tenant> {
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
    Status done = Commit(std::move(rows), [&] { return engine.records().UpdateTenant(updated); });
    if (!done.ok()) return done.error();
    return updated;
  };
  Result<Tenant> result = co_await thread_.Call<Tenant>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<CreatedKey>> GovernanceService::CreateKey(
    Key key, std::string idempotency_key) {
  auto job = [this, key = std::move(key), idempotency_key = std::move(idempotency_key)](
                 store::Engine& engine) mutable -> Result<CreatedKey> {
    GovernanceRows rows = rows_;
    if (!FindIf(rows.tenants, [&](const Tenant& t) { return t.id == key.tenant_id; })) {
      return NotFound("no tenant " + key.tenant_id, "tenant");
    }
    const std::string_view prefix = key.kind == governance::KeyKind::kAdmin
                                        ? governance::kAdminTokenPrefix
                                        : governance::kKeyPrefix;
    std::string derived_id;
    if (!idempotency_key.empty()) {
      std::optional<std::string> id =
          governance::IdempotentPublicId(prefix, key.tenant_id, idempotency_key);
      if (!id) return Error{ErrorCode::kInternal, "SHA-256 failed", ""};
      derived_id = std::move(*id);
      const Key* made = FindIf(rows.keys, [&](const Key& k) { return k.public_id == derived_id; });
      if (made != nullptr) return MadeBefore(made->tenant_id == key.tenant_id ? derived_id : "");
    }
    Result<governance::GeneratedKey> generated = governance::GenerateKey(prefix, derived_id);
    if (!generated.ok()) return generated.error();
    key.public_id = generated->public_id;
    key.secret_hash = generated->secret_hash;
    key.status = KeyStatus::kActive;
    key.created_at = UnixSeconds();
    rows.keys.push_back(key);
    Status done = Commit(std::move(rows), [&] { return engine.records().InsertKey(key); });
    // Made on another replica, not yet in this one's rows: the store's primary key refused it.
    if (!done.ok() && !derived_id.empty() && done.error().code == ErrorCode::kConflict) {
      return MadeBefore(derived_id);
    }
    if (!done.ok()) return done.error();
    return CreatedKey{key, std::move(generated->key)};
  };
  Result<CreatedKey> result = co_await thread_.Call<CreatedKey>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Key>> GovernanceService::RevokeKey(std::string public_id) {
  auto job = [this, public_id = std::move(public_id)](store::Engine& engine) -> Result<Key> {
    GovernanceRows rows = rows_;
    Key* key = FindIf(rows.keys, [&](const Key& k) { return k.public_id == public_id; });
    if (key == nullptr) return NotFound("no key " + public_id);
    key->status = KeyStatus::kRevoked;
    Key revoked = *key;
    const int64_t now = UnixSeconds();
    Status done = Commit(std::move(rows), [&] {
      return engine.records().SetKeyStatus(public_id, KeyStatus::kRevoked, now);
    });
    if (!done.ok()) return done.error();
    return revoked;
  };
  Result<Key> result = co_await thread_.Call<Key>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<PriceInfo>> GovernanceService::PutPrice(PriceOverride price) {
  auto job = [this, price = std::move(price)](store::Engine& engine) mutable -> Result<PriceInfo> {
    GovernanceRows rows = rows_;
    price.updated_at = UnixSeconds();
    if (PriceOverride* existing =
            FindIf(rows.prices, [&](const PriceOverride& p) { return p.model == price.model; })) {
      *existing = price;
    } else {
      rows.prices.push_back(price);
    }
    Status done = Commit(std::move(rows), [&] { return engine.records().UpsertPrice(price); });
    if (!done.ok()) return done.error();
    return PriceOf(price.model);
  };
  Result<PriceInfo> result = co_await thread_.Call<PriceInfo>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<Key>> GovernanceService::DeleteKey(std::string public_id) {
  auto job = [this, public_id = std::move(public_id)](store::Engine& engine) -> Result<Key> {
    GovernanceRows rows = rows_;
    auto it = std::find_if(rows.keys.begin(), rows.keys.end(),
                           [&](const Key& k) { return k.public_id == public_id; });
    if (it == rows.keys.end()) return NotFound("no key " + public_id);
    Key deleted = std::move(*it);
    rows.keys.erase(it);
    Status done =
        Commit(std::move(rows), [&] { return engine.records().DeleteKey(deleted.public_id); });
    if (!done.ok()) return done.error();
    return deleted;
  };
  Result<Key> result = co_await thread_.Call<Key>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<PriceInfo>> GovernanceService::DeletePrice(std::string model) {
  auto job = [this, model = std::move(model)](store::Engine& engine) -> Result<PriceInfo> {
    GovernanceRows rows = rows_;
    const size_t before = rows.prices.size();
    std::erase_if(rows.prices, [&](const PriceOverride& p) { return p.model == model; });
    if (rows.prices.size() == before) {
      return NotFound("no admin price override for model " + model, "model");
    }
    Status done = Commit(std::move(rows), [&] { return engine.records().DeletePrice(model); });
    if (!done.ok()) return done.error();
    Result<PriceInfo> now = PriceOf(model);
    if (!now.ok()) return PriceInfo{model, {}, PriceSource::kAdmin};  // unpriced from now on
    return now;
  };
  Result<PriceInfo> result = co_await thread_.Call<PriceInfo>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<std::vector<store::CallRow>>> GovernanceService::Calls(
    store::CallQuery query) {
  auto job = [query =
                  std::move(query)](store::Engine& engine) -> Result<std::vector<store::CallRow>> {
    return engine.call_log().QueryCalls(query);
  };
  Result<std::vector<store::CallRow>> result =
      co_await thread_.Call<std::vector<store::CallRow>>(std::move(job), store::JobLane::kRead);
  co_return result;
}

boost::asio::awaitable<Result<std::vector<store::DailySpendRow>>> GovernanceService::DailySpend(
    store::DailySpendQuery query) {
  auto job = [query = std::move(query)](
                 store::Engine& engine) -> Result<std::vector<store::DailySpendRow>> {
    // The engine's call log keeps the counters when it implements their reader (daily_spend.h).
    auto* reader = dynamic_cast<store::DailySpendReader*>(&engine.call_log());
    if (reader == nullptr) return std::vector<store::DailySpendRow>{};
    return reader->QueryDailySpend(query);
  };
  Result<std::vector<store::DailySpendRow>> result =
      co_await thread_.Call<std::vector<store::DailySpendRow>>(std::move(job),
                                                               store::JobLane::kRead);
  co_return result;
}

}  // namespace turnpike::control
