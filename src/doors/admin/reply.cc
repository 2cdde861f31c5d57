#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include "doors/admin/admin_api.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
namespace {
constexpr std::string_view kPrefix = "/admin/v1/";
constexpr size_t kMaxIdLength = 64;
}  // namespace

Error Bad(std::string message, std::string field) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(field)};
}

Reply ErrorReply(const Error& error) {
  return Reply{static_cast<unsigned>(HttpStatus(error.code)), AdminErrorBody(error), {}};
}

Reply JsonReply(unsigned status, const json::value& value) {
  return Reply{status, json::serialize(value), {}};
}

Reply NotAllowed(std::string_view allowed) {
  Reply reply = ErrorReply(
      Error{ErrorCode::kMethodNotAllowed, "Use " + std::string(allowed) + " on this path.", ""});
  reply.allow = allowed;
  return reply;
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

Result<Target> ParseTarget(std::string_view target) {
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target);
  if (!url) return Bad("The request target is not a valid URL.", "");
  Target out;
  std::string path = url->path();
  if (!path.starts_with(kPrefix)) return NoSuchPath(path);
  for (auto segment : url->segments()) out.segments.emplace_back(segment);
  // Drop "admin" and "v1".
  out.segments.erase(out.segments.begin(), out.segments.begin() + 2);
  if (!out.segments.empty() && out.segments.back().empty()) out.segments.pop_back();
  for (auto param : url->params()) out.query.emplace_back(param.key, param.value);
  return out;
}

}  // namespace turnpike::doors::admin
