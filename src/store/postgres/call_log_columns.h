// Internal to store/postgres/call_log.cc: the call log's columns as one table (what the writer
// sends for each, as one field of a COPY row, and how the reader reads it back), and the batch
// statement built from it. Adding a call-log column is one entry in kColumns plus one
// migration (migrations.cc). A spool written by a binary with other columns cannot be replayed
// by this one: the server refuses its COPY data and the rows are counted lost
// (turnpike_store_spool_lost_rows_total).
//
// Threads: constants and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "governance/budget.h"
#include "store/call_record.h"
#include "store/postgres/pg.h"

namespace turnpike::store::postgres::columns {

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

// Rows in COPY's text format, field by field: tab between fields, newline after a row, \N for
// NULL; a text field's backslash, tab, newline and carriage return escaped.
class CopyText {
 public:
  void Int(int64_t value) {
    Tab();
    text_ += std::to_string(value);
  }
  void Text(std::string_view value) {
    Tab();
    for (char c : value) {
      switch (c) {
        case '\0':
          continue;  // PostgreSQL text cannot hold NUL (a client's "\u0000")
        case '\\':
          text_ += "\\\\";
          break;
        case '\t':
          text_ += "\\t";
          break;
        case '\n':
          text_ += "\\n";
          break;
        case '\r':
          text_ += "\\r";
          break;
        default:
          text_ += c;
      }
    }
  }
  void Null() {
    Tab();
    text_ += "\\N";
  }
  void EndRow() {
    text_ += '\n';
    first_ = true;
  }
  std::string Done() { return std::move(text_); }

 private:
  void Tab() {
    if (!first_) text_ += '\t';
    first_ = false;
  }
  std::string text_;
  bool first_ = true;
};

inline int64_t MsToUs(double ms) { return static_cast<int64_t>(ms * 1000.0); }
inline double UsToMs(int64_t us) { return static_cast<double>(us) / 1000.0; }

// The call log's columns as the writer builds them (one COPY field each) and the reader reads
// them (through the call_log view): adding a column is one entry here and one migration
// (migrations.cc). The first kRouteColumns are the row's route (call_routes: who asked, for
// which model, where it went, the budget month charged), the rest are call_log_rows' own
// columns in the table's order (after id and route_id, which the writer puts in front when it
// sends the rows: call_log.cc).
struct Column {
  std::string_view name;
  void (*write)(CopyText& to, const CallRecordView& r);
  void (*read)(const Rows& rows, int row, int column, CallRecord& r);
};
constexpr size_t kRouteColumns = 5;
using R = const CallRecordView&;
using X = const Rows&;
constexpr std::array<Column, 22> kColumns = {{
    {"tenant_id", [](CopyText& a, R r) { a.Text(r.tenant_id); },
     [](X x, int i, int c, CallRecord& r) { r.tenant_id = x.Text(i, c); }},
    {"key_id", [](CopyText& a, R r) { a.Text(r.key_id); },
     [](X x, int i, int c, CallRecord& r) { r.key_id = x.Text(i, c); }},
    {"model", [](CopyText& a, R r) { a.Text(r.model); },
     [](X x, int i, int c, CallRecord& r) { r.model = x.Text(i, c); }},
    {"deployment", [](CopyText& a, R r) { a.Text(r.deployment); },
     [](X x, int i, int c, CallRecord& r) { r.deployment = x.Text(i, c); }},
    // The budget month charged, as text ("YYYY-MM"); a row read back keeps month 0 (as the
    // embedded engine's reader).
    {"month", [](CopyText& a, R r) { a.Text(governance::FormatMonth(r.month)); },
     [](X, int, int, CallRecord&) {}},
    {"time_ms", [](CopyText& a, R r) { a.Int(r.time_ms); },
     [](X x, int i, int c, CallRecord& r) { r.time_ms = x.Int(i, c); }},
    {"request_id", [](CopyText& a, R r) { a.Text(r.request_id); },
     [](X x, int i, int c, CallRecord& r) { r.request_id = x.Text(i, c); }},
    {"status", [](CopyText& a, R r) { a.Int(r.status); },
     [](X x, int i, int c, CallRecord& r) { r.status = static_cast<int>(x.Int(i, c)); }},
    {"error", [](CopyText& a, R r) { a.Text(r.error); },
     [](X x, int i, int c, CallRecord& r) { r.error = x.Text(i, c); }},
    {"prompt_tokens", [](CopyText& a, R r) { a.Int(r.prompt_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.prompt_tokens = x.Int(i, c); }},
    {"completion_tokens", [](CopyText& a, R r) { a.Int(r.completion_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.completion_tokens = x.Int(i, c); }},
    {"cached_tokens", [](CopyText& a, R r) { a.Int(r.cached_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cached_tokens = x.Int(i, c); }},
    {"cache_creation_tokens", [](CopyText& a, R r) { a.Int(r.cache_creation_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cache_creation_tokens = x.Int(i, c); }},
    {"cost_micros", [](CopyText& a, R r) { a.Int(r.cost_micros); },
     [](X x, int i, int c, CallRecord& r) { r.cost_micros = x.Int(i, c); }},
    {"estimated", [](CopyText& a, R r) { a.Int(r.estimated ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.estimated = x.Int(i, c) != 0; }},
    {"unpriced", [](CopyText& a, R r) { a.Int(r.unpriced ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.unpriced = x.Int(i, c) != 0; }},
    {"ttft_us", [](CopyText& a, R r) { r.ttft_ms >= 0 ? a.Int(MsToUs(r.ttft_ms)) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) {
       r.ttft_ms = x.IsNull(i, c) ? -1 : UsToMs(x.Int(i, c));
     }},
    {"total_us", [](CopyText& a, R r) { a.Int(MsToUs(r.total_ms)); },
     [](X x, int i, int c, CallRecord& r) { r.total_ms = UsToMs(x.Int(i, c)); }},
    {"overhead_us", [](CopyText& a, R r) { r.overhead_us >= 0 ? a.Int(r.overhead_us) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) { r.overhead_us = x.IsNull(i, c) ? -1 : x.Int(i, c); }},
    {"request_body",
     [](CopyText& a, R r) { r.request_body.empty() ? a.Null() : a.Text(r.request_body); },
     [](X x, int i, int c, CallRecord& r) { r.request_body = x.Text(i, c); }},
    {"dropped_rows", [](CopyText& a, R r) { a.Int(r.dropped_rows); },
     [](X x, int i, int c, CallRecord& r) { r.dropped_rows = x.Int(i, c); }},
    {"reasoning_tokens", [](CopyText& a, R r) { a.Int(r.reasoning_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.reasoning_tokens = x.Int(i, c); }},
}};

inline std::string ColumnNames() {
  std::string names;
  for (const Column& c : kColumns) {
    if (!names.empty()) names += ", ";
    names += c.name;
  }
  return names;
}

// call_log_rows' columns as the writer sends them: the row's id and its route's id, then
// kColumns past the route.
inline const std::string& RowColumnNames() {
  static const std::string names = [] {
    std::string out = "id, route_id";
    for (size_t c = kRouteColumns; c < kColumns.size(); ++c) {
      out += ", ";
      out += kColumns[c].name;
    }
    return out;
  }();
  return names;
}

// The spend a batch adds, as four arrays (scope, scope id, month, micros), one entry per scope.
constexpr size_t kSpendArrays = 4;

// A batch's ids: its block (call_log_batches.block) times kBlockIds, plus the row's place in
// the batch. A batch has at most 1,000,000 rows (call_log.batch_rows' bound).
constexpr int64_t kBlockIds = int64_t{1} << 20;

// The coarse indexes a batch adds, as array texts (ArrayText): each tenant's first and last
// place in the batch (call_log_blocks), each month's first place (call_log_months).
struct BatchIndexes {
  std::string_view tenants, tenant_firsts, tenant_lasts;
  std::string_view months, month_firsts;
};

// One batch, one transaction (the simple protocol's implicit one, call_log.h): its key
// inserted first with a new block (a key seen before fails the batch there, before any row;
// the block is the one result before the COPY), the rows copied in (`indexes` when there are
// rows), their tenants' id ranges and months' first ids, and the spend added per scope from
// the arrays. Appended to `sql`; `literal(sql, text)` appends `text` as an SQL literal
// (Connection::AppendLiteral), so the batch's texts are escaped in place, not copied.
template <typename Literal>
Status AppendBatchSql(std::string& sql, Literal&& literal, std::string_view key,
                      const BatchIndexes* indexes,
                      const std::array<std::string_view, kSpendArrays>& spend) {
  Status ok = Ok{};
  auto lit = [&](std::string_view text) {
    if (ok.ok()) ok = literal(sql, text);
  };
  sql += "INSERT INTO call_log_batches (batch_key, block) VALUES (";
  lit(key);
  sql += ", nextval('call_log_block_seq')) RETURNING block;";
  if (indexes != nullptr) {
    auto block = [&] {
      sql += "(SELECT block * ";
      sql += std::to_string(kBlockIds);
      sql += " FROM call_log_batches WHERE batch_key = ";
      lit(key);
      sql += ")";
    };
    sql += " COPY call_log_rows (";
    sql += RowColumnNames();
    sql += ") FROM STDIN; INSERT INTO call_log_blocks (tenant_id, first_id, last_id) SELECT t, ";
    block();
    sql += " + f, ";
    block();
    sql += " + l FROM unnest(";
    lit(indexes->tenants);
    sql += "::text[], ";
    lit(indexes->tenant_firsts);
    sql += "::bigint[], ";
    lit(indexes->tenant_lasts);
    sql += "::bigint[]) AS b(t, f, l); INSERT INTO call_log_months (month, first_id) SELECT m, ";
    block();
    sql += " + f FROM unnest(";
    lit(indexes->months);
    sql += "::text[], ";
    lit(indexes->month_firsts);
    sql +=
        "::bigint[]) AS b(m, f) ON CONFLICT (month) DO UPDATE SET first_id = "
        "LEAST(call_log_months.first_id, excluded.first_id);";
  }
  sql += " INSERT INTO spend (scope, scope_id, month, spent_micros) SELECT * FROM unnest(";
  lit(spend[0]);
  sql += "::text[], ";
  lit(spend[1]);
  sql += "::text[], ";
  lit(spend[2]);
  sql += "::text[], ";
  lit(spend[3]);
  sql +=
      "::bigint[]) ON CONFLICT (scope, scope_id, month) "
      "DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros";
  return ok;
}

}  // namespace turnpike::store::postgres::columns
