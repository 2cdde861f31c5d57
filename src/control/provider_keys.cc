// Tenants' provider keys (BYOK) on the store thread: opened when the records load, sealed and
// written by the admin API's writes, re-sealed by rotation (governance_service.h).
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "control/governance_service.h"

namespace turnpike::control {
namespace {

using governance::ProviderKey;

// What binds a sealed key to its place: a row moved to another tenant or deployment does not
// open. The NUL cannot occur in either id (admin ids; config names are YAML strings).
std::string Aad(std::string_view tenant, std::string_view deployment) {
  std::string aad(tenant);
  aad.push_back('\0');
  aad.append(deployment);
  return aad;
}

Error NoDataKey() {
  return Error{ErrorCode::kForbidden,
               "No data key is configured (security.data_key_file or TURNPIKE_DATA_KEY): "
               "tenants' provider keys cannot be stored.",
               ""};
}

Error NoRole() {
  return Error{ErrorCode::kInternal, "the store keeps no provider keys (no security role)", ""};
}

Result<SealedProviderKey> SealKey(const governance::DataKeys& keys, const ProviderKey& key) {
  Result<governance::Sealed> sealed = keys.Seal(key.api_key, Aad(key.tenant_id, key.deployment));
  if (!sealed.ok()) return sealed.error();
  return SealedProviderKey{key.tenant_id, key.deployment, std::move(sealed.value()),
                           key.updated_at};
}

}  // namespace

Status GovernanceService::LoadProviderKeys(store::Engine& engine,
                                           store::GovernanceRows& rows) const {
  SecurityStore* security = engine.role<SecurityStore>();
  if (security == nullptr) return Ok{};
  Result<std::vector<SealedProviderKey>> sealed = security->LoadProviderKeys();
  if (!sealed.ok()) return sealed.error();
  for (const SealedProviderKey& row : sealed.value()) {
    if (!has_data_keys()) {
      std::fprintf(stderr,
                   "turnpike: provider key of tenant %s, deployment %s not used: no data key is "
                   "configured\n",
                   row.tenant_id.c_str(), row.deployment.c_str());
      continue;
    }
    Result<std::string> plain = data_keys_->Open(row.sealed, Aad(row.tenant_id, row.deployment));
    if (!plain.ok()) {
      std::fprintf(stderr, "turnpike: provider key of tenant %s, deployment %s not used: %s\n",
                   row.tenant_id.c_str(), row.deployment.c_str(), plain.error().message.c_str());
      continue;
    }
    rows.provider_keys.push_back(ProviderKey{row.tenant_id, row.deployment,
                                             std::move(plain.value()), row.sealed.key_id,
                                             row.updated_at});
  }
  return Ok{};
}

boost::asio::awaitable<Result<ProviderKey>> GovernanceService::PutProviderKey(ProviderKey key) {
  if (!has_data_keys()) co_return NoDataKey();
  auto job = [this, key = std::move(key)](store::Engine& engine) mutable -> Result<ProviderKey> {
    SecurityStore* security = engine.role<SecurityStore>();
    if (security == nullptr) return NoRole();
    store::GovernanceRows rows = rows_;
    bool tenant_found = false;
    for (const governance::Tenant& t : rows.tenants) tenant_found |= t.id == key.tenant_id;
    if (!tenant_found) return Error{ErrorCode::kNotFound, "no tenant " + key.tenant_id, ""};
    key.updated_at = UnixSeconds();
    key.data_key_id = data_keys_->current_id();
    Result<SealedProviderKey> sealed = SealKey(*data_keys_, key);
    if (!sealed.ok()) return sealed.error();
    bool replaced = false;
    for (ProviderKey& existing : rows.provider_keys) {
      if (existing.tenant_id == key.tenant_id && existing.deployment == key.deployment) {
        existing = key;
        replaced = true;
      }
    }
    if (!replaced) rows.provider_keys.push_back(key);
    Status done = Commit(std::move(rows), [&] { return security->PutProviderKey(*sealed); });
    if (!done.ok()) return done.error();
    return key;
  };
  Result<ProviderKey> result = co_await thread_.Call<ProviderKey>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<ProviderKey>> GovernanceService::DeleteProviderKey(
    std::string tenant, std::string deployment) {
  auto job = [this, tenant = std::move(tenant),
              deployment = std::move(deployment)](store::Engine& engine) -> Result<ProviderKey> {
    SecurityStore* security = engine.role<SecurityStore>();
    if (security == nullptr) return NoRole();
    store::GovernanceRows rows = rows_;
    std::optional<ProviderKey> removed;
    std::erase_if(rows.provider_keys, [&](const ProviderKey& k) {
      if (k.tenant_id != tenant || k.deployment != deployment) return false;
      removed = k;
      return true;
    });
    bool deleted = false;
    Status done = Commit(std::move(rows), [&]() -> Status {
      Result<bool> gone = security->DeleteProviderKey(tenant, deployment);
      if (!gone.ok()) return gone.error();
      deleted = gone.value();
      return Ok{};
    });
    if (!done.ok()) return done.error();
    // A row that did not open is not in the snapshot but was deleted all the same.
    if (!deleted) return Error{ErrorCode::kNotFound, "no provider key " + deployment, ""};
    if (!removed) removed = ProviderKey{tenant, deployment, "", "", 0};
    return *removed;
  };
  Result<ProviderKey> result = co_await thread_.Call<ProviderKey>(std::move(job));
  co_return result;
}

boost::asio::awaitable<Result<int64_t>> GovernanceService::RotateProviderKeys() {
  if (!has_data_keys()) co_return NoDataKey();
  auto job = [this](store::Engine& engine) -> Result<int64_t> {
    SecurityStore* security = engine.role<SecurityStore>();
    if (security == nullptr) return NoRole();
    // From the store, not the snapshot: every row, including one written by another replica.
    Result<std::vector<SealedProviderKey>> stored = security->LoadProviderKeys();
    if (!stored.ok()) return stored.error();
    std::vector<SealedProviderKey> resealed;
    for (const SealedProviderKey& row : stored.value()) {
      if (row.sealed.key_id == data_keys_->current_id()) continue;
      const std::string aad = Aad(row.tenant_id, row.deployment);
      Result<std::string> plain = data_keys_->Open(row.sealed, aad);
      if (!plain.ok()) {
        return Error{ErrorCode::kInternal,
                     "tenant " + row.tenant_id + ", deployment " + row.deployment + ": " +
                         plain.error().message,
                     ""};
      }
      Result<governance::Sealed> sealed = data_keys_->Seal(plain.value(), aad);
      if (!sealed.ok()) return sealed.error();
      resealed.push_back(SealedProviderKey{row.tenant_id, row.deployment, std::move(sealed.value()),
                                           row.updated_at});
    }
    if (!resealed.empty()) {
      Status written = security->ReplaceProviderKeys(resealed);
      if (!written.ok()) return written.error();
      Status reloaded = ReloadOnThread(engine);
      if (!reloaded.ok()) return reloaded.error();
    }
    return static_cast<int64_t>(resealed.size());
  };
  Result<int64_t> result = co_await thread_.Call<int64_t>(std::move(job));
  co_return result;
}

}  // namespace turnpike::control
