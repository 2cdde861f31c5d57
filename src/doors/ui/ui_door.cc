#include "doors/ui/ui_door.h"

#include <string_view>

#include "doors/admin/admin_api.h"
#include "doors/ui/assets.h"

namespace turnpike::doors::ui {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using Verb = core::Verb;

namespace {
enum Route : int { kShell, kPages, kAsset, kSession };

constexpr std::string_view kShellFile = "index.html";
constexpr std::string_view kVersionMark = "{{ASSETS}}";
constexpr std::string_view kAssetsPrefix = "/ui/assets/";
constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";
constexpr std::string_view kPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const Asset* FindAsset(std::string_view path) {
  for (const Asset& asset : EmbeddedAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

std::string Quoted(std::string_view etag) { return "\"" + std::string(etag) + "\""; }

// Whether the request's If-None-Match names `etag`.
bool Fresh(const http::Exchange& exchange, std::string_view etag) {
  auto presented = exchange.request().find(bhttp::field::if_none_match);
  return presented != exchange.request().end() &&
         std::string_view(presented->value()).find(Quoted(etag)) != std::string_view::npos;
}

}  // namespace

UiShared::UiShared(const std::string& token, const admin::ConsoleSessions& s,
                   const governance::SnapshotCell& cell, admin::AuthFailures& f, bool served_tls,
                   std::vector<std::string> patterns)
    : admin_token(token),
      sessions(s),
      snapshots(cell),
      failures(f),
      tls(served_tls),
      admin_routes(std::move(patterns)) {
  const Asset* index = FindAsset(kShellFile);
  if (index != nullptr) shell = std::string(index->body);
  const std::string assets = std::string(kAssetsPrefix) + std::string(AssetsVersion());
  for (size_t at = shell.find(kVersionMark); at != std::string::npos;
       at = shell.find(kVersionMark, at + assets.size())) {
    shell.replace(at, kVersionMark.size(), assets);
  }
  shell_etag = "shell-" + std::string(AssetsVersion());
}

std::vector<core::RouteSpec> UiDoor::Routes() {
  return {{"/ui", {Verb::get, Verb::head}, "ui", kShell},
          {"/ui/**", {Verb::get, Verb::head}, "ui", kPages},
          {"/ui/assets/{version}/**", {Verb::get, Verb::head}, "ui", kAsset},
          {"/ui/session", {Verb::get, Verb::post, Verb::delete_}, "ui", kSession}};
}

core::ErrorReply UiDoor::RenderError(int, const Error& error) const {
  return {HttpStatus(error.code), admin::AdminErrorBody(error)};
}

UiDoor::Reply UiDoor::Page(http::Exchange& exchange) const {
  exchange.response_headers().Add("Cache-Control", "no-cache");
  exchange.response_headers().Add("ETag", Quoted(shared_.shell_etag));
  if (Fresh(exchange, shared_.shell_etag)) return {304, "text/html; charset=utf-8", {}};
  return {200, "text/html; charset=utf-8", shared_.shell};
}

UiDoor::Reply UiDoor::File(http::Exchange& exchange, const core::RouteMatch& match) const {
  const Asset* asset = match.Param("version") == AssetsVersion() ? FindAsset(match.rest) : nullptr;
  if (asset == nullptr || asset->path == kShellFile) {
    return {404, "application/json",
            admin::AdminErrorBody(Error{ErrorCode::kNotFound, "No such console file.", ""})};
  }
  exchange.response_headers().Add("Cache-Control", kImmutable);
  exchange.response_headers().Add("ETag", Quoted(asset->hash));
  if (Fresh(exchange, asset->hash)) return {304, asset->content_type, {}};
  return {200, asset->content_type, std::string(asset->body)};
}

net::awaitable<void> UiDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  exchange.response_headers().Add("Content-Security-Policy", kPolicy);
  exchange.response_headers().Add("X-Content-Type-Options", "nosniff");
  exchange.response_headers().Add("Referrer-Policy", "same-origin");
  Result<Reply> reply = Reply{};
  if (match.route == kSession) {
    reply = Session(exchange);
  } else if (match.route == kAsset) {
    reply = File(exchange, match);
  } else {
    reply = Page(exchange);
  }
  if (reply.ok()) {
    co_await core_.Respond(exchange, ctx, reply->status, reply->content_type,
                           std::move(reply->body));
  } else {
    const Error& error = reply.error();
    if (error.code == ErrorCode::kRateLimited) {
      const std::optional<int64_t> wait =
          shared_.failures.Blocked(exchange.client_address(), admin::AuthFailures::Clock::now());
      exchange.response_headers().Add("Retry-After", wait.value_or(1));
    }
    core::ErrorReply rendered = RenderError(match.route, error);
    co_await core_.RespondError(exchange, ctx, error.code, std::move(rendered));
  }
  core_.Finish(exchange, ctx);
}

}  // namespace turnpike::doors::ui
