// The fleet engine's SqlSession (store/sql_session.h): a portable role's statements on one
// PostgreSQL connection, their `?` numbered once per session. Threads: the connection's store
// thread.
#pragma once

#include <memory>

#include "store/postgres/pg.h"
#include "store/sql_session.h"

namespace turnpike::store::postgres {

std::unique_ptr<SqlSession> MakeSqlSession(Connection& db);

}  // namespace turnpike::store::postgres
