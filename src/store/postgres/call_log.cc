// The call log's writer and readers over PostgreSQL (call_log.h). One batch is one statement:
// its key noted, and only if the key is new, the arrays below unnested into rows and inserted,
// and their spend (plus spend carried without a row) added per scope.
#include "store/postgres/call_log.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <utility>

#include "store/records_sql.h"

namespace turnpike::store::postgres {
namespace {

// $1..$21 the rows' columns as arrays (in the order of r(...)); $22..$25 spend carried
// without a row; $26 the batch key. Nothing is written unless the batch key is new.
constexpr std::string_view kWriteBatch = R"sql(
WITH fresh AS (
  INSERT INTO call_log_batches (batch_key) VALUES ($26)
  ON CONFLICT (batch_key) DO NOTHING
  RETURNING batch_key
), batch AS (
  SELECT r.* FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[],
                         $6::text[], $7::int[], $8::text[], $9::bigint[], $10::bigint[],
                         $11::bigint[], $12::bigint[], $13::bigint[], $14::int[], $15::int[],
                         $16::bigint[], $17::bigint[], $18::bigint[], $19::text[], $20::text[],
                         $21::bigint[])
    AS r(time_ms, request_id, tenant_id, key_id, model, deployment, status, error,
         prompt_tokens, completion_tokens, cached_tokens, cache_creation_tokens, cost_micros,
         estimated, unpriced, ttft_us, total_us, overhead_us, month, request_body, dropped_rows)
  WHERE EXISTS (SELECT 1 FROM fresh)
), inserted AS (
  INSERT INTO call_log (time_ms, request_id, tenant_id, key_id, model, deployment, status,
                        error, prompt_tokens, completion_tokens, cached_tokens,
                        cache_creation_tokens, cost_micros, estimated, unpriced, ttft_us,
                        total_us, overhead_us, month, request_body, dropped_rows)
  SELECT * FROM batch
  RETURNING tenant_id, key_id, month, cost_micros
), sums AS (
  SELECT 'tenant'::text AS scope, tenant_id AS scope_id, month, cost_micros AS micros
    FROM inserted
  UNION ALL SELECT 'key', key_id, month, cost_micros FROM inserted
  UNION ALL SELECT s.* FROM unnest($22::text[], $23::text[], $24::text[], $25::bigint[]) AS s
    WHERE EXISTS (SELECT 1 FROM fresh)
), merged AS (
  SELECT scope, scope_id, month, SUM(micros)::bigint AS micros FROM sums
  GROUP BY scope, scope_id, month
)
INSERT INTO spend (scope, scope_id, month, spent_micros)
SELECT scope, scope_id, month, micros FROM merged WHERE micros <> 0
ON CONFLICT (scope, scope_id, month)
DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros
)sql";

constexpr int kRowArrays = 21;
constexpr size_t kSpendArrays = 4;

constexpr std::string_view kCallColumns =
    "SELECT id, time_ms, request_id, tenant_id, key_id, model, deployment, status, error, "
    "prompt_tokens, completion_tokens, cached_tokens, cost_micros, estimated, unpriced, "
    "ttft_us, total_us, overhead_us, month, request_body, dropped_rows, cache_creation_tokens "
    "FROM call_log WHERE true";

// A PostgreSQL array literal, element by element.
class ArrayText {
 public:
  ArrayText() { text_ = "{"; }
  void Int(int64_t value) {
    Comma();
    text_ += std::to_string(value);
  }
  void Text(std::string_view value) {
    Comma();
    text_ += '"';
    for (char c : value) {
      if (c == '\0') continue;  // PostgreSQL text cannot hold NUL (a client's "\u0000")
      if (c == '"' || c == '\\') text_ += '\\';
      text_ += c;
    }
    text_ += '"';
  }
  void Null() {
    Comma();
    text_ += "NULL";
  }
  std::string Done() {
    text_ += '}';
    return std::move(text_);
  }

 private:
  void Comma() {
    if (text_.size() > 1) text_ += ',';
  }
  std::string text_;
};

int64_t MsToUs(double ms) { return static_cast<int64_t>(ms * 1000.0); }

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
  CallRecord& c = row.record;
  c.time_ms = r.Int(i, 1);
  c.request_id = r.Text(i, 2);
  c.tenant_id = r.Text(i, 3);
  c.key_id = r.Text(i, 4);
  c.model = r.Text(i, 5);
  c.deployment = r.Text(i, 6);
  c.status = static_cast<int>(r.Int(i, 7));
  c.error = r.Text(i, 8);
  c.prompt_tokens = r.Int(i, 9);
  c.completion_tokens = r.Int(i, 10);
  c.cached_tokens = r.Int(i, 11);
  c.cost_micros = r.Int(i, 12);
  c.estimated = r.Int(i, 13) != 0;
  c.unpriced = r.Int(i, 14) != 0;
  c.ttft_ms = r.IsNull(i, 15) ? -1 : static_cast<double>(r.Int(i, 15)) / 1000.0;
  c.total_ms = static_cast<double>(r.Int(i, 16)) / 1000.0;
  c.overhead_us = r.IsNull(i, 17) ? -1 : r.Int(i, 17);
  c.request_body = r.Text(i, 19);
  c.dropped_rows = r.Int(i, 20);
  c.cache_creation_tokens = r.Int(i, 21);
  return row;
}

}  // namespace

CallLog::CallLog(Connection& db, Spool& spool) : db_(db), spool_(spool), nonce_(MakeNonce()) {}

Status CallLog::WriteCalls(CallBatchParts parts, bool log_rows,
                           std::span<const SpendRow> extra_spend) {
  std::array<ArrayText, kRowArrays> rows;
  std::array<ArrayText, kSpendArrays> spend;
  size_t row_count = 0;
  // Spend carried without a row: the caller's, and with log_store off every record's.
  std::map<std::tuple<SpendScope, std::string, std::string>, int64_t> carried;
  for (const SpendRow& s : extra_spend) carried[{s.scope, s.scope_id, s.month}] += s.spent_micros;
  for (const CallBatchPart& part : parts) {
    for (size_t i = part.begin; i < part.end; ++i) {
      const CallRecordView r = part.batch->record(i);
      if (!log_rows) {
        const std::string month = governance::FormatMonth(r.month);
        carried[{SpendScope::kTenant, std::string(r.tenant_id), month}] += r.cost_micros;
        carried[{SpendScope::kKey, std::string(r.key_id), month}] += r.cost_micros;
        continue;
      }
      ++row_count;
      rows[0].Int(r.time_ms);
      rows[1].Text(r.request_id);
      rows[2].Text(r.tenant_id);
      rows[3].Text(r.key_id);
      rows[4].Text(r.model);
      rows[5].Text(r.deployment);
      rows[6].Int(r.status);
      rows[7].Text(r.error);
      rows[8].Int(r.prompt_tokens);
      rows[9].Int(r.completion_tokens);
      rows[10].Int(r.cached_tokens);
      rows[11].Int(r.cache_creation_tokens);
      rows[12].Int(r.cost_micros);
      rows[13].Int(r.estimated ? 1 : 0);
      rows[14].Int(r.unpriced ? 1 : 0);
      r.ttft_ms >= 0 ? rows[15].Int(MsToUs(r.ttft_ms)) : rows[15].Null();
      rows[16].Int(MsToUs(r.total_ms));
      r.overhead_us >= 0 ? rows[17].Int(r.overhead_us) : rows[17].Null();
      rows[18].Text(governance::FormatMonth(r.month));
      r.request_body.empty() ? rows[19].Null() : rows[19].Text(r.request_body);
      rows[20].Int(r.dropped_rows);
    }
  }
  for (const auto& [key, micros] : carried) {
    spend[0].Text(ScopeName(std::get<0>(key)));
    spend[1].Text(std::get<1>(key));
    spend[2].Text(std::get<2>(key));
    spend[3].Int(micros);
  }
  if (row_count == 0 && carried.empty()) return Ok{};
  Params params;
  for (ArrayText& a : rows) params.Add(a.Done());
  for (ArrayText& a : spend) params.Add(a.Done());
  params.Add(nonce_ + "-" + std::to_string(next_batch_++));

  Status replayed = ReplaySpool();
  Status sent = replayed.ok() ? Send(params) : replayed;
  if (sent.ok() || sent.error().code != ErrorCode::kUnavailable) return sent;
  // The server is unreachable, or the answer was lost: keep the batch to send again.
  return spool_.Append(params, row_count);
}

Status CallLog::Send(const Params& params) {
  static const std::string kSql(kWriteBatch);
  Result<Rows> done = db_.Run(kSql, params, StoreOp::kCallLogInsert);
  if (!done.ok()) return done.error();
  return Ok{};
}

Status CallLog::ReplaySpool() {
  if (spool_.empty()) return Ok{};
  // Not connected (within the reconnect backoff: at once): the file is not even read.
  Status ready = db_.Ensure();
  if (!ready.ok()) return ready;
  return spool_.Replay([this](const Params& params, size_t) { return Send(params); });
}

Result<std::vector<CallRow>> CallLog::QueryCalls(const CallQuery& query) {
  std::string sql(kCallColumns);
  Params p;
  // Filters in a fixed order, parameters added in the same order.
  if (!query.tenant_id.empty()) {
    sql += " AND tenant_id = ?";
    p.Add(query.tenant_id);
  }
  if (!query.key_id.empty()) {
    sql += " AND key_id = ?";
    p.Add(query.key_id);
  }
  if (!query.model.empty()) {
    sql += " AND model = ?";
    p.Add(query.model);
  }
  if (query.status != 0) {
    sql += " AND status = ?";
    p.Add(query.status);
  }
  if (query.since_ms != 0) {
    sql += " AND time_ms >= ?";
    p.Add(query.since_ms);
  }
  if (query.until_ms != 0) {
    sql += " AND time_ms < ?";
    p.Add(query.until_ms);
  }
  if (query.before_id != 0) {
    sql += " AND id < ?";
    p.Add(query.before_id);
  }
  sql += " ORDER BY id DESC LIMIT ?";
  p.Add(query.limit);
  Result<Rows> rows = db_.Run(Numbered(sql), p, StoreOp::kAdminRead);
  if (!rows.ok()) return rows.error();
  std::vector<CallRow> out;
  out.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) out.push_back(ReadCallRow(*rows, i));
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
  Result<Rows> rows = db_.Run(
      "SELECT tenant_id, key_id, SUM(cost_micros) FROM call_log WHERE month = $1 "
      "GROUP BY tenant_id, key_id",
      p, StoreOp::kReconcile);
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

Status CallLog::SetSpend(std::span<const SpendRow> rows) {
  // One statement: the rows as arrays, so the overwrite is all or nothing.
  static const std::string kSql =
      "INSERT INTO spend (scope, scope_id, month, spent_micros) "
      "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) "
      "ON CONFLICT (scope, scope_id, month) DO UPDATE SET spent_micros = excluded.spent_micros";
  if (rows.empty()) return Ok{};
  std::array<ArrayText, kSpendArrays> a;
  for (const SpendRow& row : rows) {
    a[0].Text(ScopeName(row.scope));
    a[1].Text(row.scope_id);
    a[2].Text(row.month);
    a[3].Int(row.spent_micros);
  }
  Params p;
  for (ArrayText& x : a) p.Add(x.Done());
  Result<Rows> done = db_.Run(kSql, p, StoreOp::kReconcile);
  if (!done.ok()) return done.error();
  return Ok{};
}

}  // namespace turnpike::store::postgres
