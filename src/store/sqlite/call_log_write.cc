// The call log's writer: batches of rows with the spend they add, in one transaction. The
// write is the store thread's per-request cost, so it is built to be cheap per row:
//   - rows go in multi-row INSERTs of kRowsPerInsert (one statement's fixed cost for many);
//   - a parameter is rebound only when its value differs from the one it held in the
//     statement's previous run (most columns repeat from row to row);
//   - a row's repeating names (tenant, key, model, deployment) and budget month are one
//     integer, the id of its route (call_routes.h), in table call_log_rows; the view
//     `call_log` joins them back;
//   - a transaction first maps each row to its route (compared with the previous row's,
//     which it mostly is); spend sums, tenant id ranges and route ids are then kept per
//     route, not looked up per row by name, and nothing is copied per row;
//   - the rows have no secondary index at all (each would cost every row an index entry,
//     about a fifth of the row's cost each).
// Instead two small tables index them coarsely, written once per batch or month, not per row:
//   call_log_blocks  per transaction, each tenant's id range in it: a tenant's page is read
//                    by scanning those ranges (newest first), skipping other tenants' rows;
//   call_log_months  each month's first id: reconcile scans ids from there.
// The daily counters (daily_spend.h) are summed per tenant, key, model and day in the same
// pass (looked up only when a record's route or day differs from the previous one's) and
// upserted once per distinct one, like the monthly spend rows.
#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <utility>

#include "store/daily_counts.h"
#include "store/sqlite/batch_map.h"
#include "store/sqlite/call_log.h"

namespace turnpike::store::sqlite {
namespace {

constexpr int kCallColumns = 24;
constexpr size_t kRowsPerInsert = 32;

constexpr std::string_view kInsertCallPrefix =
    "INSERT INTO call_log_rows (time_ms, request_id, route_id, status, error, prompt_tokens, "
    "completion_tokens, cached_tokens, cache_creation_tokens, cost_micros, estimated, unpriced, "
    "ttft_us, total_us, overhead_us, request_body, dropped_rows, reasoning_tokens, cache_status, "
    "agent_id, agent_version, response_id, guard_replacements, flags) VALUES ";

// "INSERT ... VALUES (?, ..., ?), ..." for `rows` rows.
std::string InsertCallsSql(size_t rows) {
  std::string sql(kInsertCallPrefix);
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (int c = 0; c < kCallColumns; ++c) sql += c == 0 ? "?" : ", ?";
    sql += ")";
  }
  return sql;
}

int64_t MsToUs(double ms) { return static_cast<int64_t>(ms * 1000.0); }

// Binds one row's columns at parameters first .. first + kCallColumns - 1, each only when it
// differs from the value that parameter held in the statement's previous run (sqlite.h,
// BindIfChanged): consecutive rows mostly share their route, status and the zero columns, so
// a row rebinds about a third of its parameters. The request id and body are bound, not
// copied: the batch `r` views must outlive the statement's Run.
void BindCall(Statement& q, int first, const CallRecordView& r, int64_t route_id) {
  const int f = first - 1;
  q.BindIfChanged(f + 1, r.time_ms)
      .BindView(f + 2, r.request_id)  // differs in every row: bound, not compared or copied
      .BindIfChanged(f + 3, route_id)
      .BindIfChanged(f + 4, r.status)
      .BindTextIfChanged(f + 5, r.error)
      .BindIfChanged(f + 6, r.prompt_tokens)
      .BindIfChanged(f + 7, r.completion_tokens)
      .BindIfChanged(f + 8, r.cached_tokens)
      .BindIfChanged(f + 9, r.cache_creation_tokens)
      .BindIfChanged(f + 10, r.cost_micros)
      .BindIfChanged(f + 11, int64_t{r.estimated})
      .BindIfChanged(f + 12, int64_t{r.unpriced});
  if (r.ttft_ms >= 0) {
    q.BindIfChanged(f + 13, MsToUs(r.ttft_ms));
  } else {
    q.BindNullIfChanged(f + 13);
  }
  q.BindIfChanged(f + 14, MsToUs(r.total_ms));
  if (r.overhead_us >= 0) {
    q.BindIfChanged(f + 15, r.overhead_us);
  } else {
    q.BindNullIfChanged(f + 15);
  }
  if (r.request_body.empty()) {
    q.BindNullIfChanged(f + 16);
  } else {
    q.BindView(f + 16, r.request_body);
  }
  q.BindIfChanged(f + 17, r.dropped_rows);
  q.BindIfChanged(f + 18, r.reasoning_tokens)
      .BindIfChanged(f + 19, static_cast<int64_t>(r.cache_status))
      .BindTextIfChanged(f + 20, r.agent_id)
      .BindIfChanged(f + 21, r.agent_version)
      .BindTextIfChanged(f + 22, r.response_id)
      .BindIfChanged(f + 23, r.guard_replacements)
      .BindIfChanged(f + 24, int64_t{r.flags});
}

// "YYYY-MM" of the months in one transaction, each formatted once; the texts stay put
// (a deque) while statements hold them bound.
class MonthTexts {
 public:
  std::string_view Text(governance::MonthId month) {
    if (!texts_.empty() && texts_.back().first == month) return texts_.back().second;
    for (const auto& [m, text] : texts_) {
      if (m == month) return text;
    }
    texts_.emplace_back(month, governance::FormatMonth(month));
    return texts_.back().second;
  }

 private:
  std::deque<std::pair<governance::MonthId, std::string>> texts_;
};

using IdMonth = std::pair<std::string_view, governance::MonthId>;
struct IdMonthHash {
  size_t operator()(const IdMonth& k) const {
    return std::hash<std::string_view>{}(k.first) ^ (size_t{k.second} * 0x9e3779b97f4a7c15ULL);
  }
};
// Spend per scope id and month.
using SpendSums = BatchMap<IdMonth, int64_t, IdMonthHash>;

// The ids a tenant's rows took in one transaction.
struct IdRange {
  int64_t first = 0;
  int64_t last = 0;
};
using TenantRanges = BatchMap<std::string_view, IdRange, std::hash<std::string_view>>;

// One route's share of a transaction: its rows' spend and ids, and its call_routes id.
struct TxRoute {
  int64_t spend_micros = 0;
  IdRange ids;           // of its rows; first 0: none inserted
  int64_t route_id = 0;  // 0: not asked yet
};

using DaySums = BatchMap<DayKey, DayCounts, DayKeyHash>;

}  // namespace

struct CallLog::TxRoutes : BatchMap<RouteView, TxRoute, RouteViewHash> {};

Status CallLog::WriteCalls(CallBatchParts parts, bool log_rows,
                           std::span<const SpendRow> extra_spend) {
  std::vector<governance::MonthId> noting;  // months this transaction notes
  Status written = InTransaction(db_, [&]() -> Status {
    TxRoutes routes;
    DaySums days;
    rows_.clear();
    for (const CallBatchPart& part : parts) {
      const CallBatch& batch = *part.batch;
      // Consecutive records mostly share the batch's route and day: looked up only on a change.
      size_t batch_route = std::numeric_limits<size_t>::max();
      size_t route = 0;
      int64_t last_day = std::numeric_limits<int64_t>::min();
      DayCounts* day_counts = nullptr;
      for (size_t i = part.begin; i < part.end; ++i) {
        const CallFacts& facts = batch.facts(i);
        const int64_t day = DayOf(facts.time_ms);
        if (batch.route_of(i) != batch_route || day != last_day) {
          if (batch.route_of(i) != batch_route) {
            batch_route = batch.route_of(i);
            route = routes.Index(batch.route(batch_route));
          }
          const RouteView& r = routes.at(route).first;
          day_counts = &days.at(days.Index({r.tenant_id, r.key_id, r.model, day})).second;
          last_day = day;
        }
        routes.at(route).second.spend_micros += facts.cost_micros;
        day_counts->Add(facts.cost_micros, facts.prompt_tokens, facts.completion_tokens,
                        facts.dropped_rows);
        if (log_rows) rows_.push_back({&batch, i, route});
      }
    }
    Status inserted = InsertCalls(routes, noting);
    if (!inserted.ok()) return inserted;
    SpendSums tenant_spend;
    SpendSums key_spend;
    for (const auto& [route, tx] : routes.items()) {
      if (tx.spend_micros <= 0) continue;
      tenant_spend[{route.tenant_id, route.month}] += tx.spend_micros;
      key_spend[{route.key_id, route.month}] += tx.spend_micros;
    }
    for (auto [scope, sums] :
         {std::pair{SpendScope::kTenant, &tenant_spend}, std::pair{SpendScope::kKey, &key_spend}}) {
      for (const auto& [id_month, micros] : sums->items()) {
        Status added =
            AddSpend(scope, id_month.first, governance::FormatMonth(id_month.second), micros);
        if (!added.ok()) return added;
      }
    }
    for (const SpendRow& row : extra_spend) {
      Status added = AddSpend(row.scope, row.scope_id, row.month, row.spent_micros);
      if (!added.ok()) return added;
    }
    for (const auto& [key, counts] : days.items()) {
      Status added = AddDailySpend(key.tenant_id, key.key_id, key.model, FormatDay(key.day),
                                   counts.cost_micros, counts.prompt_tokens,
                                   counts.completion_tokens, counts.requests);
      if (!added.ok()) return added;
    }
    return Ok{};
  });
  if (written.ok()) {
    months_noted_.insert(months_noted_.end(), noting.begin(), noting.end());
  } else {
    routes_.Rollback();
  }
  return written;
}

Status CallLog::InsertCalls(TxRoutes& routes, std::vector<governance::MonthId>& noting) {
  if (rows_.empty()) return Ok{};
  static const std::string kInsertOne = InsertCallsSql(1);
  static const std::string kInsertMany = InsertCallsSql(kRowsPerInsert);
  Result<Statement*> one = db_.Cached(insert_call_, kInsertOne, StoreOp::kCallLogInsert);
  if (!one.ok()) return one.error();
  Statement* many = nullptr;
  if (rows_.size() >= kRowsPerInsert) {
    Result<Statement*> q = db_.Cached(insert_calls_, kInsertMany, StoreOp::kCallLogInsert);
    if (!q.ok()) return q.error();
    many = q.value();
  }
  auto noted = [&](governance::MonthId m) {
    return std::find(months_noted_.begin(), months_noted_.end(), m) != months_noted_.end() ||
           std::find(noting.begin(), noting.end(), m) != noting.end();
  };
  MonthTexts months;
  std::optional<governance::MonthId> last_month;  // the previous row's month, known noted
  for (size_t i = 0; i < rows_.size();) {
    const size_t n = rows_.size() - i >= kRowsPerInsert ? kRowsPerInsert : 1;
    Statement& q = n == 1 ? *one.value() : *many;
    for (size_t j = 0; j < n; ++j) {
      const Row& row = rows_[i + j];
      auto& [route, tx] = routes.at(row.route);
      if (tx.route_id == 0) {
        Result<int64_t> id = routes_.Id(db_, route, months.Text(route.month));
        if (!id.ok()) return id.error();
        tx.route_id = id.value();
      }
      BindCall(q, static_cast<int>(j) * kCallColumns + 1, row.batch->record(row.index),
               tx.route_id);
    }
    Status ran = q.Run(Statement::Bindings::kKeep);  // every parameter is set above
    if (!ran.ok()) return ran;
    // The statement's rows took consecutive ids ending at the last insert id.
    const int64_t first_id = db_.LastInsertId() - static_cast<int64_t>(n - 1);
    for (size_t j = 0; j < n; ++j) {
      const int64_t id = first_id + static_cast<int64_t>(j);
      IdRange& range = routes.at(rows_[i + j].route).second.ids;
      if (range.first == 0) range.first = id;
      range.last = id;
      const governance::MonthId month = rows_[i + j].batch->facts(rows_[i + j].index).month;
      if (last_month != month && !noted(month)) {
        Status note = NoteMonth(months.Text(month), id);
        if (!note.ok()) return note;
        noting.push_back(month);
      }
      last_month = month;
    }
    i += n;
  }
  // Each tenant's range spans its routes' ranges.
  TenantRanges tenants;
  for (const auto& [route, tx] : routes.items()) {
    if (tx.ids.first == 0) continue;
    IdRange& range = tenants[route.tenant_id];
    if (range.first == 0 || tx.ids.first < range.first) range.first = tx.ids.first;
    range.last = std::max(range.last, tx.ids.last);
  }
  for (const auto& [tenant, range] : tenants.items()) {
    Status noted_block = NoteTenantBlock(tenant, range.first, range.last);
    if (!noted_block.ok()) return noted_block;
  }
  return Ok{};
}

Status CallLog::NoteTenantBlock(std::string_view tenant_id, int64_t first_id, int64_t last_id) {
  Result<Statement*> q = db_.Cached(insert_block_,
                                    "INSERT INTO call_log_blocks (tenant_id, first_id, last_id) "
                                    "VALUES (?, ?, ?)",
                                    StoreOp::kCallLogIndex);
  if (!q.ok()) return q.error();
  (*q)->BindView(1, tenant_id).Bind(2, first_id).Bind(3, last_id);
  return (*q)->Run();
}

Status CallLog::NoteMonth(std::string_view month, int64_t first_id) {
  // The first transaction to commit a row of `month` holds its lowest id (ids only grow), so
  // the first note wins and later ones (another process, a restart) change nothing.
  Result<Statement*> q = db_.Cached(insert_month_,
                                    "INSERT INTO call_log_months (month, first_id) VALUES (?, ?) "
                                    "ON CONFLICT (month) DO NOTHING",
                                    StoreOp::kCallLogIndex);
  if (!q.ok()) return q.error();
  (*q)->BindView(1, month).Bind(2, first_id);
  return (*q)->Run();
}

}  // namespace turnpike::store::sqlite
