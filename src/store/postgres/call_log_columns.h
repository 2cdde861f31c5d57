// Internal to store/postgres/call_log.cc: the call log's columns as one table (what the writer
// sends for each, as one array per column, and how the reader reads it back), and the batch
// statement built from it. Adding a call-log column is one entry in kColumns plus one
// migration (migrations.cc). A spool written by a binary with other columns cannot be replayed
// by this one: the server refuses its parameter count and the rows are counted lost
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

inline int64_t MsToUs(double ms) { return static_cast<int64_t>(ms * 1000.0); }
inline double UsToMs(int64_t us) { return static_cast<double>(us) / 1000.0; }

// The call log's columns as the writer sends them (one array each) and the reader reads them:
// adding a column is one entry here and one migration (migrations.cc).
struct Column {
  std::string_view name;
  std::string_view type;  // the array's element type
  void (*write)(ArrayText& to, const CallRecordView& r);
  void (*read)(const Rows& rows, int row, int column, CallRecord& r);
};
using R = const CallRecordView&;
using X = const Rows&;
constexpr std::array<Column, 22> kColumns = {{
    {"time_ms", "bigint", [](ArrayText& a, R r) { a.Int(r.time_ms); },
     [](X x, int i, int c, CallRecord& r) { r.time_ms = x.Int(i, c); }},
    {"request_id", "text", [](ArrayText& a, R r) { a.Text(r.request_id); },
     [](X x, int i, int c, CallRecord& r) { r.request_id = x.Text(i, c); }},
    {"tenant_id", "text", [](ArrayText& a, R r) { a.Text(r.tenant_id); },
     [](X x, int i, int c, CallRecord& r) { r.tenant_id = x.Text(i, c); }},
    {"key_id", "text", [](ArrayText& a, R r) { a.Text(r.key_id); },
     [](X x, int i, int c, CallRecord& r) { r.key_id = x.Text(i, c); }},
    {"model", "text", [](ArrayText& a, R r) { a.Text(r.model); },
     [](X x, int i, int c, CallRecord& r) { r.model = x.Text(i, c); }},
    {"deployment", "text", [](ArrayText& a, R r) { a.Text(r.deployment); },
     [](X x, int i, int c, CallRecord& r) { r.deployment = x.Text(i, c); }},
    {"status", "int", [](ArrayText& a, R r) { a.Int(r.status); },
     [](X x, int i, int c, CallRecord& r) { r.status = static_cast<int>(x.Int(i, c)); }},
    {"error", "text", [](ArrayText& a, R r) { a.Text(r.error); },
     [](X x, int i, int c, CallRecord& r) { r.error = x.Text(i, c); }},
    {"prompt_tokens", "bigint", [](ArrayText& a, R r) { a.Int(r.prompt_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.prompt_tokens = x.Int(i, c); }},
    {"completion_tokens", "bigint", [](ArrayText& a, R r) { a.Int(r.completion_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.completion_tokens = x.Int(i, c); }},
    {"cached_tokens", "bigint", [](ArrayText& a, R r) { a.Int(r.cached_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cached_tokens = x.Int(i, c); }},
    {"cache_creation_tokens", "bigint", [](ArrayText& a, R r) { a.Int(r.cache_creation_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cache_creation_tokens = x.Int(i, c); }},
    {"cost_micros", "bigint", [](ArrayText& a, R r) { a.Int(r.cost_micros); },
     [](X x, int i, int c, CallRecord& r) { r.cost_micros = x.Int(i, c); }},
    {"estimated", "int", [](ArrayText& a, R r) { a.Int(r.estimated ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.estimated = x.Int(i, c) != 0; }},
    {"unpriced", "int", [](ArrayText& a, R r) { a.Int(r.unpriced ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.unpriced = x.Int(i, c) != 0; }},
    {"ttft_us", "bigint",
     [](ArrayText& a, R r) { r.ttft_ms >= 0 ? a.Int(MsToUs(r.ttft_ms)) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) {
       r.ttft_ms = x.IsNull(i, c) ? -1 : UsToMs(x.Int(i, c));
     }},
    {"total_us", "bigint", [](ArrayText& a, R r) { a.Int(MsToUs(r.total_ms)); },
     [](X x, int i, int c, CallRecord& r) { r.total_ms = UsToMs(x.Int(i, c)); }},
    {"overhead_us", "bigint",
     [](ArrayText& a, R r) { r.overhead_us >= 0 ? a.Int(r.overhead_us) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) { r.overhead_us = x.IsNull(i, c) ? -1 : x.Int(i, c); }},
    // The budget month charged, as text ("YYYY-MM"); a row read back keeps month 0 (as the
    // embedded engine's reader).
    {"month", "text", [](ArrayText& a, R r) { a.Text(governance::FormatMonth(r.month)); },
     [](X, int, int, CallRecord&) {}},
    {"request_body", "text",
     [](ArrayText& a, R r) { r.request_body.empty() ? a.Null() : a.Text(r.request_body); },
     [](X x, int i, int c, CallRecord& r) { r.request_body = x.Text(i, c); }},
    {"dropped_rows", "bigint", [](ArrayText& a, R r) { a.Int(r.dropped_rows); },
     [](X x, int i, int c, CallRecord& r) { r.dropped_rows = x.Int(i, c); }},
    {"reasoning_tokens", "bigint", [](ArrayText& a, R r) { a.Int(r.reasoning_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.reasoning_tokens = x.Int(i, c); }},
}};

// The batch statement's parameters: $1 the batch key, $2..$5 spend carried without a row
// (scope, scope id, month, micros), then one array per column of kColumns.
constexpr size_t kSpendArrays = 4;
constexpr int kFirstColumnParam = 2 + static_cast<int>(kSpendArrays);

inline std::string ColumnNames() {
  std::string names;
  for (const Column& c : kColumns) {
    if (!names.empty()) names += ", ";
    names += c.name;
  }
  return names;
}

// One batch, one statement: its key noted, and only if the key is new, the arrays unnested
// into rows and inserted, and their spend (plus what was carried) added per scope.
inline std::string WriteBatchSql() {
  std::string arrays;
  for (size_t i = 0; i < kColumns.size(); ++i) {
    if (i > 0) arrays += ", ";
    arrays += "$" + std::to_string(kFirstColumnParam + static_cast<int>(i)) +
              "::" + std::string(kColumns[i].type) + "[]";
  }
  const std::string names = ColumnNames();
  return "WITH fresh AS (INSERT INTO call_log_batches (batch_key) VALUES ($1) "
         "ON CONFLICT (batch_key) DO NOTHING RETURNING batch_key), "
         "batch AS (SELECT r.* FROM unnest(" +
         arrays + ") AS r(" + names +
         ") WHERE EXISTS (SELECT 1 FROM fresh)), "
         "inserted AS (INSERT INTO call_log (" +
         names +
         ") SELECT * FROM batch RETURNING tenant_id, key_id, month, cost_micros), "
         "sums AS (SELECT 'tenant'::text AS scope, tenant_id AS scope_id, month, "
         "cost_micros AS micros FROM inserted "
         "UNION ALL SELECT 'key', key_id, month, cost_micros FROM inserted "
         "UNION ALL SELECT s.* FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) "
         "AS s WHERE EXISTS (SELECT 1 FROM fresh)), "
         "merged AS (SELECT scope, scope_id, month, SUM(micros)::bigint AS micros FROM sums "
         "GROUP BY scope, scope_id, month) "
         "INSERT INTO spend (scope, scope_id, month, spent_micros) "
         "SELECT scope, scope_id, month, micros FROM merged WHERE micros <> 0 "
         "ON CONFLICT (scope, scope_id, month) "
         "DO UPDATE SET spent_micros = spend.spent_micros + excluded.spent_micros";
}

}  // namespace turnpike::store::postgres::columns
