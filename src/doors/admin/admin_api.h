// The admin API: /admin/v1/..., JSON in and out, authenticated by the operator's token (the
// TURNPIKE_ADMIN_TOKEN environment variable) or a tenant's admin token ("tpa-...", made by the
// operator), sent as `Authorization: Bearer <token>`. A tenant's admin token acts on its own
// tenant only (tenant_scope.h): its keys, spend and calls; another tenant's objects are 404,
// the operator's routes 403. A virtual key is never an admin token (401). An address with too
// many failed authentications is refused for a while (429 with Retry-After, auth_failures.h).
//
//   GET    /admin/v1/plans                     PUT /admin/v1/plans/{id}        (create/replace)
//   GET    /admin/v1/tenants[/{id}]            POST /admin/v1/tenants          PATCH .../{id}
//   GET    /admin/v1/keys[?tenant=]            POST /admin/v1/keys             (secret shown once)
//   GET    /admin/v1/keys/{id}                 POST /admin/v1/keys/{id}/revoke
//   DELETE /admin/v1/keys/{id}                 (gone from the store and from memory: from then
//                                              on an unknown key; its calls and spend stay)
//   GET    /admin/v1/tenants/{id}/admin-tokens POST .../admin-tokens (token shown once)
//   DELETE /admin/v1/tenants/{id}/admin-tokens/{token_id}                  (revokes)
//   GET    /admin/v1/prices                    PUT/DELETE /admin/v1/prices/{model}
//   GET    /admin/v1/spend?month=YYYY-MM[&tenant=][&key=]
//   GET    /admin/v1/spend/daily?from=&to=[&tenant=][&key=][&group_by=]   daily counters:
//          days YYYY-MM-DD (default the last 30), grouped by any of model (default), key, tenant
//   GET    /admin/v1/calls?tenant=&key=&model=&status=&since=&until=&limit=&cursor=
//   POST   /admin/v1/reconcile
//   GET    /admin/v1/routes                    every admin route, its methods and its tenant
//   GET    /admin/v1/tenants/{id}/provider-keys      PUT/DELETE .../provider-keys/{deployment}
//                                              (a tenant's own provider key, BYOK; never shown)
//   POST   /admin/v1/provider-keys/rotate      re-seal every provider key under the current key
//   GET    /admin/v1/audit?tenant=&token=&cursor=&limit=   the admin audit log, newest first
//
// Audit: every write (any method but GET and HEAD) that authenticated and matched a route is
// recorded once answered, refused ones too, with its status: the token's id ("operator" or the
// tenant's admin token id), the tenant (a tenant token's writes: always its own), the route's
// pattern, the object's id (the answer's "id": what was made, changed or revoked; else the
// last path parameter), the time (resources.h `audit`; written off the request path by the
// store thread, control/governance_service.h).
//
// The two creates whose answer holds a secret shown once (a key, an admin token) take an
// `Idempotency-Key` header: the new key's id is derived from it (governance::IdempotentPublicId),
// so a retry makes no second key, on any replica; one whose first attempt landed is a 409
// naming that key (the secret went to the first answer only). An Idempotency-Key is meant for
// one create: used again after its key was deleted, it makes that id again, with the id's
// spend so far this month.
//
// Money is USD as JSON numbers (stored as integer micro-USD: 6 decimals). Times are unix
// seconds, call-log times unix milliseconds. Unknown fields, wrong types and out-of-range
// values are 400 with `error.field` naming the field: {"error": {"type", "message", "field"}}.
// 401 without the token; 403 when TURNPIKE_ADMIN_TOKEN is unset (the API is off); 404 unknown
// id or path; 405 wrong method (with Allow); 409 an id that exists already. The token is
// checked first: without it every path and method under /admin/ is 401 (or 403 when off).
//
// Reads of plans, tenants and keys come from the published snapshot (no store round trip);
// writes and call-log/spend reads go to the store thread (GovernanceService) and suspend only
// the admin request's coroutine.
//
// The door: the routes of AdminResources (resources.h: these, routes.h, and those other doors
// add through core/admin_route.h) plus "/admin/**". For each request, in order: the client's
// failed authentications (429), the token (401/403), the target (400 if it is not a valid URL), 404
// or 405 for "/admin/**", the route's tenant (tenant_scope.h: resolved and permitted), the handler;
// the answer or the error goes out through WorkerCore::Respond (Server-Timing, status) and is
// accounted by Finish (route label "admin"; never in the call log: it has no principal).
//
// Ownership and threads: one AdminApi per worker (a door, core/door.h); it holds no mutable
// state; the resources, the token and the worker's core outlive it.
#pragma once

#include <string>

#include "core/admin_route.h"
#include "core/door.h"
#include "core/worker_core.h"
#include "doors/admin/auth_failures.h"
#include "doors/admin/console_session.h"
#include "doors/admin/resources.h"
#include "governance/snapshot_cell.h"

namespace turnpike::doors::admin {

class AdminApi : public core::Door {
 public:
  // `token` empty: every request is refused with 403. `snapshots`: where tenants' admin tokens
  // are found (keys of KeyKind::kAdmin).
  // `failures`: the process's count of failed authentications (auth_failures.h), shared by
  // every worker's door.
  // `sessions`: the console's session cookies (disabled: only bearer tokens are read).
  AdminApi(const AdminResources& resources, const std::string& token,
           const ConsoleSessions& sessions, const governance::SnapshotCell& snapshots,
           AuthFailures& failures, core::WorkerCore& core)
      : resources_(resources),
        token_(token),
        sessions_(sessions),
        snapshots_(snapshots),
        failures_(failures),
        core_(core) {}

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;

 private:
  // The answer or the error; `phases` gets parsed (token and target read) and admitted (the
  // route's tenant permitted), the Server-Timing phases "parse" and "route".
  boost::asio::awaitable<Result<core::AdminAnswer>> Answer(const http::Exchange& exchange,
                                                           const core::RouteMatch& match,
                                                           core::Phases& phases) const;

  const AdminResources& resources_;
  const std::string& token_;
  const ConsoleSessions& sessions_;
  const governance::SnapshotCell& snapshots_;
  AuthFailures& failures_;
  core::WorkerCore& core_;
};

// {"error": {"type": ..., "message": ..., "field": ...}}
std::string AdminErrorBody(const Error& error);

}  // namespace turnpike::doors::admin
