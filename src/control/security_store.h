// SecurityStore: the "security" store role (store/role.h), the tables of two admin features
// that the core records do not hold, written once over the portable SqlSession
// (store/sql_session.h) for both engines:
//   provider_keys  a tenant's own provider API key per deployment (BYOK), sealed
//                  (governance/data_keys.h): key id, nonce and ciphertext as base64 text;
//                  the plaintext is never a column, nor its last characters.
//   admin_audit    one row per admin write (admin_api.h): when, the token (operator or a
//                  tenant's admin token id), the tenant it acted on, method, route pattern,
//                  the object's id, the answer's status.
//
// Ownership and threads: one object per engine session, used only on that session's store
// thread (GovernanceService's jobs). Errors: the engine's (kInternal; kUnavailable when the
// server is down).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "governance/data_keys.h"
#include "store/role.h"
#include "store/sql_session.h"

namespace turnpike::control {

struct SealedProviderKey {
  std::string tenant_id;
  std::string deployment;
  governance::Sealed sealed;
  int64_t updated_at = 0;  // unix seconds
};

struct AuditRow {
  int64_t id = 0;         // made by the store, increasing
  int64_t at_ms = 0;      // unix milliseconds
  std::string token_id;   // "operator" or a tenant's admin token's public id
  std::string tenant_id;  // the tenant the route acted on; "" for none
  std::string method;
  std::string route;   // the route's pattern, "/admin/v1/keys/{id}/revoke"
  std::string object;  // the object's id (the route's last path parameter), "" for none
  int status = 0;
};

struct AuditQuery {
  std::string tenant_id;  // "" every tenant
  std::string token_id;   // "" every token
  int64_t before_id = 0;  // 0: from the newest; else rows with id < before_id (the cursor)
  int64_t limit = 100;
};

class SecurityStore : public store::Role {
 public:
  SecurityStore(std::unique_ptr<store::SqlSession> session, store::RoleOps ops);

  Result<std::vector<SealedProviderKey>> LoadProviderKeys();
  Status PutProviderKey(const SealedProviderKey& key);
  Result<bool> DeleteProviderKey(std::string_view tenant, std::string_view deployment);
  // Replaces every row of `keys` (one transaction): rotation.
  Status ReplaceProviderKeys(const std::vector<SealedProviderKey>& keys);

  Status AppendAudit(const std::vector<AuditRow>& rows);
  Result<std::vector<AuditRow>> Audit(const AuditQuery& query);

 private:
  std::unique_ptr<store::SqlSession> sql_;
  store::StoreOp read_;
  store::StoreOp write_;
};

// The role's spec, for app/'s StoreRoles.
store::RoleSpec SecurityRole();

}  // namespace turnpike::control
