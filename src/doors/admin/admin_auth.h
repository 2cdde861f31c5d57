// Who an admin request is: the one check of an admin token or a console session, shared by the
// admin door (admin_api.h: every /admin/ request) and the console's sign-in (doors/ui/).
//
// CheckAdminToken: the operator's token (TURNPIKE_ADMIN_TOKEN), compared in constant time, or a
// tenant's admin token ("tpa-...") checked against the published snapshot as a virtual key would
// be (401 unknown or wrong, 403 revoked or its tenant suspended). A virtual key is neither (401).
// `token` empty: 403, the admin API is off.
//
// CheckSession: a console session cookie's value (console_session.h): its MAC and expiry, and for
// a tenant's session, that its admin token is still an active admin token of that tenant and the
// tenant is not suspended (the published snapshot): 401 otherwise, so a revocation ends it.
//
// Thread safety: pure functions over published snapshots; any worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "doors/admin/console_session.h"
#include "doors/admin/tenant_scope.h"
#include "governance/snapshot_cell.h"

namespace turnpike::doors::admin {

Result<AdminPrincipal> CheckAdminToken(const std::string& token,
                                       const governance::SnapshotCell& snapshots,
                                       std::string_view presented, int64_t now);

Result<AdminPrincipal> CheckSession(const ConsoleSessions& sessions,
                                    const governance::SnapshotCell& snapshots,
                                    std::string_view cookie_value, int64_t now);

}  // namespace turnpike::doors::admin
