// Engine: one storage engine's implementation of the store's roles, and the schema it keeps.
// The core speaks only roles; each engine lives in its own subfolder of store/, and only the
// composition root (app/) knows which one runs and opens it.
//
// The core role ("core"), built into every engine:
//   records()     GovernanceRecords (records.h): plans, tenants, keys, prices + change feed
//   call_log()    CallLogStore (call_log.h): the call log and the spend sink
// Feature roles (role.h), open: a feature declares its tables, both engines' migrations and
// its statement purposes in its own folder, and app/ registers it with one AddRole line
// before Migrate. A job on the store thread reaches the role's object for its own session
// with role<T>() (T: the feature's class, derived from Role), made by the role's factory for
// that session over that session's connection; nullptr if the role was not registered.
//   statements()  StatementCounts (statements.h): what the engine executed, by purpose (the
//                 roles' purposes included)
//   Tick()        periodic upkeep on the store thread (every store-thread tick): a network
//                 engine reconnects and replays what it spooled while its server was down
//   Migrate()     the schema: each role is versioned on its own (schema_migrations(role,
//                 version)); the engine brings the core role, then every registered role in
//                 registration order, to this binary's versions, each step all or nothing; it
//                 refuses a role's schema newer than the binary (kInternal). A database of the
//                 schema before roles (versions of the core schema only) upgrades in place.
//   session(i)    sessions: an engine with a pool of connections (PostgreSQL `store.pool`)
//                 offers sessions() > 1 views of itself, each an Engine over its own
//                 connection, so that several store threads run statements at once (the store
//                 thread's lanes, store_thread.h). session(0) is the engine itself: it alone
//                 writes call-log batches, migrates and ticks; the others serve records and
//                 call-log reads and admin writes (their Migrate refuses, their Tick does
//                 nothing). The embedded engine has one session.
//
// Ownership: the opener owns the engine (a unique_ptr); the roles are parts of it and live as
// long as it does.
// Threads: each session one thread at a time, sessions in parallel with each other. The opener
// may migrate and load before the store threads start; from then on only the store thread of
// a session calls it, except statements() (shared by every session), which any thread reads.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/call_log.h"
#include "store/records.h"
#include "store/role.h"
#include "store/statements.h"

namespace turnpike::store {

class Engine {
 public:
  virtual ~Engine() = default;

  // Applies the schema versions the engine has not seen yet, in order (see above).
  virtual Status Migrate() = 0;
  // The core role's schema version the engine holds; 0 before the first migration.
  virtual int SchemaVersion() = 0;
  // `role`'s version (0: none applied yet).
  virtual int RoleVersion(std::string_view role) { return role == "core" ? SchemaVersion() : 0; }

  // Registers a feature's role (see above; role.h) on the engine and every session, before
  // Migrate. kInvalidRequest for a name already registered ("core" included), a role without
  // this engine's migrations, or more purposes than the counts hold. An engine without
  // feature roles (a test's fake) refuses with kInternal.
  virtual Status AddRole(const RoleSpec& spec) {
    return Error{ErrorCode::kInternal, "this engine keeps no role " + std::string(spec.schema.name),
                 ""};
  }
  // The object `T` of a registered role for this session, or nullptr (see above).
  template <typename T>
  T* role() const {
    for (const std::unique_ptr<Role>& r : roles_) {
      if (T* found = dynamic_cast<T*>(r.get())) return found;
    }
    return nullptr;
  }

  // Periodic upkeep (see above); the embedded engine has none.
  virtual void Tick() {}
  // The engine's own series beyond statements() (a network engine's spool); any thread.
  virtual void RenderMetrics(observability::PrometheusWriter& writer) const { (void)writer; }

  virtual GovernanceRecords& records() = 0;
  virtual CallLogStore& call_log() = 0;
  virtual const StatementCounts& statements() const = 0;

  // Sessions (see above): at least 1; session(0) is *this.
  virtual size_t sessions() const { return 1; }
  virtual Engine& session(size_t i) {
    (void)i;
    return *this;
  }

 protected:
  // A role's object for this session (AddRole's).
  void AdoptRole(std::unique_ptr<Role> role) { roles_.push_back(std::move(role)); }

 private:
  std::vector<std::unique_ptr<Role>> roles_;  // this session's, in registration order
};

}  // namespace turnpike::store
