// The ui door: the web console at /ui, served from files compiled into the binary (assets.h).
//
//   GET  /ui, /ui/<page>...              the app shell (index.html): every page path answers
//                                        it, and the page's script renders from the path
//   GET  /ui/assets/<version>/<path>     a file of ui/ (ETag, a year's cache: the version
//                                        changes with any file); another version: 404
//   GET    /ui/session                   200 {"signed_in": false} or {"signed_in": true,
//                                        "tenant", "expires_at", "csrf_token", "admin_routes"}
//                                        (the admin API's patterns: which doors the pages
//                                        may call, also for a tenant, who may not list them)
//   POST   /ui/session {"token": "..."}  signs in with the operator's admin token or a tenant's
//                                        admin token, checked as the admin API checks it
//                                        (admin_auth.h; failures counted per address,
//                                        auth_failures.h: 429); sets the session cookie
//   DELETE /ui/session                   signs out: the cookie is cleared
//
// The session cookie (doors/admin/console_session.h) is HttpOnly, SameSite=Strict, with
// Max-Age and, when served over TLS (server.tls, or X-Forwarded-Proto: https), Secure. It is set
// twice, Path=/ui (the console's own routes) and Path=/admin (the admin API the pages call):
// a Path=/ui cookie alone would never reach /admin/v1, and a Path=/ cookie would go with every
// LLM request too. The pages call only the public admin API (/admin/v1/...) and /metrics.
//
// The door exists only when governance is on, TURNPIKE_ADMIN_TOKEN is set and `ui.enabled` is
// not false (app/serve_command.cc); otherwise /ui is the fallback's 404. The cookie's life is
// `ui.session_ttl`. Errors are in the admin
// API's envelope. Every answer carries a Content-Security-Policy that allows only this origin.
//
// Ownership and threads: one UiDoor per worker; the UiShared (built once in app/), the
// sessions, the failures and the snapshots outlive it. No mutable state.
#pragma once

#include <string>
#include <vector>

#include "core/door.h"
#include "core/worker_core.h"
#include "doors/admin/auth_failures.h"
#include "doors/admin/console_session.h"
#include "governance/snapshot_cell.h"

namespace turnpike::doors::ui {

// What every worker's door reads.
struct UiShared {
  UiShared(const std::string& admin_token, const admin::ConsoleSessions& sessions,
           const governance::SnapshotCell& snapshots, admin::AuthFailures& failures, bool tls,
           std::vector<std::string> admin_routes);

  const std::string& admin_token;
  const admin::ConsoleSessions& sessions;
  const governance::SnapshotCell& snapshots;
  admin::AuthFailures& failures;
  const bool tls;     // server.tls: cookies are Secure
  std::string shell;  // index.html with its asset paths pointing at this build's version
  std::string shell_etag;
  const std::vector<std::string> admin_routes;  // the admin API's route patterns
};

class UiDoor : public core::Door {
 public:
  UiDoor(const UiShared& shared, core::WorkerCore& core) : shared_(shared), core_(core) {}

  static std::vector<core::RouteSpec> Routes();

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;

 private:
  // The status, content type and body of one request; headers go on the exchange.
  struct Reply {
    unsigned status = 200;
    std::string_view content_type;
    std::string body;
  };
  Reply Page(http::Exchange& exchange) const;
  Reply File(http::Exchange& exchange, const core::RouteMatch& match) const;
  // session.cc: the sign-in routes.
  Result<Reply> Session(http::Exchange& exchange) const;
  Result<Reply> SignIn(http::Exchange& exchange) const;
  Reply SignOut(http::Exchange& exchange) const;
  void SetCookies(http::Exchange& exchange, std::string_view value, int64_t max_age) const;

  const UiShared& shared_;
  core::WorkerCore& core_;
};

}  // namespace turnpike::doors::ui
