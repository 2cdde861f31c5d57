// The one place where an admin request's tenant is found and checked against who asks, before
// any handler runs (admin_api.cc calls both, in this order, for every admin route, its own and
// other doors').
//
// ResolveTenant reads the tenant where the route declares it (core::TenantFrom): a path
// parameter, a query parameter or a string field of a JSON object body; "" when the route names
// none or the request leaves it out (the handler then reports a missing required field itself,
// with its own message). It never fails: a body that is not JSON yields "".
//
// Permit decides whether `principal` may act on that tenant. The operator (the admin token) may
// act on every route. A tenant-scoped principal may use only routes that name a tenant and only
// its own (403 otherwise; a query route must name it: no "every tenant" for it). Today the admin
// token is the only credential, so every request is the operator's; the check is here so that
// tenant-scoped tokens need only a way to be presented.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "core/admin_route.h"

namespace turnpike::doors::admin {

// Who an admin request acts as.
struct AdminPrincipal {
  std::string tenant;  // "" = the operator (every tenant)
  bool is_operator() const { return tenant.empty(); }
};

std::string ResolveTenant(const core::TenantFrom& from, const core::AdminCall& call);

Status Permit(const AdminPrincipal& principal, const core::TenantFrom& from,
              std::string_view tenant);

}  // namespace turnpike::doors::admin
