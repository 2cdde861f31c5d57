// The embedded engine's SqlSession (store/sql_session.h): a portable role's statements on one
// SQLite database. Threads: the database's store thread.
#pragma once

#include <memory>

#include "store/sql_session.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

std::unique_ptr<SqlSession> MakeSqlSession(Database& db);

}  // namespace turnpike::store::sqlite
