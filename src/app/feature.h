// A feature: a door with what it brings beyond its routes (its store role, its admin
// resources), registered with the gateway as one value in one line. The product's own are
// listed in ProductFeatures (app/main_command.cc); a binary built with others passes its own
// list to Main (tests/doors/probe/ is one, a door that exists only for the tests).
//
// What app/ does with a feature, at start-up, in this order:
//   role(config)          its store role (store/role.h), registered with the engine before the
//                         migration; the store opens whenever a role or governance needs it
//   door(context)         its DoorSpec (core/door.h), added after the product's doors; its
//                         model prefixes join the hand-off table (core/handoff.h)
//   admin_routes(context) its admin resources (core/admin_route.h), beside the admin door's own
//                         (only when the admin API exists: governance on)
//   stop()                at shutdown, once the server has drained, before the store's jobs close
// Any of the three may be empty.
//
// Ownership and threads: the main thread at start-up; what a feature's functions capture and
// what they return must be safe to share between workers. The FeatureContext's references
// outlive the server.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/admin_route.h"
#include "core/door.h"
#include "governance/budget_alerts.h"
#include "governance/counters.h"
#include "model_call/route_table.h"
#include "store/role.h"
#include "store/store_thread.h"

namespace turnpike::redis {
class Client;
class Subscriber;
}  // namespace turnpike::redis
namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::app {

// What app/ has built when a feature's door and admin routes are made.
struct FeatureContext {
  const config::Config& config;
  const model_call::RouteTable& routes;
  store::StoreThread* store = nullptr;  // null when no role and no governance opened the store
  // The counters engine (governance/counters.h: in-process, or Redis leases in fleet mode) a
  // feature makes its own budget scopes from; null without governance.
  governance::Counters* counters = nullptr;
  // Fleet mode (`redis.url` with governance), else null: the fleet's Redis client (with
  // redis::AgentScripts() loaded from Sha(agent_scripts) on), its pub/sub subscriber (started;
  // stopped before the workers are destroyed), and this process's replica id.
  redis::Client* redis = nullptr;
  redis::Subscriber* subscriber = nullptr;
  size_t agent_scripts = 0;
  std::string replica_id;
  // Where a feature adds its own series to /metrics (called by the ops door's render).
  std::vector<std::function<void(observability::PrometheusWriter&)>>* metrics = nullptr;
  // With governance: the budget alerts every governance filter checks after a settle
  // (governance/budget_alerts.h); a feature sets its sink here at start-up. Else null.
  governance::BudgetAlerts* budget_alerts = nullptr;
};

struct Feature {
  std::function<std::optional<store::RoleSpec>(const config::Config&)> role;
  std::function<std::optional<core::DoorSpec>(const FeatureContext&)> door;
  std::function<std::vector<core::AdminRoute>(const FeatureContext&)> admin_routes;
  // Stops what the feature runs on threads of its own, after the server drained and before
  // the store's jobs close (may be empty).
  std::function<void()> stop;
};

using Features = std::vector<Feature>;

}  // namespace turnpike::app
