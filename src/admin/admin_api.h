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
// Ownership and threads: one instance shared by every worker; it holds no mutable state.
#pragma once

#include <string>

#include "control/governance_service.h"
#include "http/handler.h"

namespace turnpike::admin {

class AdminApi : public http::Handler {
 public:
  // `token` empty: every request is refused with 403.
  AdminApi(control::GovernanceService& service, std::string token)
      : service_(service), token_(std::move(token)) {}

  boost::asio::awaitable<void> Handle(http::Exchange& exchange) override;
  std::string RenderError(std::string_view target, const Error& error) const override;

 private:
  control::GovernanceService& service_;
  const std::string token_;
};

// {"error": {"type": ..., "message": ..., "field": ...}}
std::string AdminErrorBody(const Error& error);

}  // namespace turnpike::admin
