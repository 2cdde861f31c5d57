// The call log's readers over PostgreSQL (call_log.h): the admin API's pages, spend (monthly
// and daily), and the reconcile job's sums, driven by the same table of columns as the writer
// (kColumns).
#include <chrono>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "store/postgres/call_log.h"
#include "store/postgres/call_log_columns.h"
#include "store/records_sql.h"

namespace turnpike::store::postgres {
namespace {

using columns::kColumns;

CallRow ReadCallRow(const Rows& r, int i) {
  CallRow row;
  row.id = r.Int(i, 0);
  for (size_t c = 0; c < kColumns.size(); ++c) {
    kColumns[c].read(r, i, static_cast<int>(c) + 1, row.record);
  }
  return row;
}

// Reconcile's one long statement (ReconcileSpend): at the 0.4-0.6 µs per row measured over 4.1 M
// rows, about a billion rows a month (an extrapolation, not measured).
constexpr std::chrono::milliseconds kReconcileTimeout{10 * 60 * 1000};

// The rows of call_log_chunks `k` (the route joined as `r`): a column per array, `ord` the
// row's place in its chunk (the call_log view's FROM, migrations.cc).
std::string ChunkRowsFrom() {
  std::string arrays = "k.route_id";
  std::string names = "route_id";
  for (size_t c = columns::kRouteColumns; c < kColumns.size(); ++c) {
    arrays += ", k." + std::string(kColumns[c].name);
    names += ", " + std::string(kColumns[c].name);
  }
  return " CROSS JOIN LATERAL unnest(" + arrays + ") WITH ORDINALITY AS u(" + names +
         ", ord) JOIN call_routes r ON r.id = u.route_id";
}

// The route and cost of each row of the month in the `?` parameter (given three times): its
// rows are at or above its first id (call_log_months), so its chunks start at most kChunkRows
// below it; only their route and cost arrays are unnested.
std::string MonthCosts() {
  return "FROM call_log_chunks k CROSS JOIN LATERAL unnest(k.route_id, k.cost_micros) WITH "
         "ORDINALITY AS u(route_id, cost_micros, ord) JOIN call_routes r ON r.id = u.route_id "
         "WHERE r.month = ? AND k.first_id > (SELECT first_id FROM call_log_months WHERE month "
         "= ?) - " +
         std::to_string(columns::kChunkRows) +
         " AND k.first_id + u.ord - 1 >= (SELECT first_id FROM call_log_months WHERE month = ?)";
}

}  // namespace

// Newest first, in rounds over id ranges taken newest first: with a tenant filter, the
// tenant's ranges (call_log_blocks: one per batch that has its rows); without, the chunks
// themselves. Each round reads the chunks that hold its ranges (a chunk's first_id is within
// kChunkRows below the range's first id) and keeps the rows inside them that pass the filters;
// rounds grow (kFirstRound, doubling to kMaxRound ranges) until the page is full or the ranges
// run out. A row is read by unnesting its chunk's arrays (about 4 ms for 4,096 rows,
// bench/postgres-call-log-pages.sh): a tenant whose rows are sparse costs a chunk per batch it
// appears in.
Result<std::vector<CallRow>> CallLog::QueryCalls(const CallQuery& query) {
  constexpr int kFirstRound = 4;
  constexpr int kMaxRound = 64;  // a round unnests at most this many chunks (~0.3 s)
  const bool by_tenant = !query.tenant_id.empty();
  const std::string ranges =
      by_tenant ? "SELECT first_id, last_id FROM call_log_blocks WHERE tenant_id = ? AND "
                  "first_id < ? ORDER BY first_id DESC LIMIT ?"
                : "SELECT first_id, first_id + n - 1 AS last_id FROM call_log_chunks WHERE "
                  "first_id < ? ORDER BY first_id DESC LIMIT ?";
  std::string sql = "SELECT k.first_id + u.ord - 1 AS id";
  for (size_t c = 0; c < kColumns.size(); ++c) {
    sql += c < columns::kRouteColumns ? ", r." : ", u.";
    sql += kColumns[c].name;
  }
  // The chunks per range, each looked up by its primary key (OFFSET 0 keeps the planner from
  // flattening the lateral subquery into a join that unnests every chunk of the table first:
  // it cannot see what an unnest costs).
  sql += " FROM (" + ranges +
         ") b CROSS JOIN LATERAL (SELECT * FROM call_log_chunks c WHERE c.first_id <= b.last_id "
         "AND c.first_id > b.first_id - " +
         std::to_string(columns::kChunkRows) + " OFFSET 0) k" + ChunkRowsFrom() +
         " WHERE k.first_id + u.ord - 1 BETWEEN b.first_id AND b.last_id";
  // Filters in a fixed order, parameters added in the same order.
  Params filters;
  if (by_tenant) {
    sql += " AND r.tenant_id = ?";
    filters.Add(query.tenant_id);
  }
  if (!query.key_id.empty()) {
    sql += " AND r.key_id = ?";
    filters.Add(query.key_id);
  }
  if (!query.model.empty()) {
    sql += " AND r.model = ?";
    filters.Add(query.model);
  }
  if (query.status != 0) {
    sql += " AND u.status = ?";
    filters.Add(query.status);
  }
  if (query.since_ms != 0) {
    sql += " AND u.time_ms >= ?";
    filters.Add(query.since_ms);
  }
  if (query.until_ms != 0) {
    sql += " AND u.time_ms < ?";
    filters.Add(query.until_ms);
  }
  if (query.before_id != 0) {
    sql += " AND k.first_id + u.ord - 1 < ?";
    filters.Add(query.before_id);
  }
  sql += " ORDER BY 1 DESC LIMIT ?";
  const std::string numbered = Numbered(sql);
  const std::string edge = Numbered("SELECT MIN(first_id), COUNT(*) FROM (" + ranges + ") b");
  std::vector<CallRow> out;
  int64_t below = query.before_id != 0 ? query.before_id : std::numeric_limits<int64_t>::max();
  for (int round = kFirstRound; out.size() < static_cast<size_t>(query.limit);
       round = std::min(round * 2, kMaxRound)) {
    Params range;
    if (by_tenant) range.Add(query.tenant_id);
    range.Add(below).Add(static_cast<int64_t>(round));
    Params p = range;
    for (const std::optional<std::string>& f : filters.values()) p.Add(*f);
    p.Add(static_cast<int64_t>(query.limit) - static_cast<int64_t>(out.size()));
    Result<Rows> rows = db_.Run(numbered, p, StoreOp::kAdminRead);
    if (!rows.ok()) return rows.error();
    for (int i = 0; i < rows->size(); ++i) out.push_back(ReadCallRow(*rows, i));
    if (out.size() >= static_cast<size_t>(query.limit)) break;
    // The next round starts below the oldest range this one read.
    Result<Rows> read = db_.Run(edge, range, StoreOp::kAdminRead);
    if (!read.ok()) return read.error();
    if (read->Int(0, 1) < round) break;
    below = read->Int(0, 0);
  }
  return out;
}

Result<std::vector<SpendRow>> CallLog::LoadSpend(std::span<const std::string> months) {
  static const std::string kSql = Numbered(sql::kSelectSpend);
  std::vector<SpendRow> out;
  for (const std::string& month : months) {
    Params p;
    p.Add(month);
    Result<Rows> rows = db_.Run(kSql, p, StoreOp::kSnapshotLoad);
    if (!rows.ok()) return rows.error();
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back({rows->Text(i, 0) == "key" ? SpendScope::kKey : SpendScope::kTenant,
                     rows->Text(i, 1), rows->Text(i, 2), rows->Int(i, 3)});
    }
  }
  return out;
}

Result<std::vector<DailySpendRow>> CallLog::QueryDailySpend(const DailySpendQuery& query) {
  Params p;
  p.Add(query.from_day).Add(query.to_day);
  if (!query.tenant_id.empty()) p.Add(query.tenant_id);
  if (!query.key_id.empty()) p.Add(query.key_id);
  p.Add(int64_t{query.limit});
  Result<Rows> rows = db_.Run(Numbered(DailySpendSelect(query)), p, StoreOp::kAdminRead);
  if (!rows.ok()) return rows.error();
  std::vector<DailySpendRow> out;
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back({rows->Text(i, 0), rows->Text(i, 1), rows->Text(i, 2), rows->Text(i, 3),
                   rows->Int(i, 4), rows->Int(i, 5), rows->Int(i, 6), rows->Int(i, 7)});
  }
  return out;
}

Result<std::vector<SpendRow>> CallLog::SumCallLog(const std::string& month) {
  Params p;
  p.Add(month);
  p.Add(month).Add(month);
  static const std::string kSql = Numbered("SELECT r.tenant_id, r.key_id, SUM(u.cost_micros) " +
                                           MonthCosts() + " GROUP BY r.tenant_id, r.key_id");
  Result<Rows> rows = db_.Run(kSql, p, StoreOp::kReconcile);
  if (!rows.ok()) return rows.error();
  std::map<std::string, int64_t> tenants;
  std::vector<SpendRow> out;
  for (int i = 0; i < rows->size(); ++i) {
    const int64_t sum = rows->Int(i, 2);
    tenants[rows->Text(i, 0)] += sum;
    out.push_back({SpendScope::kKey, rows->Text(i, 1), month, sum});
  }
  for (const auto& [tenant, sum] : tenants) {
    out.push_back({SpendScope::kTenant, tenant, month, sum});
  }
  return out;
}

// One transaction: an advisory lock scoped to it, so one replica reconciles at a time (and it
// works through PgBouncer's transaction pooling; a replica that finds it taken answers
// kConflict at once instead of waiting out a long sum), for every month asked (a lock per month
// let another replica in between: this one then answered kConflict with a month already
// corrected). Then per month one statement whose snapshot is
// taken after the lock (READ COMMITTED: per statement): it sums the month's call log (by tenant
// and by key, one pass over the chunks) and reads the spend rows in that one snapshot, and adds
// each difference to its row with an upsert. A batch that commits after the snapshot added its
// cost to both sides, so the difference stays right; the addition applies to the row as it is
// then. It reads the month's chunks whole (about 0.5 µs per row, bench/postgres-call-log-
// pages.sh), on a read lane, so its statement is bounded by kReconcileTimeout, not by the
// connection's timeout: a month of more rows than that allows fails its reconcile (nothing
// changes; the transaction rolls back when the server sees the connection gone).
Result<std::vector<SpendRow>> CallLog::ReconcileSpend(std::span<const std::string> months) {
  static const std::string kSql = Numbered(
      "WITH logged AS (SELECT CASE WHEN GROUPING(r.tenant_id) = 0 THEN 'tenant' ELSE 'key' "
      "END AS scope, COALESCE(r.tenant_id, r.key_id) AS scope_id, SUM(u.cost_micros) AS spent " +
      MonthCosts() +
      " GROUP BY GROUPING SETS ((r.tenant_id), (r.key_id))), "
      "persisted AS (SELECT scope, scope_id, spent_micros FROM spend WHERE month = ?), "
      "drift AS (SELECT COALESCE(l.scope, p.scope) AS scope, COALESCE(l.scope_id, p.scope_id) "
      "AS scope_id, COALESCE(l.spent, 0)::BIGINT - COALESCE(p.spent_micros, 0) AS micros "
      "FROM logged l FULL JOIN persisted p ON p.scope = l.scope AND p.scope_id = l.scope_id), "
      "added AS (INSERT INTO spend (scope, scope_id, month, spent_micros) "
      "SELECT scope, scope_id, ?, micros FROM drift WHERE micros <> 0 "
      "ON CONFLICT (scope, scope_id, month) "
      "DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros) "
      "SELECT scope, scope_id, micros FROM drift WHERE micros <> 0");
  Status begun = db_.Script("BEGIN", StoreOp::kReconcile);
  if (!begun.ok()) return begun.error();
  Result<Rows> locked =
      db_.Run("SELECT pg_try_advisory_xact_lock(7463726532)", Params{}, StoreOp::kReconcile);
  if (!locked.ok() || locked->Text(0, 0) != "t") {
    (void)db_.Script("ROLLBACK", StoreOp::kReconcile);
    if (!locked.ok()) return locked.error();
    return Error{ErrorCode::kConflict,
                 "another replica is reconciling this store now; try again when it is done", ""};
  }
  std::vector<SpendRow> out;
  Status done = Ok{};
  for (const std::string& month : months) {
    Params p;
    p.Add(month).Add(month).Add(month).Add(month).Add(month);
    Result<Rows> rows = db_.Run(kSql, p, StoreOp::kReconcile, kReconcileTimeout);
    if (!rows.ok()) {
      done = rows.error();
      break;
    }
    for (int i = 0; i < rows->size(); ++i) {
      out.push_back({rows->Text(i, 0) == "key" ? SpendScope::kKey : SpendScope::kTenant,
                     rows->Text(i, 1), month, rows->Int(i, 2)});
    }
  }
  Status ended = db_.Script(done.ok() ? "COMMIT" : "ROLLBACK", StoreOp::kReconcile);
  if (!done.ok()) return done.error();
  if (!ended.ok()) return ended.error();
  return out;
}

}  // namespace turnpike::store::postgres
