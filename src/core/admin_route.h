// An admin resource's route: the seam through which any door adds resources to the admin API
// (/admin/v1/...) from its own folder, without the admin door knowing it.
//
// A door declares its resources as a list of AdminRoutes (pattern, methods, where the tenant is
// found, handler), e.g. doors/<x>/admin_routes.h:
//
//   std::vector<core::AdminRoute> AdminRoutes(AgentService& agents);
//
// and app/ registers them with one line beside the admin door's own (app/serve_command.cc).
// The admin door (doors/admin/) adds every route to the router and, for each request, does what
// every admin resource shares: the admin token (401 before any 404 or 405, 403 when the API is
// off), 404 and 405 with Allow for paths and methods no route takes, the percent-decoded path
// and query parameters, the route's tenant (TenantFrom, resolved and permitted in one place
// before the handler runs), the error envelope {"error": {"type", "message", "field"}}, and the
// answer through WorkerCore::Respond (Server-Timing, status, accounting; route label "admin").
//
// Errors: a handler returns an Error value (its code picks the status; `param` becomes
// `error.field`) or an answer; it never writes to the exchange. Handlers never see 405.
//
// Ownership and threads: AdminRoutes are built once at start-up in app/ and then only read; a
// handler is called on any worker's thread, concurrently, so what it captures must be safe to
// share (references to process-wide services). GCC 12: a handler is a plain lambda that returns
// a coroutine function's awaitable, passing its captures as parameters (no coroutine lambdas
// with captures).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "core/router.h"

namespace turnpike::core {

class WorkerCore;

// Where a route finds the tenant it acts on. It is the one field that tenant-scoped admin tokens
// are checked against (doors/admin/tenant_scope.h); a route of the operator only says None.
struct TenantFrom {
  // The tenant that owns the object `id` names; "" when no such object exists. Called on any
  // worker's thread: it reads published state (a snapshot), never the store.
  using Owner = std::function<std::string(std::string_view id)>;

  enum class Where : uint8_t {
    kNone,   // operator only: not about one tenant (plans, prices, reconcile, tenant creation)
    kPath,   // a path parameter ("/admin/v1/tenants/{id}": "id")
    kQuery,  // a query parameter ("?tenant=": "tenant"); absent means every tenant
    kBody,   // a string field of the JSON object body ("tenant")
    kOwner,  // the owner of the object a path parameter names ("/admin/v1/keys/{id}": the key's)
  };
  Where where = Where::kNone;
  std::string name;             // the parameter or field; empty for kNone
  std::string noun = "tenant";  // what `name` names, for a 404 ("No key abc."); kOwner: the object
  Owner owner;                  // kOwner only

  static TenantFrom None() { return {}; }
  static TenantFrom Path(std::string name) { return Named(Where::kPath, std::move(name)); }
  static TenantFrom Query(std::string name) { return Named(Where::kQuery, std::move(name)); }
  static TenantFrom Body(std::string name) { return Named(Where::kBody, std::move(name)); }
  static TenantFrom OwnerOf(std::string name, std::string noun, Owner owner) {
    TenantFrom from = Named(Where::kOwner, std::move(name));
    from.noun = std::move(noun);
    from.owner = std::move(owner);
    return from;
  }

 private:
  static TenantFrom Named(Where where, std::string name) {
    TenantFrom from;
    from.where = where;
    from.name = std::move(name);
    return from;
  }
};

// One admin request as a handler sees it. Borrowed for the handler's run.
struct AdminCall {
  using Pairs = std::vector<std::pair<std::string, std::string>>;

  Pairs params;           // the pattern's parameters, percent-decoded
  Pairs query;            // the query's parameters, percent-decoded, in order
  std::string_view body;  // the request body as sent
  std::string tenant;     // the route's tenant (TenantFrom) as resolved; "" for none or absent
  // The request's Idempotency-Key header ("" when absent). The routes that make a secret shown
  // once (keys, admin tokens) derive the new object's id from it (governance/keys.h).
  std::string_view idempotency_key;
  // The worker the call runs on: its doors (WorkerCore::door), for a route whose resource a
  // door keeps per worker (the search door's backend). Null only in tests without one.
  WorkerCore* worker = nullptr;

  // The value of path parameter / query parameter `name` ("" when absent).
  std::string_view Param(std::string_view name) const { return Find(params, name); }
  std::string_view Query(std::string_view name) const { return Find(query, name); }

 private:
  static std::string_view Find(const Pairs& pairs, std::string_view name) {
    for (const auto& [k, v] : pairs) {
      if (k == name) return v;
    }
    return {};
  }
};

// A handler's success: the status and its JSON body.
struct AdminAnswer {
  unsigned status = 200;
  std::string body;
};

using AdminHandler =
    std::function<boost::asio::awaitable<Result<AdminAnswer>>(const AdminCall& call)>;

struct AdminRoute {
  std::string pattern;  // a router pattern (router.h) under "/admin/"
  MethodSet methods;    // the methods this handler takes; not empty
  TenantFrom tenant;
  AdminHandler handler;
};

}  // namespace turnpike::core
