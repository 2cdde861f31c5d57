#include "doors/admin/tenant_scope.h"

#include <boost/json/parse.hpp>

#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
using Where = core::TenantFrom::Where;

std::string ResolveTenant(const core::TenantFrom& from, const core::AdminCall& call) {
  switch (from.where) {
    case Where::kNone:
      return {};
    case Where::kPath:
      return std::string(call.Param(from.name));
    case Where::kQuery:
      return std::string(call.Query(from.name));
    case Where::kOwner:
      return from.owner ? from.owner(call.Param(from.name)) : std::string();
    case Where::kBody: {
      boost::system::error_code ec;
      const json::value body = json::parse(call.body, ec);
      if (ec || !body.is_object()) return {};
      const json::value* field = body.as_object().if_contains(from.name);
      if (field == nullptr || !field->is_string()) return {};
      return std::string(field->as_string());
    }
  }
  return {};
}

Status Permit(const AdminPrincipal& principal, const core::TenantFrom& from,
              core::AdminCall& call) {
  if (principal.is_operator()) return Ok{};
  if (from.where == Where::kNone) {
    return Error{ErrorCode::kForbidden, "Only the operator's admin token may use this path.", ""};
  }
  if (from.where == Where::kQuery && call.tenant.empty()) {
    call.query.emplace_back(from.name, principal.tenant);
    call.tenant = principal.tenant;
    return Ok{};
  }
  if (from.where == Where::kBody && call.tenant.empty()) {
    return Error{ErrorCode::kInvalidRequest,
                 "A tenant's admin token must name its tenant in '" + from.name + "'.", from.name};
  }
  if (call.tenant == principal.tenant) return Ok{};
  // The value the request named: the object's id for an owner route, else the tenant.
  const std::string_view named =
      from.where == Where::kOwner ? call.Param(from.name) : std::string_view(call.tenant);
  return NoSuch(from.noun, named);
}

}  // namespace turnpike::doors::admin
