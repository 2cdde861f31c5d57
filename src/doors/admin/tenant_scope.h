// The one place where an admin request's tenant is found and checked against who asks, before
// any handler runs (admin_api.cc calls both, in this order, for every admin route, its own and
// other doors').
//
// ResolveTenant reads the tenant where the route declares it (core::TenantFrom): a path
// parameter, a query parameter, a string field of a JSON object body, or the owner of the object
// a path parameter names; "" when the route names none, the request leaves it out (the handler
// then reports a missing required field itself, with its own message) or no such object exists.
// It never fails: a body that is not JSON yields "".
//
// Permit decides whether `principal` may act on that tenant. The operator (the admin token) may
// act on every route. A tenant's admin token (a principal with a tenant):
//   - a route of the operator only (None): 403;
//   - a route whose tenant is another one, or an object of another tenant or of none: 404, "No
//     <noun> <value>.", the same answer whether that tenant or object exists or not, so that
//     the answer never tells one tenant what another has;
//   - a query route without the parameter: scoped to its own tenant (the parameter is added to
//     the call), so that a list shows only its own;
//   - a body route without the field: 400 naming it (the token cannot act on every tenant).
//
// Thread safety: pure functions (an Owner reads published snapshots only).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "core/admin_route.h"

namespace turnpike::doors::admin {

// Who an admin request acts as.
struct AdminPrincipal {
  std::string tenant;    // "" = the operator (every tenant)
  std::string token_id;  // the tenant's admin token's public id; "operator" for the operator
  bool is_operator() const { return tenant.empty(); }
};

std::string ResolveTenant(const core::TenantFrom& from, const core::AdminCall& call);

// `call.tenant` is ResolveTenant's answer; a query route's call may get the principal's tenant.
Status Permit(const AdminPrincipal& principal, const core::TenantFrom& from, core::AdminCall& call);

}  // namespace turnpike::doors::admin
