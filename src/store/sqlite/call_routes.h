// The call log's routes: a call-log row's repeating part (who asked, the tenant and key; for
// which model; where it went, the deployment; and the budget month charged), one call_routes
// row per distinct combination, which the row refers to by id (migration 3, migrations.cc).
// Consecutive rows mostly share one route, so a row costs one integer column instead of five
// texts.
//
// CallRoutes gives the store thread a route's id: from memory, else read from call_routes,
// adding the route if it is new (those two statements are counted as StoreOp::kCallLogRoute:
// once per new route, not per request). The writer asks once per distinct route in a
// transaction (call_log_write.cc), not once per row.
// Ids handed out inside a transaction are only good if it commits: Rollback forgets every id
// (rollbacks are rare; the table is read again), so a later row never refers to a route that
// was rolled back, whose id SQLite would give the next route added. Memory is bounded: past
// kMaxRemembered routes it starts over from the table.
//
// Ownership and threads: owned by the engine's CallLog (call_log.h), used only on the store
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "governance/budget.h"
#include "store/call_record.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

struct RouteViewHash {
  size_t operator()(const RouteView& route) const;
};

class CallRoutes {
 public:
  static constexpr size_t kMaxRemembered = 65'536;

  // The id of `route`, whose budget month reads `month`; inside a transaction.
  Result<int64_t> Id(Database& db, const RouteView& route, std::string_view month);
  // The transaction the ids were given in rolled back.
  void Rollback();

 private:
  // Reads or adds `route` in call_routes.
  Result<int64_t> Find(Database& db, const RouteView& route, std::string_view month);

  std::string key_;  // the route being looked up (KeyOf), reused
  std::unordered_map<std::string, int64_t> ids_;
  std::unique_ptr<Statement> select_;
  std::unique_ptr<Statement> insert_;
};

}  // namespace turnpike::store::sqlite
