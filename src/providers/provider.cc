#include "providers/provider.h"

namespace turnpike::providers {

Result<std::string> Provider::IdentityBody(std::string_view, std::string_view) const {
  return Error{ErrorCode::kInternal,
               "The " + std::string(name()) + " dialect has no identity path of its own.", ""};
}

Result<boost::json::object> Provider::ParseRequestDocument(
    const boost::json::object& document) const {
  return Error{ErrorCode::kInternal,
               "The " + std::string(name()) + " dialect cannot read a parsed request.", ""};
}

}  // namespace turnpike::providers
