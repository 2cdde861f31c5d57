// The call log's writer over PostgreSQL (call_log.h), driven by the table of columns
// (kColumns): one batch is one script (AppendBatchSql), and the spool's replays of this and
// earlier formats. The readers are in call_log_read.cc.
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

#include "store/daily_counts.h"
#include "store/postgres/call_log_columns.h"

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

// The spooled parameters' layout (WriteCalls); a spool of another layout is refused whole.
constexpr std::string_view kFormat = "call-log-batch-9";
// What a binary before the daily counters spooled: this layout without their arrays.
constexpr std::string_view kFormat8 = "call-log-batch-8";
// What a binary of schema 7 spooled: this layout with the chunks of kColumnsOfSchema7
// columns, copied in as they are (migration 8's arrays stay NULL: their defaults).
constexpr std::string_view kFormat7 = "call-log-batch-7";
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
  // The daily counters: found again without a lookup while the key and day stay the same.
  std::unordered_map<DayKey, DayCounts, DayKeyHash> days;
  DayKey last_day_key;
  DayCounts* day_counts = nullptr;
  for (const CallBatchPart& part : parts) {
    for (size_t i = part.begin; i < part.end; ++i) {
      const CallRecordView r = part.batch->record(i);
      const DayKey day_key{r.tenant_id, r.key_id, r.model, DayOf(r.time_ms)};
      if (day_counts == nullptr || !(day_key == last_day_key)) {
        day_counts = &days[day_key];
        last_day_key = day_key;
      }
      day_counts->Add(r.cost_micros, r.prompt_tokens, r.completion_tokens, r.dropped_rows);
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
  if (row_count == 0 && sums.empty() && days.empty()) return Ok{};
  std::array<ArrayText, columns::kDailyArrays> daily;
  for (const auto& [k, counts] : days) {
    daily[0].Text(FormatDay(k.day));
    daily[1].Text(k.tenant_id);
    daily[2].Text(k.key_id);
    daily[3].Text(k.model);
    daily[4].Int(counts.cost_micros);
    daily[5].Int(counts.prompt_tokens);
    daily[6].Int(counts.completion_tokens);
    daily[7].Int(counts.requests);
  }
  const std::string key = nonce_ + "-" + std::to_string(next_batch_++);
  std::array<std::string, kSpendArrays> spend_texts;
  for (size_t i = 0; i < kSpendArrays; ++i) spend_texts[i] = spend[i].Done();
  std::array<std::string, columns::kDailyArrays> daily_texts;
  for (size_t i = 0; i < columns::kDailyArrays; ++i) daily_texts[i] = daily[i].Done();
  BatchParts batch = {kFormat, key};
  if (row_count > 0) {
    batch[2] = routes.view();
    batch[3] = chunks_.Finish();
  }
  for (size_t i = 0; i < kSpendArrays; ++i) batch[4 + i] = spend_texts[i];
  for (size_t i = 0; i < columns::kDailyArrays; ++i) batch[kDailyAt + i] = daily_texts[i];

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
  // A batch spooled before the daily counters has no arrays for them.
  if (params.size() != batch.size() && params.size() != kDailyAt) {
    return Error{ErrorCode::kInternal,
                 "a call-log batch of another format (spooled by another version)", ""};
  }
  for (size_t i = 0; i < params.size(); ++i) {
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
  BatchParts batch = {kFormat8, *v[1]};
  for (size_t i = 0; i < kSpendArrays; ++i) {
    if (v[3 + i]) batch[4 + i] = *v[3 + i];
  }
  std::string routes;
  if (v[2]) {
    chunks_.Clear();
    std::unordered_map<std::string_view, uint32_t> lines;
    std::string_view text = *v[2];
    std::array<std::string_view, columns::kColumnsOfSchema7> fields;
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
      for (size_t c = columns::kRouteColumns; c < fields.size(); ++c) {
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
      // Migration 8's columns: as a request that set none of them.
      for (size_t c = fields.size(); c < kColumns.size(); ++c) {
        kColumns[c].write(chunks_.column(c), CallRecordView{});
      }
      chunks_.EndRow();
    }
    batch[2] = routes;
    batch[3] = chunks_.Finish();
  }
  return Send(batch);
}

Status CallLog::Send(const BatchParts& v) {
  const bool schema7 = v[0] && *v[0] == kFormat7;
  const bool with_daily = v[0] && *v[0] == kFormat;
  if (!v[0] || (!with_daily && *v[0] != kFormat8 && !schema7) || !v[1] ||
      v[2].has_value() != v[3].has_value()) {
    return Error{ErrorCode::kInternal,
                 "a call-log batch of another format (spooled by another version)", ""};
  }
  for (size_t i = 4; i < (with_daily ? v.size() : kDailyAt); ++i) {
    if (!v[i]) return Error{ErrorCode::kInternal, "a call-log batch without its spend", ""};
  }
  const std::array<std::string_view, kSpendArrays> spend = {*v[4], *v[5], *v[6], *v[7]};
  std::array<std::string_view, columns::kDailyArrays> daily_arrays;
  if (with_daily) {
    for (size_t i = 0; i < columns::kDailyArrays; ++i) daily_arrays[i] = *v[kDailyAt + i];
  }
  const std::array<std::string_view, columns::kDailyArrays>* daily =
      with_daily ? &daily_arrays : nullptr;
  auto literal = [this](std::string& out, std::string_view text) {
    return db_.AppendLiteral(out, text);
  };
  const size_t chunk_columns = schema7 ? columns::kColumnsOfSchema7 : kColumns.size();
  sql_.clear();
  Status done = Ok{};
  if (!v[2]) {
    Status built = columns::AppendBatchSql(sql_, literal, *v[1], nullptr, spend, daily);
    if (!built.ok()) return built;
    done = db_.Script(sql_, StoreOp::kCallLogInsert);
  } else {
    Status read = batch_.Read(*v[2], *v[3]);
    if (!read.ok()) return read;
    Status resolved = routes_.Resolve(db_, batch_);
    if (!resolved.ok()) return resolved;
    std::array<std::string, 5> texts;
    const columns::BatchIndexes indexes = Indexes(batch_, texts);
    Status built =
        columns::AppendBatchSql(sql_, literal, *v[1], &indexes, spend, daily, chunk_columns);
    if (!built.ok()) return built;
    // The rows' ids come from the block the batch's first statement took.
    const std::string_view chunks = *v[3];
    auto rows = [this, chunks, chunk_columns](const Rows& block) -> Result<std::string_view> {
      if (block.size() != 1) return Error{ErrorCode::kInternal, "no call-log block", ""};
      Status rendered = routes_.Render(batch_, block.Int(0, 0) * columns::kBlockIds, chunks, copy_,
                                       columns::ChunkFields(chunk_columns));
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

}  // namespace turnpike::store::postgres
