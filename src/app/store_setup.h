// The store as app/ builds it: the engine config `store.engine` names, every store role
// registered with it (the core role is the engines' own; feature roles are listed in
// StoreRoles, one line each: store/role.h) and migrated by one runner, and the store thread over
// it. Serve builds it whenever a role needs it (governance on, or any feature role), and the
// GovernanceService borrows both parts.
//
// Ownership: the Store owns the engine and the thread (declared in that order: the thread,
// which runs over the engine, goes first). Threads: the main thread at start-up.
#pragma once

#include <memory>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "governance/data_keys.h"
#include "store/engine.h"
#include "store/role.h"
#include "store/store_thread.h"

namespace turnpike::app {

// Every feature role with tables of its own (store/role.h), one line each, for the features
// `config` turns on.
std::vector<store::RoleSpec> StoreRoles(const config::Config& config);

// The data keys that seal tenants' provider keys (governance/data_keys.h): the file
// `security.data_key_file` names, else the environment's TURNPIKE_DATA_KEY; nullptr when
// neither is set. Errors: an unreadable file, entries that do not parse (never the key bytes).
Result<std::unique_ptr<governance::DataKeys>> LoadDataKeys(const config::Config& config);

struct Store {
  std::unique_ptr<store::Engine> engine;
  std::unique_ptr<store::StoreThread> thread;  // over *engine, not started
};

// Opens the engine (PostgreSQL waited for with `wait_for_deps`; else an unreachable server is
// an error), registers `roles`, migrates every role, and builds the thread (not started: its
// owner of the call log starts it). Errors: the engine's, a role's registration's.
Result<Store> OpenStore(const config::Config& config, const std::vector<store::RoleSpec>& roles,
                        bool wait_for_deps);

}  // namespace turnpike::app
