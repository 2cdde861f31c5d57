#include "doors/admin/admin_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/pct_string_view.hpp>
#include <cctype>
#include <chrono>

#include "common/clock.h"
#include "doors/admin/admin_auth.h"
#include "doors/admin/routes.h"
#include "doors/admin/tenant_scope.h"
#include "http/exchange.h"

namespace turnpike::doors::admin {
namespace net = boost::asio;
namespace json = boost::json;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kOperatorTokenId = "operator";

// The token of "Bearer <token>" (scheme case-insensitive, blanks around the token trimmed); ""
// for any other header.
std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return {};
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return {};
    }
  }
  std::string_view presented = authorization.substr(kBearer.size());
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && presented.back() == ' ') presented.remove_suffix(1);
  return presented;
}

bool IsWrite(bhttp::verb method) {
  return method == bhttp::verb::post || method == bhttp::verb::put ||
         method == bhttp::verb::patch || method == bhttp::verb::delete_;
}

// The bearer token (admin_auth.h) when the request sends an Authorization header, else the
// console's session cookie when it sends one; without either, the bearer token's 401.
Result<AdminPrincipal> Authenticate(const std::string& token, const ConsoleSessions& sessions,
                                    const governance::SnapshotCell& snapshots,
                                    const http::Request& request) {
  const int64_t now = UnixSeconds();
  auto auth = request.find(bhttp::field::authorization);
  auto cookie = request.find(bhttp::field::cookie);
  if (auth == request.end() && cookie != request.end() && sessions.enabled() && !token.empty()) {
    const std::string_view session = CookieValue(cookie->value(), kSessionCookie);
    if (!session.empty()) return CheckSession(sessions, snapshots, session, now);
  }
  const std::string_view presented =
      BearerToken(auth == request.end() ? std::string_view{} : std::string_view(auth->value()));
  return CheckAdminToken(token, snapshots, presented, now);
}

// A write authenticated by the console's cookie must carry the session's CSRF token.
Status CheckCsrf(const ConsoleSessions& sessions, const http::Request& request) {
  if (!IsWrite(request.method()) || request.find(bhttp::field::authorization) != request.end()) {
    return Ok{};
  }
  auto cookie = request.find(bhttp::field::cookie);
  const std::string_view session =
      cookie == request.end() ? std::string_view{} : CookieValue(cookie->value(), kSessionCookie);
  auto presented = request.find(kCsrfHeader);
  if (presented != request.end() && sessions.CsrfMatches(session, presented->value())) return Ok{};
  return Error{ErrorCode::kForbidden,
               "A write made with the console's session cookie needs its CSRF token in the " +
                   std::string(kCsrfHeader) + " header.",
               ""};
}

// The call's parameters, percent-decoded: the query's from the target, the path's from the match.
Result<AdminCall> ReadCall(const http::Exchange& exchange, const core::RouteMatch& match) {
  const Error invalid = Bad("The request target is not a valid URL.", "");
  boost::system::result<boost::urls::url_view> url =
      boost::urls::parse_origin_form(exchange.target());
  if (!url) return invalid;
  AdminCall call;
  for (auto param : url->params()) call.query.emplace_back(param.key, param.value);
  for (size_t i = 0; match.names != nullptr && i < match.names->size(); ++i) {
    auto value = boost::urls::make_pct_string_view(match.values[i]);
    if (!value) return invalid;
    call.params.emplace_back((*match.names)[i], value->decode());
  }
  call.body = exchange.request().body();
  auto idempotency_key = exchange.request().find("Idempotency-Key");
  if (idempotency_key != exchange.request().end()) call.idempotency_key = idempotency_key->value();
  return call;
}

// The id of the object a write acted on: the answer's "id" (what was made, changed or
// revoked), else the route's last path parameter (a refused write, a provider key's deployment).
std::string ObjectOf(const AdminCall& call, const Result<AdminAnswer>& answer) {
  if (answer.ok()) {
    boost::system::error_code ec;
    const json::value body = json::parse(answer->body, ec);
    const json::value* id = !ec && body.is_object() ? body.as_object().if_contains("id") : nullptr;
    if (id != nullptr && id->is_string()) return std::string(id->as_string());
  }
  return call.params.empty() ? std::string() : call.params.back().second;
}

Error NotAllowed(std::string_view allow) {
  return Error{ErrorCode::kMethodNotAllowed, "Use " + std::string(allow) + " on this path.", ""};
}

}  // namespace

std::string AdminErrorBody(const Error& error) {
  json::object inner{{"type", ErrorCodeName(error.code)}, {"message", error.message}};
  if (!error.param.empty()) inner["field"] = error.param;
  return json::serialize(json::object{{"error", std::move(inner)}});
}

core::ErrorReply AdminApi::RenderError(int, const Error& error) const {
  return {HttpStatus(error.code), AdminErrorBody(error)};
}

net::awaitable<Result<AdminAnswer>> AdminApi::Answer(const http::Exchange& exchange,
                                                     const core::RouteMatch& match,
                                                     core::Phases& phases) const {
  const std::string client = exchange.client_address();
  const AuthFailures::Clock::time_point now = AuthFailures::Clock::now();
  if (std::optional<int64_t> wait = failures_.Blocked(client, now)) {
    co_return Error{ErrorCode::kRateLimited,
                    "Too many failed admin authentications from this address: try again in " +
                        std::to_string(*wait) + " s.",
                    ""};
  }
  Result<AdminPrincipal> principal =
      Authenticate(token_, sessions_, snapshots_, exchange.request());
  if (!principal.ok()) {
    if (!token_.empty()) failures_.Failed(client, now);  // "the API is off" is nobody's failure
    co_return principal.error();
  }
  const Status csrf = CheckCsrf(sessions_, exchange.request());
  if (!csrf.ok()) co_return csrf.error();
  Result<AdminCall> call = ReadCall(exchange, match);
  if (!call.ok()) co_return call.error();
  phases.parsed = core::Clock::now();
  const core::AdminRoute* route = resources_.Find(match.route);
  if (route == nullptr) {
    // "/admin/**": the router found a pattern without this method (allow) or none.
    if (!match.allow.empty()) co_return NotAllowed(match.allow);
    co_return NoSuchPath(exchange.target());
  }
  call->tenant = ResolveTenant(route->tenant, call.value());
  call->worker = &core_;
  const Status permitted = Permit(principal.value(), route->tenant, call.value());
  Result<AdminAnswer> answer = AdminAnswer{};
  if (!permitted.ok()) {
    answer = permitted.error();
  } else {
    phases.admitted = core::Clock::now();
    net::awaitable<Result<AdminAnswer>> handled = route->handler(call.value());
    Result<AdminAnswer> handled_answer = co_await std::move(handled);
    answer = std::move(handled_answer);
  }
  const bhttp::verb method = exchange.request().method();
  if (resources_.audit && method != bhttp::verb::get && method != bhttp::verb::head) {
    // Every write the token reached a route with, refused ones too (their status says so).
    control::AuditRow row;
    row.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    row.token_id = principal->is_operator() ? std::string(kOperatorTokenId) : principal->token_id;
    // A tenant's admin token's writes are filed under its own tenant, even one refused for
    // naming another: that other tenant's admin never learns of the attempt.
    row.tenant_id = principal->is_operator() ? call->tenant : principal->tenant;
    row.method = std::string(bhttp::to_string(method));
    row.route = route->pattern;
    row.object = ObjectOf(call.value(), answer);
    row.status = answer.ok() ? static_cast<int>(answer->status) : HttpStatus(answer.error().code);
    resources_.audit(std::move(row));
  }
  co_return answer;
}

net::awaitable<void> AdminApi::Handle(http::Exchange& exchange, core::RouteMatch match) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  net::awaitable<Result<AdminAnswer>> answering = Answer(exchange, match, ctx.phases);
  Result<AdminAnswer> answer = co_await std::move(answering);
  if (answer.ok()) {
    co_await core_.Respond(exchange, ctx, answer->status, kJson, std::move(answer->body));
  } else {
    const Error& error = answer.error();
    if (error.code == ErrorCode::kMethodNotAllowed) {
      exchange.response_headers().Add("Allow", match.allow);
    }
    if (error.code == ErrorCode::kRateLimited) {
      const std::optional<int64_t> wait =
          failures_.Blocked(exchange.client_address(), AuthFailures::Clock::now());
      exchange.response_headers().Add("Retry-After", wait.value_or(1));
    }
    // The store unreachable or past fleet.outage_deadline: retry once it is back.
    if (error.code == ErrorCode::kUnavailable) exchange.response_headers().Add("Retry-After", 1);
    core::ErrorReply reply = RenderError(match.route, error);
    co_await core_.RespondError(exchange, ctx, error.code, std::move(reply));
  }
  core_.Finish(exchange, ctx);
}

}  // namespace turnpike::doors::admin
