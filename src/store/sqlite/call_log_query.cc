// Paging through the call log, newest first (the admin API's /calls).
#include <limits>
#include <string>
#include <vector>

#include "store/sqlite/call_log.h"

namespace turnpike::store::sqlite {
namespace {

CallRow ReadCallRow(const Statement& q) {
  CallRow row;
  row.id = q.Int(0);
  CallRecord& c = row.record;
  c.time_ms = q.Int(1);
  c.request_id = q.Text(2);
  c.tenant_id = q.Text(3);
  c.key_id = q.Text(4);
  c.model = q.Text(5);
  c.deployment = q.Text(6);
  c.status = static_cast<int>(q.Int(7));
  c.error = q.Text(8);
  c.prompt_tokens = q.Int(9);
  c.completion_tokens = q.Int(10);
  c.cached_tokens = q.Int(11);
  c.cost_micros = q.Int(12);
  c.estimated = q.Int(13) != 0;
  c.unpriced = q.Int(14) != 0;
  c.ttft_ms = q.IsNull(15) ? -1 : static_cast<double>(q.Int(15)) / 1000.0;
  c.total_ms = static_cast<double>(q.Int(16)) / 1000.0;
  c.overhead_us = q.IsNull(17) ? -1 : q.Int(17);
  c.request_body = q.Text(19);
  c.dropped_rows = q.Int(20);
  c.cache_creation_tokens = q.Int(21);
  c.reasoning_tokens = q.Int(22);
  c.cache_status = static_cast<CacheStatus>(q.Int(23));
  c.agent_id = q.Text(24);
  c.agent_version = q.Int(25);
  c.response_id = q.Text(26);
  c.guard_replacements = q.Int(27);
  c.flags = static_cast<uint32_t>(q.Int(28));
  return row;
}

}  // namespace

// Newest first. With a tenant filter the tenant's blocks are walked newest first and each id
// range is scanned for the page's remaining rows (the table has no tenant index; see the top
// of this file); without one, the table is scanned from its newest row. The rows are read
// through their routes, rows first (SQLite keeps a CROSS JOIN's order: it never starts at
// call_routes, whose tenant index would have it scan the id range once per route).
Result<std::vector<CallRow>> CallLog::QueryCalls(const CallQuery& query) {
  const bool by_tenant = !query.tenant_id.empty();
  std::string sql =
      "SELECT c.id, c.time_ms, c.request_id, r.tenant_id, r.key_id, r.model, r.deployment, "
      "c.status, c.error, c.prompt_tokens, c.completion_tokens, c.cached_tokens, c.cost_micros, "
      "c.estimated, c.unpriced, c.ttft_us, c.total_us, c.overhead_us, r.month, c.request_body, "
      "c.dropped_rows, c.cache_creation_tokens, c.reasoning_tokens, c.cache_status, c.agent_id, "
      "c.agent_version, c.response_id, c.guard_replacements, c.flags "
      "FROM call_log_rows c CROSS JOIN call_routes r "
      "WHERE r.id = c.route_id";
  // Filters in a fixed order, bound in the same order below.
  if (by_tenant) sql += " AND c.id >= ? AND c.id <= ? AND r.tenant_id = ?";
  if (!query.key_id.empty()) sql += " AND r.key_id = ?";
  if (!query.model.empty()) sql += " AND r.model = ?";
  if (query.status != 0) sql += " AND c.status = ?";
  if (query.since_ms != 0) sql += " AND c.time_ms >= ?";
  if (query.until_ms != 0) sql += " AND c.time_ms < ?";
  if (query.before_id != 0) sql += " AND c.id < ?";
  sql += " ORDER BY c.id DESC LIMIT ?";
  Result<Statement> q = db_.Prepare(sql, StoreOp::kAdminRead);
  if (!q.ok()) return q.error();
  std::vector<CallRow> out;
  // Appends the rows of ids [first, last] (all ids without a tenant filter).
  auto scan = [&](int64_t first, int64_t last) -> Status {
    int i = 1;
    if (by_tenant) {
      q->Bind(i, first).Bind(i + 1, last).Bind(i + 2, query.tenant_id);
      i += 3;
    }
    if (!query.key_id.empty()) q->Bind(i++, query.key_id);
    if (!query.model.empty()) q->Bind(i++, query.model);
    if (query.status != 0) q->Bind(i++, query.status);
    if (query.since_ms != 0) q->Bind(i++, query.since_ms);
    if (query.until_ms != 0) q->Bind(i++, query.until_ms);
    if (query.before_id != 0) q->Bind(i++, query.before_id);
    q->Bind(i++, static_cast<int64_t>(query.limit) - static_cast<int64_t>(out.size()));
    Result<bool> r = q->Step();
    for (; r.ok() && r.value(); r = q->Step()) out.push_back(ReadCallRow(*q));
    q->Reset();
    if (!r.ok()) return r.error();
    return Ok{};
  };
  if (!by_tenant) {
    Status scanned = scan(0, 0);
    if (!scanned.ok()) return scanned.error();
    return out;
  }
  Result<Statement> blocks = db_.Prepare(
      "SELECT first_id, last_id FROM call_log_blocks WHERE tenant_id = ? AND first_id < ? "
      "ORDER BY first_id DESC",
      StoreOp::kAdminRead);
  if (!blocks.ok()) return blocks.error();
  blocks->Bind(1, query.tenant_id)
      .Bind(2, query.before_id != 0 ? query.before_id : std::numeric_limits<int64_t>::max());
  Result<bool> block = blocks->Step();
  for (; block.ok() && block.value() && out.size() < static_cast<size_t>(query.limit);
       block = blocks->Step()) {
    Status scanned = scan(blocks->Int(0), blocks->Int(1));
    if (!scanned.ok()) return scanned.error();
  }
  if (!block.ok()) return block.error();
  return out;
}

}  // namespace turnpike::store::sqlite
