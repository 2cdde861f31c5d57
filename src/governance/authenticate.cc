#include "governance/authenticate.h"

#include <algorithm>
#include <string>

namespace turnpike::governance {
namespace {

constexpr std::string_view kBadKeyMessage =
    "Incorrect API key provided. Find your API key in the Turnpike admin console.";

Error Unauthorized() { return Error{ErrorCode::kUnauthorized, std::string(kBadKeyMessage), ""}; }

Error Forbidden(std::string_view message) {
  return Error{ErrorCode::kForbidden, std::string(message), ""};
}

bool ListAdmits(const std::vector<std::string>& allowed, std::string_view model) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), model) != allowed.end();
}

Error Unauthorized(std::string_view message) {
  return Error{ErrorCode::kUnauthorized, std::string(message), ""};
}

// Everything after the secret check; shared by both overloads. A revoked or expired key is no
// longer a credential: 401, as an unknown key is (OpenAI answers a deleted key so), with its own
// message, which only the holder of the right secret gets to read. A suspended tenant's key is
// still a credential that is not allowed now: 403.
Result<Principal> Admit(const KeyEntry& entry, int64_t now_unix) {
  const Key& key = entry.key;
  if (key.status == KeyStatus::kRevoked) return Unauthorized("This API key has been revoked.");
  if (key.expires_at != kNeverExpires && now_unix >= key.expires_at) {
    return Unauthorized("This API key has expired.");
  }
  if (entry.tenant->tenant.status == TenantStatus::kSuspended) {
    return Forbidden("The organization of this API key is suspended.");
  }
  return Principal{entry.tenant, &entry, entry.tenant->plan};
}

template <typename Verify>
Result<Principal> AuthenticateWith(const GovernanceSnapshot& snapshot, std::string_view raw_key,
                                   KeyKind kind, int64_t now_unix, Verify&& verify) {
  std::optional<ParsedKey> parsed =
      ParseKey(raw_key, kind == KeyKind::kAdmin ? kAdminTokenPrefix : kKeyPrefix);
  if (!parsed) return Unauthorized();
  const KeyEntry* entry = snapshot.FindKey(parsed->public_id);
  // A key of the other kind is refused as an unknown one.
  if (entry == nullptr || entry->key.kind != kind) return Unauthorized();
  if (!verify(parsed->secret, entry->key.secret_hash)) return Unauthorized();
  return Admit(*entry, now_unix);
}

}  // namespace

Result<Principal> Authenticate(const GovernanceSnapshot& snapshot, std::string_view raw_key,
                               int64_t now_unix, SecretVerifier& verifier) {
  return AuthenticateWith(snapshot, raw_key, KeyKind::kVirtual, now_unix,
                          [&](std::string_view secret, const SecretHash& hash) {
                            return verifier.Verify(secret, hash);
                          });
}

Result<Principal> Authenticate(const GovernanceSnapshot& snapshot, std::string_view raw_key,
                               int64_t now_unix) {
  return AuthenticateWith(snapshot, raw_key, KeyKind::kVirtual, now_unix, &VerifySecret);
}

Result<Principal> AuthenticateAdminToken(const GovernanceSnapshot& snapshot,
                                         std::string_view raw_token, int64_t now_unix) {
  return AuthenticateWith(snapshot, raw_token, KeyKind::kAdmin, now_unix, &VerifySecret);
}

Status CheckModel(const Principal& principal, std::string_view model) {
  if (ListAdmits(principal.plan->allowed_models, model) &&
      ListAdmits(principal.key->key.allowed_models, model)) {
    return Ok{};
  }
  return Error{
      ErrorCode::kNotFound,
      "The model `" + std::string(model) + "` does not exist or you do not have access to it.",
      "model"};
}

}  // namespace turnpike::governance
