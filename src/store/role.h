// A store role: a feature's own tables, declared in the feature's own folder and registered
// with the engine by app/, so that a new table never edits the store's closed core (the way a
// Django app owns its migrations/ and one runner applies them all).
//
// What a feature declares (RoleSpec):
//   schema.name        the role's name: the key of its versions in schema_migrations
//                      (role, version). Unique per store; "core" is the engines' own role
//                      (governance records, call log, spend: records.h, call_log.h).
//   schema.sqlite/postgres  its migrations for each engine ([i] is version i + 1; never edit a
//                      released one, append), and the tables or views only that engine has
//                      (storage, not what the role reads: the logical-schema test skips them).
//   schema.purposes    the statement purposes it counts (turnpike_store_statements_total{op}
//                      beside StoreOp's): the engine gives each a StoreOp slot at registration.
//   sqlite/postgres    how the engine makes the role's object for one of its sessions, given
//                      that session's connection and the StoreOps of the purposes (in their
//                      order). May be empty for a role that only owns tables.
//   portable           instead of those two: the role's object over an engine-neutral
//                      SqlSession (sql_session.h), for a role whose statements both engines
//                      accept; its folder then names no engine.
//
// Versions: each role is versioned on its own, from 1. Engine::Migrate applies the core role,
// then every registered role in registration order, each step in its own transaction with its
// (role, version) row; a role whose recorded version is newer than the binary's is refused
// (kInternal). A database made before roles existed (schema_migrations(version) of the core
// schema) is upgraded in place: its versions become the core role's.
//
// Reaching a role: on the store thread, a job's session answers engine.role<T>() (engine.h):
// the object the role's factory made for that session (one per session: a pooled engine's
// sessions each have their own, over their own connection), or nullptr on an engine the role
// was not registered with.
//
// The test every role passes: tests/store/schema_parity_test.cc migrates an empty database on
// both engines and compares the role's tables and views, column by column, with types
// normalised (integer, real, text, bytes), private tables skipped.
//
// Threads: registration (AddRole on the engine) before Migrate and before the store thread
// starts; a role's object is used only by its session's thread.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/statements.h"

namespace turnpike::store {

class SqlSession;
namespace sqlite {
class Database;
}
namespace postgres {
class Connection;
}

// One engine's half of a role's schema.
struct EngineSchema {
  std::span<const std::string_view> migrations;      // [i] is version i + 1
  std::span<const std::string_view> private_tables;  // skipped by the logical-schema test
};

struct RoleSchema {
  std::string_view name;
  EngineSchema sqlite;
  EngineSchema postgres;
  std::span<const std::string_view> purposes;  // statement purposes, beyond StoreOp's
};

// A role's object for one engine session (a feature's store class derives from it).
class Role {
 public:
  virtual ~Role() = default;
};

// The StoreOps the engine gave a role's purposes, in the order of schema.purposes.
using RoleOps = std::span<const StoreOp>;

struct RoleSpec {
  RoleSchema schema;
  std::function<std::unique_ptr<Role>(sqlite::Database&, RoleOps)> sqlite;
  std::function<std::unique_ptr<Role>(postgres::Connection&, RoleOps)> postgres;
  // Or one factory for every engine: a role written once over the engine-neutral session
  // (sql_session.h), which each engine makes over its connection; the feature's folder then
  // names no engine. Used instead of (not with) the two above.
  std::function<std::unique_ptr<Role>(std::unique_ptr<SqlSession>, RoleOps)> portable;
};

// An engine's AddRole (engine.h): checks `spec` against the roles registered before it (a
// name of [a-z0-9_] not taken, "core" included; migrations for the engine, whose half is
// `half`) and gives its purposes StoreOps in `counts`. kInvalidRequest naming what is wrong.
Result<std::vector<StoreOp>> CheckRole(const RoleSpec& spec, const EngineSchema& half,
                                       std::span<const RoleSchema> registered,
                                       StatementCounts& counts);

}  // namespace turnpike::store
