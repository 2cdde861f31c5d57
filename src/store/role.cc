#include "store/role.h"

#include <string>

namespace turnpike::store {

Result<std::vector<StoreOp>> CheckRole(const RoleSpec& spec, const EngineSchema& half,
                                       std::span<const RoleSchema> registered,
                                       StatementCounts& counts) {
  const std::string name(spec.schema.name);
  auto invalid = [&name](const std::string& why) {
    return Error{ErrorCode::kInvalidRequest, "store role '" + name + "': " + why, ""};
  };
  // The name is a key in schema_migrations and is spelled into the engines' statements.
  if (name.empty() ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
    return invalid("a role's name is lower-case letters, digits and '_'");
  }
  if (name == "core") return invalid("the engines' own role");
  for (const RoleSchema& r : registered) {
    if (r.name == spec.schema.name) return invalid("registered twice");
  }
  if (half.migrations.empty()) return invalid("no migrations for this engine");
  std::vector<StoreOp> ops;
  for (std::string_view purpose : spec.schema.purposes) {
    StoreOp op{};
    if (!counts.AddPurpose(purpose, op)) return invalid("more statement purposes than counted");
    ops.push_back(op);
  }
  return ops;
}

}  // namespace turnpike::store
