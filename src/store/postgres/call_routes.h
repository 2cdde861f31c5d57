// The call log's routes over PostgreSQL, and a batch's rows as call_log_rows takes them
// (migration 6, migrations.cc; the embedded engine's layout, sqlite/call_routes.h).
//
// A batch's rows are built (and spooled) as COPY text whose first kRouteColumns fields are
// the row's route, the same text for the same route (call_log_columns.h). Before it is sent,
// BatchRows reads that text once: each row's route, each tenant's first and last place and
// each month's first place in the batch. CallRoutes gives each route its call_routes id: from
// memory, else one statement for all the batch's new routes (added where missing, read where
// another replica added them first; StoreOp::kCallLogRoute: once per new route, not per
// request). Route ids never roll back (a route is added in its own transaction, before the
// batch's), so ids in a spooled or failed batch stay good. Then Render writes the rows as sent:
// each row's id (the batch's first id plus its place) and route id, then the rest of its text.
//
// Memory: past kMaxRemembered routes CallRoutes starts over from the table.
// Ownership and threads: owned by the engine's CallLog (call_log.h), used on its thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "store/postgres/pg.h"

namespace turnpike::store::postgres {

// One batch's COPY text, read: views into it, which must outlive this.
struct BatchRows {
  struct Row {
    std::string_view route;  // the first kRouteColumns fields, tab-separated, as built
    std::string_view rest;   // the other fields, without the newline
  };
  struct Place {
    std::string_view escaped;  // as in the text
    std::string value;         // a tenant id or a month, unescaped
    int64_t first = 0;
    int64_t last = 0;
  };
  std::vector<Row> rows;
  std::vector<Place> tenants;  // first and last place of each tenant's rows
  std::vector<Place> months;   // first place of each month's rows

  // Reads `text` in place of what this held (its buffers are reused: a writer keeps one);
  // kInternal for text that is not rows of kColumns (a spool of another version).
  Status Read(std::string_view text);
};

class CallRoutes {
 public:
  static constexpr size_t kMaxRemembered = 65'536;

  // Gives every route of `batch` an id (one statement when some are new).
  Status Resolve(Connection& db, const BatchRows& batch);
  // The rows as call_log_rows' COPY text (call_log_columns.h RowColumnNames), ids from
  // `first_id`, in place of what `out` held; every route resolved.
  void Render(const BatchRows& batch, int64_t first_id, std::string& out) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> ids_;
};

}  // namespace turnpike::store::postgres
