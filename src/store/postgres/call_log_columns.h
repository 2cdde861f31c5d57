// Internal to store/postgres/call_log.cc: the call log's columns as one table (what the writer
// sends for each, as route text or as an element of its chunk's array, and how the reader
// reads it back), the encoders of COPY's text and binary formats it uses, and the batch
// statement. Adding a call-log column is one entry in kColumns plus one migration
// (migrations.cc): a nullable array, so that the chunks of older batches (and of older spools)
// need no value for it. A spool written by a binary with other columns cannot be replayed by
// this one unless it knows that format (call_log.cc reads schema 6's and 7's): otherwise the
// batch is refused and its rows are counted lost (turnpike_store_spool_lost_rows_total).
//
// Threads: constants, pure functions, and writers owned by one thread.
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
  ArrayText() : text_(1, '{') {}
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

// Where a column's writer puts one row's value: a field of COPY text (CopyText) or an element
// of a column's array (ArrayElements).
class FieldSink {
 public:
  virtual void Int(int64_t value) = 0;
  virtual void Text(std::string_view value) = 0;
  virtual void Null() = 0;

 protected:
  ~FieldSink() = default;
};

// Rows in COPY's text format, field by field: tab between fields, newline after a row, \N for
// NULL; a text field's backslash, tab, newline and carriage return escaped.
class CopyText final : public FieldSink {
 public:
  void Int(int64_t value) override {
    Tab();
    text_ += std::to_string(value);
  }
  void Text(std::string_view value) override {
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
  void Null() override {
    Tab();
    text_ += "\\N";
  }
  void EndRow() {
    text_ += '\n';
    first_ = true;
  }
  std::string Done() { return std::move(text_); }
  std::string_view view() const { return text_; }
  void Clear() {
    text_.clear();
    first_ = true;
  }

 private:
  void Tab() {
    if (!first_) text_ += '\t';
    first_ = false;
  }
  std::string text_;
  bool first_ = true;
};

// A field of COPY's text format as its value (CopyText's escapes undone).
inline std::string UnescapeCopyText(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    const char c = field[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
  }
  return out;
}

// Big-endian integers, as COPY's binary format and the binary forms of int8 and arrays have
// them.
inline void PutU16(std::string& out, uint16_t v) {
  const char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 2);
}
inline void PutU32(std::string& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 4);
}
inline void PutU64(std::string& out, uint64_t v) {
  PutU32(out, static_cast<uint32_t>(v >> 32));
  PutU32(out, static_cast<uint32_t>(v));
}
inline uint32_t GetU32(std::string_view in, size_t at) {
  return (uint32_t{static_cast<uint8_t>(in[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(in[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(in[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(in[at + 3])};
}

// The element types of the chunk arrays (pg_type oids: int8, text).
enum class ElementType : uint32_t { kInt8 = 20, kText = 25 };

// One column's values in a chunk: the elements of a one-dimensional PostgreSQL array in binary
// form (array_recv's layout after its header: per element a length, -1 for NULL, then the
// bytes). AppendField writes it as one field of a COPY binary tuple. Cleared per chunk; its
// buffer's capacity stays.
class ArrayElements final : public FieldSink {
 public:
  void Int(int64_t value) override {
    const auto v = static_cast<uint64_t>(value);
    char b[12] = {0, 0, 0, 8};  // the length, then the value
    for (int i = 0; i < 8; ++i) b[4 + i] = static_cast<char>(v >> (56 - 8 * i));
    bytes_.append(b, sizeof b);
    ++count_;
  }
  void Text(std::string_view value) override {
    const size_t at = bytes_.size();
    PutU32(bytes_, 0);
    if (value.find('\0') == std::string_view::npos) {
      bytes_.append(value);
    } else {
      for (char c : value) {
        if (c != '\0') bytes_ += c;  // PostgreSQL text cannot hold NUL (a client's "\u0000")
      }
    }
    const auto length = static_cast<uint32_t>(bytes_.size() - at - 4);
    for (int i = 0; i < 4; ++i) bytes_[at + i] = static_cast<char>(length >> (24 - 8 * i));
    ++count_;
  }
  void Null() override {
    PutU32(bytes_, 0xFFFFFFFFu);
    has_null_ = true;
    ++count_;
  }
  // The array as one field: its length, then ndim 1, the NULL flag, the element type, the
  // dimension and its lower bound 1, then the elements.
  void AppendField(std::string& out, ElementType type) const {
    PutU32(out, static_cast<uint32_t>(20 + bytes_.size()));
    PutU32(out, 1);
    PutU32(out, has_null_ ? 1 : 0);
    PutU32(out, static_cast<uint32_t>(type));
    PutU32(out, count_);
    PutU32(out, 1);
    out += bytes_;
  }
  size_t size() const { return bytes_.size(); }
  void Clear() {
    bytes_.clear();
    count_ = 0;
    has_null_ = false;
  }

 private:
  std::string bytes_;
  uint32_t count_ = 0;
  bool has_null_ = false;
};

inline int64_t MsToUs(double ms) { return static_cast<int64_t>(ms * 1000.0); }
inline double UsToMs(int64_t us) { return static_cast<double>(us) / 1000.0; }

// The call log's columns as the writer builds them and the reader reads them: adding a column
// is one entry here and one migration (migrations.cc). The first kRouteColumns are the row's
// route (call_routes: who asked, for which model, where it went, the budget month charged),
// written as COPY text (the batch's routes, resolved to ids when sent: call_routes.h); the
// rest are call_log_chunks' arrays in the table's order (after first_id, n and route_id, which
// the writer puts in front when it sends a chunk), written as array elements (ArrayElements).
// Numbers are int8 elements (the call_log view casts the integer ones back).
struct Column {
  std::string_view name;
  ElementType type;
  void (*write)(FieldSink& to, const CallRecordView& r);
  void (*read)(const Rows& rows, int row, int column, CallRecord& r);
};
constexpr size_t kRouteColumns = 5;
using R = const CallRecordView&;
using X = const Rows&;
constexpr std::array<Column, 28> kColumns = {{
    {"tenant_id", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.tenant_id); },
     [](X x, int i, int c, CallRecord& r) { r.tenant_id = x.Text(i, c); }},
    {"key_id", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.key_id); },
     [](X x, int i, int c, CallRecord& r) { r.key_id = x.Text(i, c); }},
    {"model", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.model); },
     [](X x, int i, int c, CallRecord& r) { r.model = x.Text(i, c); }},
    {"deployment", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.deployment); },
     [](X x, int i, int c, CallRecord& r) { r.deployment = x.Text(i, c); }},
    // The budget month charged, as text ("YYYY-MM"); a row read back keeps month 0 (as the
    // embedded engine's reader).
    {"month", ElementType::kText,
     [](FieldSink& a, R r) { a.Text(governance::FormatMonth(r.month)); },
     [](X, int, int, CallRecord&) {}},
    {"time_ms", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.time_ms); },
     [](X x, int i, int c, CallRecord& r) { r.time_ms = x.Int(i, c); }},
    {"request_id", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.request_id); },
     [](X x, int i, int c, CallRecord& r) { r.request_id = x.Text(i, c); }},
    {"status", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.status); },
     [](X x, int i, int c, CallRecord& r) { r.status = static_cast<int>(x.Int(i, c)); }},
    {"error", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.error); },
     [](X x, int i, int c, CallRecord& r) { r.error = x.Text(i, c); }},
    {"prompt_tokens", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.prompt_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.prompt_tokens = x.Int(i, c); }},
    {"completion_tokens", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.completion_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.completion_tokens = x.Int(i, c); }},
    {"cached_tokens", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.cached_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cached_tokens = x.Int(i, c); }},
    {"cache_creation_tokens", ElementType::kInt8,
     [](FieldSink& a, R r) { a.Int(r.cache_creation_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.cache_creation_tokens = x.Int(i, c); }},
    {"cost_micros", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.cost_micros); },
     [](X x, int i, int c, CallRecord& r) { r.cost_micros = x.Int(i, c); }},
    {"estimated", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.estimated ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.estimated = x.Int(i, c) != 0; }},
    {"unpriced", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.unpriced ? 1 : 0); },
     [](X x, int i, int c, CallRecord& r) { r.unpriced = x.Int(i, c) != 0; }},
    {"ttft_us", ElementType::kInt8,
     [](FieldSink& a, R r) { r.ttft_ms >= 0 ? a.Int(MsToUs(r.ttft_ms)) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) {
       r.ttft_ms = x.IsNull(i, c) ? -1 : UsToMs(x.Int(i, c));
     }},
    {"total_us", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(MsToUs(r.total_ms)); },
     [](X x, int i, int c, CallRecord& r) { r.total_ms = UsToMs(x.Int(i, c)); }},
    {"overhead_us", ElementType::kInt8,
     [](FieldSink& a, R r) { r.overhead_us >= 0 ? a.Int(r.overhead_us) : a.Null(); },
     [](X x, int i, int c, CallRecord& r) { r.overhead_us = x.IsNull(i, c) ? -1 : x.Int(i, c); }},
    {"request_body", ElementType::kText,
     [](FieldSink& a, R r) { r.request_body.empty() ? a.Null() : a.Text(r.request_body); },
     [](X x, int i, int c, CallRecord& r) { r.request_body = x.Text(i, c); }},
    {"dropped_rows", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.dropped_rows); },
     [](X x, int i, int c, CallRecord& r) { r.dropped_rows = x.Int(i, c); }},
    {"reasoning_tokens", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.reasoning_tokens); },
     [](X x, int i, int c, CallRecord& r) { r.reasoning_tokens = x.Int(i, c); }},
    // Migration 8's (NULL arrays in older chunks: Int reads 0 and Text "" for a NULL).
    {"cache_status", ElementType::kInt8,
     [](FieldSink& a, R r) { a.Int(static_cast<int64_t>(r.cache_status)); },
     [](X x, int i, int c, CallRecord& r) {
       r.cache_status = static_cast<CacheStatus>(x.Int(i, c));
     }},
    {"agent_id", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.agent_id); },
     [](X x, int i, int c, CallRecord& r) { r.agent_id = x.Text(i, c); }},
    {"agent_version", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(r.agent_version); },
     [](X x, int i, int c, CallRecord& r) { r.agent_version = x.Int(i, c); }},
    {"response_id", ElementType::kText, [](FieldSink& a, R r) { a.Text(r.response_id); },
     [](X x, int i, int c, CallRecord& r) { r.response_id = x.Text(i, c); }},
    {"guard_replacements", ElementType::kInt8,
     [](FieldSink& a, R r) { a.Int(r.guard_replacements); },
     [](X x, int i, int c, CallRecord& r) { r.guard_replacements = x.Int(i, c); }},
    {"flags", ElementType::kInt8, [](FieldSink& a, R r) { a.Int(int64_t{r.flags}); },
     [](X x, int i, int c, CallRecord& r) { r.flags = static_cast<uint32_t>(x.Int(i, c)); }},
}};
// The columns a binary of schema 7 wrote (before migration 8's): a batch it spooled has these
// only, and is copied in naming only them (the rest stay NULL arrays: their defaults).
constexpr size_t kColumnsOfSchema7 = 22;

// call_log_chunks' columns as the writer sends them: the chunk's first id, its row count and
// its rows' route ids, then the first `columns` of kColumns past the route (all of them, or
// kColumnsOfSchema7 for a batch spooled by schema 7).
inline std::string ColumnNames(size_t columns) {
  std::string out = "first_id, n, route_id";
  for (size_t c = kRouteColumns; c < columns; ++c) {
    out += ", ";
    out += kColumns[c].name;
  }
  return out;
}
inline const std::string& ChunkColumnNames(size_t columns = kColumns.size()) {
  static const std::string all = ColumnNames(kColumns.size());
  static const std::string schema7 = ColumnNames(kColumnsOfSchema7);
  return columns == kColumnsOfSchema7 ? schema7 : all;
}
constexpr size_t ChunkFields(size_t columns) { return 3 + columns - kRouteColumns; }
constexpr size_t kChunkFields = ChunkFields(kColumns.size());

// A chunk (one call_log_chunks tuple) holds at most kChunkRows rows, and is closed early once
// its arrays pass kChunkBytes (logged request bodies: a field must stay far below
// PostgreSQL's 1 GB). Readers find the chunks of an id range by first_id within kChunkRows
// below it (call_log.cc).
constexpr int64_t kChunkRows = 4096;
constexpr size_t kChunkBytes = size_t{16} << 20;

// A batch's rows as chunks (call_log_chunks tuples without their first three fields, which
// depend on the batch's block and route ids: CallRoutes::Render): per chunk its row count and
// byte length (4 bytes each), each row's route (4 bytes: its line in the batch's routes),
// then its arrays as COPY binary fields, kColumns past the route in order. Its buffers'
// capacity stays from batch to batch.
class ChunkWriter {
 public:
  void Row(uint32_t route, const CallRecordView& r) {
    StartRow(route);
    for (size_t c = kRouteColumns; c < kColumns.size(); ++c) kColumns[c].write(column(c), r);
    EndRow();
  }
  // A row value by value: its route, then one value into column(c) for each c of kColumns
  // past the route, then EndRow.
  void StartRow(uint32_t route) { PutU32(routes_, route); }
  FieldSink& column(size_t c) { return columns_[c - kRouteColumns]; }
  void EndRow() {
    size_t bytes = 0;
    for (const ArrayElements& c : columns_) bytes += c.size();
    if (++rows_ == kChunkRows || bytes >= kChunkBytes) Close();
  }
  // The chunks of the rows since the last Clear.
  std::string_view Finish() {
    Close();
    return out_;
  }
  void Clear() { out_.clear(); }

 private:
  void Close() {
    if (rows_ == 0) return;
    PutU32(out_, rows_);
    const size_t at = out_.size();
    PutU32(out_, 0);
    out_ += routes_;
    routes_.clear();
    for (size_t c = kRouteColumns; c < kColumns.size(); ++c) {
      columns_[c - kRouteColumns].AppendField(out_, kColumns[c].type);
      columns_[c - kRouteColumns].Clear();
    }
    const auto length = static_cast<uint32_t>(out_.size() - at - 4);
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<char>(length >> (24 - 8 * i));
    rows_ = 0;
  }

  std::string routes_;
  std::array<ArrayElements, kColumns.size() - kRouteColumns> columns_;
  uint32_t rows_ = 0;
  std::string out_;
};

// The spend a batch adds, as four arrays (scope, scope id, month, micros), one entry per scope.
constexpr size_t kSpendArrays = 4;
// The daily counters a batch adds (store/daily_spend.h), as eight arrays (day, tenant, key,
// model, cost, prompt tokens, completion tokens, requests), one entry per counter.
constexpr size_t kDailyArrays = 8;

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
// the arrays, and the daily counters from theirs (`daily`: absent in a batch spooled by a
// binary before them). Appended to `sql`; `literal(sql, text)` appends `text` as an SQL literal
// (Connection::AppendLiteral), so the batch's texts are escaped in place, not copied.
// `columns`: the batch's chunks hold the first `columns` of kColumns (ChunkColumnNames).
template <typename Literal>
Status AppendBatchSql(std::string& sql, Literal&& literal, std::string_view key,
                      const BatchIndexes* indexes,
                      const std::array<std::string_view, kSpendArrays>& spend,
                      const std::array<std::string_view, kDailyArrays>* daily,
                      size_t columns = kColumns.size()) {
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
    sql += " COPY call_log_chunks (";
    sql += ChunkColumnNames(columns);
    sql +=
        ") FROM STDIN WITH (FORMAT binary); INSERT INTO call_log_blocks (tenant_id, first_id, "
        "last_id) SELECT t, ";
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
  if (daily == nullptr) return ok;
  sql +=
      "; INSERT INTO daily_spend (day, tenant_id, key_id, model, cost_micros, prompt_tokens, "
      "completion_tokens, requests) SELECT * FROM unnest(";
  for (size_t i = 0; i < kDailyArrays; ++i) {
    lit((*daily)[i]);
    sql += i < 4 ? "::text[], " : (i + 1 < kDailyArrays ? "::bigint[], " : "::bigint[])");
  }
  sql +=
      " ON CONFLICT (day, tenant_id, key_id, model) DO UPDATE SET "
      "cost_micros = daily_spend.cost_micros + excluded.cost_micros, "
      "prompt_tokens = daily_spend.prompt_tokens + excluded.prompt_tokens, "
      "completion_tokens = daily_spend.completion_tokens + excluded.completion_tokens, "
      "requests = daily_spend.requests + excluded.requests";
  return ok;
}

}  // namespace turnpike::store::postgres::columns
