#include "providers/provider.h"

namespace turnpike::providers {

Result<std::string> Provider::IdentityBody(std::string_view, std::string_view) const {
  return Error{ErrorCode::kInternal,
               "The " + std::string(name()) + " dialect has no identity path of its own.", ""};
}

}  // namespace turnpike::providers
