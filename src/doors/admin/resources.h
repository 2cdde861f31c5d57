// Every admin resource the process serves: the governance resources (GovernanceResources) and
// those other doors declare from their own folders (core/admin_route.h), collected once in app/:
//
//   auto admin = GovernanceResources(service);
//   admin->Add(doors::agent::AdminRoutes(agents));   // one line per door
//
// Routes() is what the router learns for the admin door: each route under the label "admin"
// (one label for the whole admin API, so that the metric's cardinality does not grow with its
// resources) with its index as the route id, then "/admin/**" for every other method and path
// under /admin/, which the admin door answers itself after the token check (401 before 404/405).
//
// Errors: Add throws std::invalid_argument at start-up for a pattern outside "/admin/" or a
// route without methods or handler; the router's Add throws for two routes on one method.
// Ownership and threads: built on the starting thread, then only read by every worker's door;
// shared by the door factory and outlives every door.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "control/governance_service.h"
#include "core/admin_route.h"
#include "core/router.h"

namespace turnpike::doors::admin {

class AdminResources {
 public:
  void Add(std::vector<core::AdminRoute> routes);

  std::vector<core::RouteSpec> Routes() const;

  // The route of `route` (RouteMatch::route), nullptr for "/admin/**" (no resource matched).
  const core::AdminRoute* Find(int route) const;

  const std::vector<core::AdminRoute>& routes() const { return routes_; }

  // Where the door records each admin write (admin_api.cc): set once before serving; empty
  // records nothing. Called on any worker's thread: it must only queue.
  std::function<void(control::AuditRow)> audit;

 private:
  std::vector<core::AdminRoute> routes_;
};

// The resources of the admin API's own (admin_api.h documents them) over `service`, which
// outlives the result.
std::shared_ptr<AdminResources> GovernanceResources(control::GovernanceService& service);

}  // namespace turnpike::doors::admin
