// The call log's writer and readers over PostgreSQL (call_log.h), both driven by one table of
// columns (kColumns). One batch is one script (BatchSql).
#include "store/postgres/call_log.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "store/postgres/call_log_columns.h"
#include "store/records_sql.h"

namespace turnpike::store::postgres {
namespace {

using columns::ArrayText;
using columns::CopyText;
using columns::kColumns;
using columns::kSpendArrays;

std::string_view ScopeName(SpendScope scope) {
  return scope == SpendScope::kTenant ? "tenant" : "key";
}

std::string MakeNonce() {
  std::random_device random;
  const uint64_t bits =
      (uint64_t{random()} << 32) ^ random() ^ static_cast<uint64_t>(::getpid()) ^
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

CallRow ReadCallRow(const Rows& r, int i) {
  CallRow row;
  row.id = r.Int(i, 0);
  for (size_t c = 0; c < kColumns.size(); ++c) {
    kColumns[c].read(r, i, static_cast<int>(c) + 1, row.record);
  }
  return row;
}

// A row's route as the batch's records spell it (views into them).
struct RouteKey {
  std::string_view tenant, key, model, deployment;
  governance::MonthId month = 0;
  bool operator==(const RouteKey&) const = default;
};
struct RouteKeyHash {
  size_t operator()(const RouteKey& k) const {
    const std::hash<std::string_view> h;
    size_t out = h(k.tenant);
    for (std::string_view part : {k.key, k.model, k.deployment}) {
      out = out * 1'000'003 ^ h(part);
    }
    return out * 1'000'003 ^ k.month;
  }
};

// Reconcile's one long statement (ReconcileSpend): at the 0.4-0.6 µs per row measured over 4.1 M
// rows, about a billion rows a month (an extrapolation, not measured).
constexpr std::chrono::milliseconds kReconcileTimeout{10 * 60 * 1000};

// The spooled parameters' layout (WriteCalls); a spool of another layout is refused whole.
constexpr std::string_view kFormat = "call-log-batch-7";
// What a binary of schema 6 spooled: the key, the rows as COPY text of kColumns (NULL for
// none), the spend arrays. Replayed after rebuilding it as this version's parts.
constexpr std::string_view kFormat6 = "call-log-batch-6";

// A batch's coarse indexes (AppendBatchSql) as array texts, kept in `texts`.
columns::BatchIndexes Indexes(const BatchRows& batch, std::array<std::string, 5>& texts) {
  std::array<ArrayText, 5> a;
  for (const BatchRows::Place& t : batch.tenants) {
    a[0].Text(t.value);
    a[1].Int(t.first);
    a[2].Int(t.last);
  }
  for (const BatchRows::Place& m : batch.months) {
    a[3].Text(m.value);
    a[4].Int(m.first);
  }
  for (size_t i = 0; i < a.size(); ++i) texts[i] = a[i].Done();
  return columns::BatchIndexes{texts[0], texts[1], texts[2], texts[3], texts[4]};
}

}  // namespace

CallLog::CallLog(Connection& db, Spool& spool) : db_(db), spool_(spool), nonce_(MakeNonce()) {}

Status CallLog::WriteCalls(CallBatchParts parts, bool log_rows,
                           std::span<const SpendRow> extra_spend) {
  CopyText& routes = routes_text_;  // the batch's distinct routes, a line each
  routes.Clear();
  chunks_.Clear();
  std::unordered_map<RouteKey, uint32_t, RouteKeyHash> route_lines;
  RouteKey last_route;
  uint32_t last_line = 0;
  std::array<ArrayText, kSpendArrays> spend;
  size_t row_count = 0;
  // Spend per scope: the rows' (summed here, not by the server) and the caller's.
  std::map<std::tuple<SpendScope, std::string, std::string>, int64_t> sums;
  for (const SpendRow& s : extra_spend) sums[{s.scope, s.scope_id, s.month}] += s.spent_micros;
  // Consecutive rows mostly share their key: its two sums are found again without a lookup
  // (map nodes do not move; the views point into the batch, which outlives this call).
  int64_t* tenant_sum = nullptr;
  int64_t* key_sum = nullptr;
  std::string_view last_tenant;
  std::string_view last_key;
  governance::MonthId last_month = 0;
  for (const CallBatchPart& part : parts) {
    for (size_t i = part.begin; i < part.end; ++i) {
      const CallRecordView r = part.batch->record(i);
      if (r.cost_micros != 0) {
        if (key_sum == nullptr || r.key_id != last_key || r.tenant_id != last_tenant ||
            r.month != last_month) {
          const std::string month = governance::FormatMonth(r.month);
          tenant_sum = &sums[{SpendScope::kTenant, std::string(r.tenant_id), month}];
          key_sum = &sums[{SpendScope::kKey, std::string(r.key_id), month}];
          last_tenant = r.tenant_id;
          last_key = r.key_id;
          last_month = r.month;
        }
        *tenant_sum += r.cost_micros;
        *key_sum += r.cost_micros;
      }
      if (!log_rows) continue;
      ++row_count;
      // The row's route: the last row's mostly, else found or added (a line of `routes`).
      const RouteKey route{r.tenant_id, r.key_id, r.model, r.deployment, r.month};
      if (row_count == 1 || !(route == last_route)) {
        const auto [it, added] =
            route_lines.try_emplace(route, static_cast<uint32_t>(route_lines.size()));
        if (added) {
          for (size_t c = 0; c < columns::kRouteColumns; ++c) kColumns[c].write(routes, r);
          routes.EndRow();
        }
        last_line = it->second;
        last_route = route;
      }
      chunks_.Row(last_line, r);
    }
  }
  for (const auto& [key, micros] : sums) {
    if (micros == 0) continue;
    spend[0].Text(ScopeName(std::get<0>(key)));
    spend[1].Text(std::get<1>(key));
    spend[2].Text(std::get<2>(key));
    spend[3].Int(micros);
  }
  if (row_count == 0 && sums.empty()) return Ok{};
  const std::string key = nonce_ + "-" + std::to_string(next_batch_++);
  std::array<std::string, kSpendArrays> spend_texts;
  for (size_t i = 0; i < kSpendArrays; ++i) spend_texts[i] = spend[i].Done();
  BatchParts batch = {kFormat, key};
  if (row_count > 0) {
    batch[2] = routes.view();
    batch[3] = chunks_.Finish();
  }
  for (size_t i = 0; i < kSpendArrays; ++i) batch[4 + i] = spend_texts[i];

  Status replayed = ReplaySpool();
  Status sent = replayed.ok() ? Send(batch) : replayed;
  if (sent.ok() || sent.error().code != ErrorCode::kUnavailable) return sent;
  // The server is unreachable, or the answer was lost: keep the batch to send again, as
  // these parameters.
  Params params;
  for (const std::optional<std::string_view>& part : batch) {
    part ? params.Add(*part) : params.AddNull();
  }
  return spool_.Append(params, row_count);
}

Status CallLog::Send(const Params& params) {
  if (!params.values().empty() && params.values()[0] == kFormat6) return SendFormat6(params);
  BatchParts batch;
  if (params.size() != batch.size()) {
    return Error{ErrorCode::kInternal,
                 "a call-log batch of another format (spooled by another version)", ""};
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (params.values()[i]) batch[i] = *params.values()[i];
  }
  return Send(batch);
}

Status CallLog::SendFormat6(const Params& params) {
  auto malformed = [] {
    return Error{ErrorCode::kInternal, "a call-log batch of format 6 that does not read", ""};
  };
  const Params::Values& v = params.values();
  if (v.size() != 3 + kSpendArrays || !v[1]) return malformed();
  BatchParts batch = {kFormat, *v[1]};
  for (size_t i = 0; i < kSpendArrays; ++i) {
    if (v[3 + i]) batch[4 + i] = *v[3 + i];
  }
  std::string routes;
  if (v[2]) {
    chunks_.Clear();
    std::unordered_map<std::string_view, uint32_t> lines;
    std::string_view text = *v[2];
    std::array<std::string_view, kColumns.size()> fields;
    while (!text.empty()) {
      const size_t newline = text.find('\n');
      const std::string_view line = text.substr(0, newline);
      text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
      size_t field = 0;
      size_t route_end = 0;
      for (size_t at = 0; at <= line.size(); ++field) {
        const size_t tab = std::min(line.find('\t', at), line.size());
        if (field == fields.size()) return malformed();
        fields[field] = line.substr(at, tab - at);
        if (field + 1 == columns::kRouteColumns) route_end = tab;
        at = tab + 1;
      }
      if (field != fields.size()) return malformed();
      const std::string_view route = line.substr(0, route_end);
      const auto [it, added] = lines.try_emplace(route, static_cast<uint32_t>(lines.size()));
      if (added) {
        routes += route;
        routes += '\n';
      }
      chunks_.StartRow(it->second);
      for (size_t c = columns::kRouteColumns; c < kColumns.size(); ++c) {
        columns::FieldSink& to = chunks_.column(c);
        const std::string_view f = fields[c];
        if (f == "\\N") {
          to.Null();
        } else if (kColumns[c].type == columns::ElementType::kText) {
          to.Text(columns::UnescapeCopyText(f));
        } else {
          int64_t n = 0;
          const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), n);
          if (ec != std::errc() || end != f.data() + f.size()) return malformed();
          to.Int(n);
        }
      }
      chunks_.EndRow();
    }
    batch[2] = routes;
    batch[3] = chunks_.Finish();
  }
  return Send(batch);
}

Status CallLog::Send(const BatchParts& v) {
  if (!v[0] || *v[0] != kFormat || !v[1] || v[2].has_value() != v[3].has_value()) {
    return Error{ErrorCode::kInternal,
                 "a call-log batch of another format (spooled by another version)", ""};
  }
  for (size_t i = 4; i < v.size(); ++i) {
    if (!v[i]) return Error{ErrorCode::kInternal, "a call-log batch without its spend", ""};
  }
  const std::array<std::string_view, kSpendArrays> spend = {*v[4], *v[5], *v[6], *v[7]};
  auto literal = [this](std::string& out, std::string_view text) {
    return db_.AppendLiteral(out, text);
  };
  sql_.clear();
  Status done = Ok{};
  if (!v[2]) {
    Status built = columns::AppendBatchSql(sql_, literal, *v[1], nullptr, spend);
    if (!built.ok()) return built;
    done = db_.Script(sql_, StoreOp::kCallLogInsert);
  } else {
    Status read = batch_.Read(*v[2], *v[3]);
    if (!read.ok()) return read;
    Status resolved = routes_.Resolve(db_, batch_);
    if (!resolved.ok()) return resolved;
    std::array<std::string, 5> texts;
    const columns::BatchIndexes indexes = Indexes(batch_, texts);
    Status built = columns::AppendBatchSql(sql_, literal, *v[1], &indexes, spend);
    if (!built.ok()) return built;
    // The rows' ids come from the block the batch's first statement took.
    const std::string_view chunks = *v[3];
    auto rows = [this, chunks](const Rows& block) -> Result<std::string_view> {
      if (block.size() != 1) return Error{ErrorCode::kInternal, "no call-log block", ""};
      Status rendered = routes_.Render(batch_, block.Int(0, 0) * columns::kBlockIds, chunks, copy_);
      if (!rendered.ok()) return rendered.error();
      return std::string_view(copy_);
    };
    done = db_.CopyIn(sql_, rows, StoreOp::kCallLogInsert);
  }
  // The key is there: this batch was committed before (a replay after an ambiguous failure).
  // The constraint's name is in the message whatever its language.
  if (!done.ok() && done.error().code == ErrorCode::kConflict &&
      done.error().message.find("call_log_batches_pkey") != std::string::npos) {
    return Ok{};
  }
  return done;
}

Status CallLog::ReplaySpool() {
  if (spool_.empty()) return Ok{};
  // Not connected (within the reconnect backoff: at once): the file is not even read.
  Status ready = db_.Ensure();
  if (!ready.ok()) return ready;
  return spool_.Replay([this](const Params& params, size_t) -> Status { return Send(params); });
}

namespace {

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
// kConflict at once instead of waiting out a long sum), then one statement whose snapshot is
// taken after the lock (READ COMMITTED: per statement): it sums the month's call log (by tenant
// and by key, one pass over the chunks) and reads the spend rows in that one snapshot, and adds
// each difference to its row with an upsert. A batch that commits after the snapshot added its
// cost to both sides, so the difference stays right; the addition applies to the row as it is
// then. It reads the month's chunks whole (about 0.5 µs per row, bench/postgres-call-log-
// pages.sh), on a read lane, so its statement is bounded by kReconcileTimeout, not by the
// connection's timeout: a month of more rows than that allows fails its reconcile (nothing
// changes; the transaction rolls back when the server sees the connection gone).
Result<std::vector<SpendRow>> CallLog::ReconcileSpend(const std::string& month) {
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
  Params p;
  p.Add(month).Add(month).Add(month).Add(month).Add(month);
  Result<Rows> rows = db_.Run(kSql, p, StoreOp::kReconcile, kReconcileTimeout);
  Status ended = db_.Script(rows.ok() ? "COMMIT" : "ROLLBACK", StoreOp::kReconcile);
  if (!rows.ok()) return rows.error();
  if (!ended.ok()) return ended.error();
  std::vector<SpendRow> out;
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back({rows->Text(i, 0) == "key" ? SpendScope::kKey : SpendScope::kTenant,
                   rows->Text(i, 1), month, rows->Int(i, 2)});
  }
  return out;
}

}  // namespace turnpike::store::postgres
