// The PostgreSQL engine's schema: versioned migrations (migrations.cc, kMigrations) recorded in
// table schema_migrations. The tables and columns are the embedded engine's (sqlite/
// migrations.cc) as the admin API sees them; what differs is storage, which PostgreSQL does
// with its own indexes instead of SQLite's coarse ones (call_log is one table with a tenant and
// a month index), and two fleet additions: call_log_batches (the keys of the batches written:
// a replayed batch never writes a row twice, call_log.h) and the change feed (a trigger on every
// records table bumps records_version and NOTIFYs channel turnpike_records). Since migration 6 the
// call log has the embedded engine's layout too (routes, ids per batch, coarse indexes).
//
// Each role (store/role.h) is versioned on its own in schema_migrations (role, version): the
// core role's steps are these; a feature role's are its own. A database made before roles
// (schema_migrations (version)) is upgraded in place: its versions become the core role's.
//
// Replicas may start together: each step runs in its own transaction under an advisory lock
// and re-reads the version inside it, so a step is applied once. A role newer than this
// binary is refused.
//
// Threads: the opener's (before the store thread starts). Errors: the connection's (pg.h), or
// kInternal for a schema newer than this binary's.
#pragma once

#include <span>
#include <string_view>

#include "common/result.h"
#include "store/postgres/pg.h"
#include "store/role.h"

namespace turnpike::store::postgres {

inline constexpr std::string_view kCoreRole = "core";
// The core role's half of the schema (migrations, private tables).
EngineSchema CoreSchema();

int LatestSchemaVersion();
// The core role's version the database holds; 0 for a new one.
Result<int> SchemaVersion(Connection& db);
// `role`'s version; 0 for none.
Result<int> RoleVersion(Connection& db, std::string_view role);
// Brings the core role to version `up_to` (tests build older databases with a smaller one),
// after upgrading the bookkeeping of a database before roles.
Status Migrate(Connection& db, int up_to = LatestSchemaVersion());
// Brings `role` to version `up_to` (at most steps.size()); the bookkeeping must be upgraded
// (Migrate runs first).
Status MigrateRole(Connection& db, std::string_view role, std::span<const std::string_view> steps,
                   int up_to);

// The NOTIFY channel of the records' change feed.
inline constexpr std::string_view kChangeChannel = "turnpike_records";

}  // namespace turnpike::store::postgres
