// The call log's routes over PostgreSQL, and a batch's rows as call_log_chunks takes them
// (migrations 6 and 7, migrations.cc; the routes are the embedded engine's layout,
// sqlite/call_routes.h).
//
// A batch is built (and spooled) as two parts: its distinct routes as COPY text, one line of
// kRouteColumns fields each, and its rows as chunks, each row naming its route by its line
// (ChunkWriter, call_log_columns.h). Before it is sent, BatchRows reads both once: the routes,
// each tenant's first and last place and each month's first place in the batch. CallRoutes
// gives each route its call_routes id: from memory, else one statement for all the batch's new
// routes (added where missing, read where another replica added them first;
// StoreOp::kCallLogRoute: once per new route, not per request). Route ids never roll back (a
// route is added in its own transaction, before the batch's), so ids in a spooled or failed
// batch stay good. Then Render writes the chunks as sent: COPY's binary format, each chunk's
// first id (the batch's first id plus its first row's place), row count and route ids in
// front of its arrays.
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

// One batch, read: views into its parts, which must outlive this.
struct BatchRows {
  struct Place {
    std::string_view escaped;  // as in the text
    std::string value;         // a tenant id or a month, unescaped
    int64_t first = 0;
    int64_t last = 0;
  };
  std::vector<std::string_view> routes;  // each route's kRouteColumns fields, as built
  size_t rows = 0;
  std::vector<Place> tenants;  // first and last place of each tenant's rows
  std::vector<Place> months;   // first place of each month's rows

  // Reads a batch's parts in place of what this held (its buffers are reused: a writer keeps
  // one); kInternal for parts that do not fit together (a spool of another version).
  Status Read(std::string_view routes_text, std::string_view chunks);

 private:
  std::vector<uint32_t> route_tenant_;  // per route, its tenant's place in `tenants`
  std::vector<uint32_t> route_month_;   // per route, its month's place in `months`
};

class CallRoutes {
 public:
  static constexpr size_t kMaxRemembered = 65'536;

  // Gives every route of `batch` an id (one statement when some are new), kept for Render.
  Status Resolve(Connection& db, const BatchRows& batch);
  // The batch as COPY binary data for call_log_chunks (call_log_columns.h ChunkColumnNames):
  // `chunks` (ChunkWriter's) with each chunk's first id (from `first_id`), row count and route
  // ids in front, in place of what `out` held; every route resolved. kInternal when `chunks`
  // does not hold exactly the batch's rows (a spool of another version).
  // `chunk_fields`: the fields of each chunk's tuple (columns::ChunkFields of the columns the
  // chunks hold).
  Status Render(const BatchRows& batch, int64_t first_id, std::string_view chunks, std::string& out,
                size_t chunk_fields) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> ids_;
  std::vector<int64_t> batch_ids_;  // the last resolved batch's route ids, by its route lines
};

}  // namespace turnpike::store::postgres
