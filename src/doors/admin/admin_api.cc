#include "doors/admin/admin_api.h"

#include <openssl/crypto.h>

#include <boost/json/serialize.hpp>
#include <cctype>

#include "doors/admin/routes.h"
#include "http/exchange.h"

namespace turnpike::doors::admin {
namespace net = boost::asio;
namespace json = boost::json;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::string_view kJson = "application/json";

bool TokenMatches(std::string_view authorization, const std::string& token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return false;
    }
  }
  std::string_view presented = authorization.substr(kBearer.size());
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && presented.back() == ' ') presented.remove_suffix(1);
  return presented.size() == token.size() &&
         CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0;
}

net::awaitable<Reply> Dispatch(control::GovernanceService& service, const std::string& token,
                               const http::Request& request) {
  if (token.empty()) {
    co_return ErrorReply(
        Error{ErrorCode::kForbidden,
              "The admin API is off: start turnpike with TURNPIKE_ADMIN_TOKEN set.", ""});
  }
  auto auth = request.find(bhttp::field::authorization);
  const std::string_view presented =
      auth == request.end() ? std::string_view{} : std::string_view(auth->value());
  if (!TokenMatches(presented, token)) {
    co_return ErrorReply(Error{ErrorCode::kUnauthorized,
                               "Send the admin token as 'Authorization: Bearer <token>'.", ""});
  }
  Result<Target> target = ParseTarget(request.target());
  if (!target.ok()) co_return ErrorReply(target.error());
  const Target& t = target.value();
  const bhttp::verb method = request.method();
  const std::string_view body = request.body();
  const std::string resource = t.segments.empty() ? "" : t.segments[0];
  if (resource == "plans") co_return co_await Plans(service, t, method, body);
  if (resource == "tenants") co_return co_await Tenants(service, t, method, body);
  if (resource == "keys") co_return co_await Keys(service, t, method, body);
  if (resource == "prices") co_return co_await Prices(service, t, method, body);
  if (resource == "spend") co_return co_await Spend(service, t, method);
  if (resource == "calls") co_return co_await Calls(service, t, method);
  if (resource == "reconcile") co_return co_await Reconcile(service, t, method);
  co_return ErrorReply(NoSuchPath(request.target()));
}

}  // namespace

std::string AdminErrorBody(const Error& error) {
  json::object inner{{"type", ErrorCodeName(error.code)}, {"message", error.message}};
  if (!error.param.empty()) inner["field"] = error.param;
  return json::serialize(json::object{{"error", std::move(inner)}});
}

std::vector<core::RouteSpec> AdminApi::Routes() { return {{"/admin/**", {}, "admin", 0}}; }

core::ErrorReply AdminApi::RenderError(int route, const Error& error) const {
  return {HttpStatus(error.code), AdminErrorBody(error)};
}

net::awaitable<void> AdminApi::Handle(http::Exchange& exchange, core::RouteMatch match) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  Reply reply = co_await Dispatch(service_, token_, exchange.request());
  if (!reply.allow.empty()) exchange.response_headers().Add("Allow", reply.allow);
  co_await exchange.Respond(reply.status, kJson, std::move(reply.body));
  ctx.status = static_cast<int>(exchange.response_status());
  core_.Finish(exchange, ctx);
}
}  // namespace turnpike::doors::admin
