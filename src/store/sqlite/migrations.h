// The embedded engine's schema: versioned migrations (migrations.cc, kMigrations), recorded in
// table schema_migrations, applied in order, each in its own transaction. A database newer
// than this binary is refused.
//
// Threads: the engine's (engine.h). Errors: kInternal with SQLite's message, or for a
// database whose schema is newer than this binary's.
#pragma once

#include "common/result.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

// The newest schema version this binary knows.
int LatestSchemaVersion();

// The version `db` holds; 0 for a new database.
int SchemaVersion(Database& db);

// Applies the migrations `db` has not seen, up to `version` (at most the latest): tests of a
// migration stop before it and write rows as the older schema had them.
Status MigrateTo(Database& db, int version);

}  // namespace turnpike::store::sqlite
