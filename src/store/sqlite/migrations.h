// The embedded engine's schema: each role's versioned migrations (store/role.h), the core
// role's here (migrations.cc, kMigrations: governance records, call log, spend), recorded in
// table schema_migrations (role, version), applied in order, each in its own transaction. A
// role whose recorded version is newer than this binary's is refused. A database made before
// roles (schema_migrations (version): the core schema's versions) is upgraded in place by
// PrepareMigrations: its versions become the core role's.
//
// Threads: the engine's (engine.h). Errors: kInternal with SQLite's message, or for a
// database whose schema is newer than this binary's.
#pragma once

#include <span>
#include <string_view>

#include "common/result.h"
#include "store/role.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

// The core role's name, and its half of the schema (migrations, private tables).
inline constexpr std::string_view kCoreRole = "core";
EngineSchema CoreSchema();

// The newest core schema version this binary knows.
int LatestSchemaVersion();

// The core role's version `db` holds; 0 for a new database.
int SchemaVersion(Database& db);
// `role`'s version; 0 for none (or a database before roles, for any role but core).
int RoleVersion(Database& db, std::string_view role);

// Creates schema_migrations, or upgrades one of a database before roles (see above).
Status PrepareMigrations(Database& db);

// Applies `role`'s migrations `db` has not seen, up to `version` (at most steps.size()).
Status MigrateRole(Database& db, std::string_view role, std::span<const std::string_view> steps,
                   int version);

// PrepareMigrations, then the core role up to `version` (at most the latest): tests of a
// migration stop before it and write rows as the older schema had them.
Status MigrateTo(Database& db, int version);

}  // namespace turnpike::store::sqlite
