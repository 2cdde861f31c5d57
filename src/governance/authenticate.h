// Authentication of a virtual key against a snapshot, and the model allow-list.
//
// Order of checks: shape (ParseKey), public id lookup, secret (SHA-256, constant-time compare),
// then the key's status and expiry, then the tenant's status. Status is checked only after the
// secret matched, so only the key's holder learns its status (a revoked or expired key's own
// message, a suspended tenant's 403); every failure before that is the same 401 with the same
// message, so an answer never says which part was wrong. (An unknown
// id answers faster than a wrong secret; public ids are not secret, so that leaks nothing.)
//
// Errors (turnpike::Error):
//   kUnauthorized (401)  malformed key, unknown public id, wrong secret (one message for all);
//                        after the secret matched: key revoked, key expired (now >=
//                        expires_at), each with its own message
//   kForbidden (403)     tenant suspended
//   kNotFound (404)      CheckModel: the model is not allowed (OpenAI's "model_not_found":
//                        "does not exist or you do not have access to it")
// Messages never contain the secret.
//
// Ownership: a Principal's pointers live as long as the snapshot it came from.
// Thread safety: pure functions of their arguments; `verifier` is the calling worker's own.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"
#include "governance/keys.h"
#include "governance/snapshot.h"

namespace turnpike::governance {

struct Principal {
  const TenantEntry* tenant = nullptr;
  const KeyEntry* key = nullptr;
  const Plan* plan = nullptr;
};

Result<Principal> Authenticate(const GovernanceSnapshot& snapshot, std::string_view raw_key,
                               int64_t now_unix, SecretVerifier& verifier);

// The same with the one-shot SHA-256 (admin paths and tests; ~3x slower).
Result<Principal> Authenticate(const GovernanceSnapshot& snapshot, std::string_view raw_key,
                               int64_t now_unix);

// A tenant's admin token ("tpa-...", KeyKind::kAdmin) with the same checks and errors; a
// virtual key is refused as an unknown one (401), as an admin token is by Authenticate.
// One-shot SHA-256: admin requests are few.
Result<Principal> AuthenticateAdminToken(const GovernanceSnapshot& snapshot,
                                         std::string_view raw_token, int64_t now_unix);

// Ok if both the plan's and the key's allow-lists admit `model` (an empty list admits all).
Status CheckModel(const Principal& principal, std::string_view model);

}  // namespace turnpike::governance
