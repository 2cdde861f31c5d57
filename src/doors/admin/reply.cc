#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
namespace {
constexpr size_t kMaxIdLength = 64;
}  // namespace

Error Bad(std::string message, std::string field) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(field)};
}

Result<AdminAnswer> JsonAnswer(unsigned status, const json::value& value) {
  return AdminAnswer{status, json::serialize(value)};
}

Error NoSuch(std::string_view noun, std::string_view id) {
  return Error{ErrorCode::kNotFound, "No " + std::string(noun) + " " + std::string(id) + ".", ""};
}

Error NoSuchPath(std::string_view path) {
  return Error{ErrorCode::kNotFound, "No admin endpoint " + std::string(path) + ".", ""};
}

json::value Usd(int64_t micros) { return static_cast<double>(micros) / kMicros; }
json::value OptionalUsd(const std::optional<int64_t>& micros) {
  return micros ? Usd(*micros) : json::value(nullptr);
}
json::value OptionalInt(const std::optional<int64_t>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}
json::array Strings(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& s : items) out.emplace_back(s);
  return out;
}

Result<json::object> ParseObject(std::string_view body) {
  boost::system::error_code ec;
  json::value value = json::parse(body.empty() ? std::string_view("{}") : body, ec);
  if (ec) return Bad("The body is not valid JSON: " + ec.message(), "");
  if (!value.is_object()) return Bad("The body must be a JSON object.", "");
  return std::move(value.as_object());
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> IdempotencyKey(const AdminCall& call) {
  constexpr size_t kMaxIdempotencyKey = 255;
  const std::string_view key = call.idempotency_key;
  bool visible = key.size() <= kMaxIdempotencyKey;
  for (char c : key) visible &= c > ' ' && c <= '~';
  if (!visible) {
    return Bad("Idempotency-Key must be 1-255 visible ASCII characters (a UUID, say).",
               "Idempotency-Key");
  }
  return std::string(key);
}

}  // namespace turnpike::doors::admin
