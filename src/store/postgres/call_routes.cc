#include "store/postgres/call_routes.h"

#include <array>
#include <map>
#include <string>

#include "store/postgres/call_log_columns.h"

namespace turnpike::store::postgres {
namespace {

using columns::kColumns;
using columns::kRouteColumns;

// A field of COPY's text format as its value (CopyText's escapes undone).
std::string Unescape(std::string_view field) {
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

// The route's fields, split at the tabs.
std::array<std::string_view, kRouteColumns> Fields(std::string_view route) {
  std::array<std::string_view, kRouteColumns> out;
  for (size_t i = 0; i < kRouteColumns; ++i) {
    const size_t tab = route.find('\t');
    out[i] = route.substr(0, tab);
    route = tab == std::string_view::npos ? std::string_view() : route.substr(tab + 1);
  }
  return out;
}

}  // namespace

Status BatchRows::Read(std::string_view text) {
  rows.clear();
  size_t tenant_count = 0;
  size_t month_count = 0;
  // Tenants and months are few per batch: a linear search, and the Places (and their
  // strings) of the previous batch are reused.
  auto place = [](std::vector<Place>& places, size_t& count, std::string_view escaped,
                  int64_t at) -> Place& {
    for (size_t i = 0; i < count; ++i) {
      if (places[i].escaped == escaped) return places[i];
    }
    if (count == places.size()) places.emplace_back();
    Place& p = places[count++];
    p.escaped = escaped;
    p.value = Unescape(escaped);
    p.first = at;
    return p;
  };
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) break;
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    // The route ends at the kRouteColumns-th tab; a row has kColumns.size() - 1 tabs.
    size_t end = 0;
    size_t tabs = 0;
    size_t route_end = std::string_view::npos;
    while ((end = line.find('\t', end)) != std::string_view::npos) {
      if (++tabs == kRouteColumns) route_end = end;
      ++end;
    }
    if (tabs != kColumns.size() - 1) {
      tenants.resize(tenant_count);
      months.resize(month_count);
      return Error{ErrorCode::kInternal,
                   "a call-log batch of another format (spooled by another version)", ""};
    }
    const std::string_view route = line.substr(0, route_end);
    const int64_t at = static_cast<int64_t>(rows.size());
    rows.push_back({route, line.substr(route_end + 1)});
    const auto fields = Fields(route);
    place(tenants, tenant_count, fields[0], at).last = at;
    place(months, month_count, fields[kRouteColumns - 1], at);
  }
  tenants.resize(tenant_count);
  months.resize(month_count);
  if (rows.size() >= static_cast<size_t>(columns::kBlockIds)) {
    return Error{ErrorCode::kInternal, "a call-log batch of more rows than a block holds", ""};
  }
  return Ok{};
}

Status CallRoutes::Resolve(Connection& db, const BatchRows& batch) {
  // The routes of a concurrent writer's uncommitted insert are not seen by the read half of
  // the statement (it skipped them, then its snapshot predates their commit): a second round
  // finds them committed.
  for (int round = 0; round < 2; ++round) {
    std::map<std::string_view, bool> missing;
    for (const BatchRows::Row& row : batch.rows) {
      if (ids_.find(row.route) == ids_.end()) missing.emplace(row.route, true);
    }
    if (missing.empty()) return Ok{};
    if (ids_.size() + missing.size() > kMaxRemembered) ids_.clear();
    std::array<columns::ArrayText, kRouteColumns> arrays;
    for (const auto& [route, unused] : missing) {
      const auto fields = Fields(route);
      for (size_t i = 0; i < kRouteColumns; ++i) arrays[i].Text(Unescape(fields[i]));
    }
    Params p;
    for (columns::ArrayText& a : arrays) p.Add(a.Done());
    static const std::string kSql =
        "WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], "
        "$5::text[]) AS v(tenant_id, key_id, model, deployment, month)), "
        "added AS (INSERT INTO call_routes (tenant_id, key_id, model, deployment, month) "
        "SELECT * FROM v ON CONFLICT DO NOTHING "
        "RETURNING id, tenant_id, key_id, model, deployment, month) "
        "SELECT * FROM added UNION ALL "
        "SELECT r.id, r.tenant_id, r.key_id, r.model, r.deployment, r.month "
        "FROM call_routes r JOIN v USING (tenant_id, key_id, model, deployment, month)";
    Result<Rows> rows = db.Run(kSql, p, StoreOp::kCallLogRoute);
    if (!rows.ok()) return rows.error();
    for (int i = 0; i < rows->size(); ++i) {
      columns::CopyText key;  // the route as the rows spell it
      for (size_t c = 0; c < kRouteColumns; ++c) key.Text(rows->Text(i, static_cast<int>(c) + 1));
      ids_[key.Done()] = rows->Int(i, 0);
    }
  }
  for (const BatchRows::Row& row : batch.rows) {
    if (ids_.find(row.route) == ids_.end()) {
      return Error{ErrorCode::kInternal, "a call-log route was neither added nor found", ""};
    }
  }
  return Ok{};
}

void CallRoutes::Render(const BatchRows& batch, int64_t first_id, std::string& out) const {
  out.clear();
  size_t bytes = 0;
  for (const BatchRows::Row& row : batch.rows) bytes += row.rest.size() + 44;
  out.reserve(bytes);
  int64_t id = first_id;
  for (const BatchRows::Row& row : batch.rows) {
    out += std::to_string(id++);
    out += '\t';
    out += std::to_string(ids_.find(row.route)->second);
    out += '\t';
    out += row.rest;
    out += '\n';
  }
}

}  // namespace turnpike::store::postgres
