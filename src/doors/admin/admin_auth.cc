#include "doors/admin/admin_auth.h"

#include <openssl/crypto.h>

#include "governance/authenticate.h"

namespace turnpike::doors::admin {

Result<AdminPrincipal> CheckAdminToken(const std::string& token,
                                       const governance::SnapshotCell& snapshots,
                                       std::string_view presented, int64_t now) {
  if (token.empty()) {
    return Error{ErrorCode::kForbidden,
                 "The admin API is off: start turnpike with TURNPIKE_ADMIN_TOKEN set.", ""};
  }
  if (presented.size() == token.size() &&
      CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0) {
    return AdminPrincipal{};
  }
  if (presented.starts_with(governance::kAdminTokenPrefix)) {
    const governance::SnapshotPtr snapshot = snapshots.Load();
    Result<governance::Principal> tenant =
        governance::AuthenticateAdminToken(*snapshot, presented, now);
    if (tenant.ok()) return AdminPrincipal{tenant->tenant->tenant.id, tenant->key->key.public_id};
    if (tenant.error().code != ErrorCode::kUnauthorized) return tenant.error();
  }
  return Error{ErrorCode::kUnauthorized,
               "Send the operator's admin token, or a tenant's admin token, as "
               "'Authorization: Bearer <token>'.",
               ""};
}

Result<AdminPrincipal> CheckSession(const ConsoleSessions& sessions,
                                    const governance::SnapshotCell& snapshots,
                                    std::string_view cookie_value, int64_t now) {
  const Error ended{ErrorCode::kUnauthorized,
                    "The console session has ended or is not valid: sign in again at /ui.", ""};
  std::optional<ConsoleIdentity> who = sessions.Verify(cookie_value, now);
  if (!who) return ended;
  if (who->tenant.empty()) return AdminPrincipal{};
  const governance::SnapshotPtr snapshot = snapshots.Load();
  const governance::KeyEntry* key = snapshot->FindKey(who->token_id);
  const governance::TenantEntry* tenant = snapshot->FindTenant(who->tenant);
  if (key == nullptr || tenant == nullptr || key->key.kind != governance::KeyKind::kAdmin ||
      key->key.status != governance::KeyStatus::kActive || key->key.tenant_id != who->tenant ||
      tenant->tenant.status != governance::TenantStatus::kActive ||
      (key->key.expires_at != governance::kNeverExpires && now >= key->key.expires_at)) {
    return ended;
  }
  return AdminPrincipal{who->tenant, who->token_id};
}

}  // namespace turnpike::doors::admin
