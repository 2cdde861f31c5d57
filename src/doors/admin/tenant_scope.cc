#include "doors/admin/tenant_scope.h"

#include <boost/json/parse.hpp>

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
              std::string_view tenant) {
  if (principal.is_operator()) return Ok{};
  if (from.where == Where::kNone) {
    return Error{ErrorCode::kForbidden, "Only the operator's admin token may use this path.", ""};
  }
  if (tenant != principal.tenant) {
    return Error{ErrorCode::kForbidden,
                 "This admin token may act only on tenant " + principal.tenant + ".", from.name};
  }
  return Ok{};
}

}  // namespace turnpike::doors::admin
