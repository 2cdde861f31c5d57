// The admin API: /admin/v1/..., JSON in and out, authenticated by the token in the
// TURNPIKE_ADMIN_TOKEN environment variable (`Authorization: Bearer <token>`).
//
//   GET    /admin/v1/plans                     PUT /admin/v1/plans/{id}        (create/replace)
//   GET    /admin/v1/tenants[/{id}]            POST /admin/v1/tenants          PATCH .../{id}
//   GET    /admin/v1/keys[?tenant=]            POST /admin/v1/keys             (secret shown once)
//   POST   /admin/v1/keys/{id}/revoke
//   GET    /admin/v1/prices                    PUT/DELETE /admin/v1/prices/{model}
//   GET    /admin/v1/spend?month=YYYY-MM[&tenant=][&key=]
//   GET    /admin/v1/calls?tenant=&key=&model=&status=&since=&until=&limit=&cursor=
//   POST   /admin/v1/reconcile
//
// Money is USD as JSON numbers (stored as integer micro-USD: 6 decimals). Times are unix
// seconds, call-log times unix milliseconds. Unknown fields, wrong types and out-of-range
// values are 400 with `error.field` naming the field: {"error": {"type", "message", "field"}}.
// 401 without the token; 403 when TURNPIKE_ADMIN_TOKEN is unset (the API is off); 404 unknown
// id or path; 405 wrong method; 409 an id that exists already.
//
// Reads of plans, tenants and keys come from the published snapshot (no store round trip);
// writes and call-log/spend reads go to the store thread (GovernanceService) and suspend only
// the admin request's coroutine.
//
// The door: every path under /admin/ (admin/v1/... is parsed here, routes.h); its error
// dialect is the envelope above, its own 401/403/404/405 included. Accounted by the core like
// every request (route label "admin"); never in the call log (it has no principal).
//
// Ownership and threads: one AdminApi per worker (a door, core/door.h); it holds no mutable
// state; the service and the worker's core outlive it.
#pragma once

#include <string>
#include <vector>

#include "control/governance_service.h"
#include "core/door.h"
#include "core/worker_core.h"

namespace turnpike::doors::admin {

class AdminApi : public core::Door {
 public:
  // `token` empty: every request is refused with 403.
  AdminApi(control::GovernanceService& service, const std::string& token, core::WorkerCore& core)
      : service_(service), token_(token), core_(core) {}

  // The door's routes: everything under /admin/.
  static std::vector<core::RouteSpec> Routes();

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;

 private:
  control::GovernanceService& service_;
  const std::string& token_;
  core::WorkerCore& core_;
};

// {"error": {"type": ..., "message": ..., "field": ...}}
std::string AdminErrorBody(const Error& error);

}  // namespace turnpike::doors::admin
