// The console's sign-in routes (ui_door.h): GET, POST and DELETE /ui/session.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/clock.h"
#include "doors/admin/admin_auth.h"
#include "doors/ui/ui_door.h"

namespace turnpike::doors::ui {
namespace json = boost::json;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::string_view kJson = "application/json";
// Where the session cookie is sent: the console's routes and the admin API it calls.
constexpr std::string_view kCookiePaths[] = {"/ui", "/admin"};

std::string SignedIn(const UiShared& shared, std::string_view value,
                     const admin::ConsoleIdentity& who) {
  json::array routes;
  for (const std::string& pattern : shared.admin_routes) routes.emplace_back(pattern);
  return json::serialize(
      json::object{{"signed_in", true},
                   {"tenant", who.tenant.empty() ? json::value(nullptr) : json::value(who.tenant)},
                   {"expires_at", who.expires_at},
                   {"csrf_token", shared.sessions.CsrfToken(value)},
                   {"admin_routes", std::move(routes)}});
}

std::string SignedOut() { return json::serialize(json::object{{"signed_in", false}}); }

std::string_view SessionCookie(const http::Exchange& exchange) {
  auto cookie = exchange.request().find(bhttp::field::cookie);
  if (cookie == exchange.request().end()) return {};
  return admin::CookieValue(cookie->value(), admin::kSessionCookie);
}

}  // namespace

void UiDoor::SetCookies(http::Exchange& exchange, std::string_view value, int64_t max_age) const {
  auto proto = exchange.request().find("x-forwarded-proto");
  const bool secure = shared_.tls || (proto != exchange.request().end() &&
                                      std::string_view(proto->value()) == "https");
  for (std::string_view path : kCookiePaths) {
    std::string cookie = std::string(admin::kSessionCookie) + "=" + std::string(value) +
                         "; Path=" + std::string(path) + "; Max-Age=" + std::to_string(max_age) +
                         "; HttpOnly; SameSite=Strict";
    if (secure) cookie += "; Secure";
    exchange.response_headers().Add("Set-Cookie", cookie);
  }
}

Result<UiDoor::Reply> UiDoor::Session(http::Exchange& exchange) const {
  exchange.response_headers().Add("Cache-Control", "no-store");
  const bhttp::verb method = exchange.request().method();
  if (method == bhttp::verb::post) return SignIn(exchange);
  if (method == bhttp::verb::delete_) return SignOut(exchange);
  const std::string_view value = SessionCookie(exchange);
  const int64_t now = UnixSeconds();
  if (value.empty()) return Reply{200, kJson, SignedOut()};
  Result<admin::AdminPrincipal> principal =
      admin::CheckSession(shared_.sessions, shared_.snapshots, value, now);
  if (!principal.ok()) return Reply{200, kJson, SignedOut()};
  const std::optional<admin::ConsoleIdentity> who = shared_.sessions.Verify(value, now);
  return Reply{200, kJson, SignedIn(shared_, value, *who)};
}

Result<UiDoor::Reply> UiDoor::SignIn(http::Exchange& exchange) const {
  const std::string client = exchange.client_address();
  const admin::AuthFailures::Clock::time_point at = admin::AuthFailures::Clock::now();
  if (std::optional<int64_t> wait = shared_.failures.Blocked(client, at)) {
    return Error{ErrorCode::kRateLimited,
                 "Too many failed admin authentications from this address: try again in " +
                     std::to_string(*wait) + " s.",
                 ""};
  }
  boost::system::error_code ec;
  const json::value body = json::parse(exchange.request().body(), ec);
  const json::value* token =
      !ec && body.is_object() ? body.as_object().if_contains("token") : nullptr;
  if (token == nullptr || !token->is_string()) {
    return Error{ErrorCode::kInvalidRequest, "Send {\"token\": \"<admin token>\"}.", "token"};
  }
  const int64_t now = UnixSeconds();
  Result<admin::AdminPrincipal> principal =
      admin::CheckAdminToken(shared_.admin_token, shared_.snapshots, token->as_string(), now);
  if (!principal.ok()) {
    shared_.failures.Failed(client, at);
    return principal.error();
  }
  const admin::ConsoleIdentity who{principal->tenant, principal->token_id,
                                   now + shared_.sessions.ttl_seconds()};
  const std::string value = shared_.sessions.Issue(who);
  if (value.empty()) return Error{ErrorCode::kInternal, "The session could not be made.", ""};
  SetCookies(exchange, value, shared_.sessions.ttl_seconds());
  return Reply{200, kJson, SignedIn(shared_, value, who)};
}

UiDoor::Reply UiDoor::SignOut(http::Exchange& exchange) const {
  SetCookies(exchange, "", 0);
  return Reply{200, kJson, SignedOut()};
}

}  // namespace turnpike::doors::ui
