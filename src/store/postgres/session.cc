#include "store/postgres/session.h"

#include <utility>

#include "store/postgres/migrations.h"

namespace turnpike::store::postgres {

Session::Session(ConnectionOptions options, StatementCounts& counts, Connection& listen,
                 Spool& spool)
    : counts_(counts),
      db_(std::move(options), &counts),
      records_(db_, listen),
      call_log_(db_, spool) {}

Status Session::Migrate() {
  return Error{ErrorCode::kInternal, "migrations run on the engine, not on a pool session", ""};
}

int Session::SchemaVersion() {
  Result<int> version = postgres::SchemaVersion(db_);
  return version.ok() ? version.value() : 0;
}

}  // namespace turnpike::store::postgres
