#include "providers/request_fields.h"

namespace turnpike::providers::request {

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

Error UnsupportedBy(const std::string& param, std::string_view provider) {
  return Invalid(
      "'" + param + "' is not supported by this model's provider (" + std::string(provider) + ").",
      param);
}

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("Invalid type for '" + param + "': expected " + std::string(expected) + ".",
                 param);
}

bool Present(const boost::json::object& object, std::string_view key) {
  const boost::json::value* value = object.if_contains(key);
  return value != nullptr && !value->is_null();
}

std::string At(const std::string& base, size_t index) {
  return base + "[" + std::to_string(index) + "]";
}

}  // namespace turnpike::providers::request
