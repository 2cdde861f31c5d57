#include "store/postgres/call_routes.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "store/postgres/call_log_columns.h"

namespace turnpike::store::postgres {
namespace {

using columns::kRouteColumns;

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

Status BatchRows::Read(std::string_view routes_text, std::string_view chunks) {
  auto malformed = [] {
    return Error{ErrorCode::kInternal,
                 "a call-log batch of another format (spooled by another version)", ""};
  };
  routes.clear();
  route_tenant_.clear();
  route_month_.clear();
  rows = 0;
  size_t tenant_count = 0;
  size_t month_count = 0;
  // Tenants and months are few per batch: a linear search, and the Places (and their
  // strings) of the previous batch are reused.
  auto place = [](std::vector<Place>& places, size_t& count, std::string_view escaped) {
    for (size_t i = 0; i < count; ++i) {
      if (places[i].escaped == escaped) return static_cast<uint32_t>(i);
    }
    if (count == places.size()) places.emplace_back();
    Place& p = places[count];
    p.escaped = escaped;
    p.value = columns::UnescapeCopyText(escaped);
    p.first = -1;
    return static_cast<uint32_t>(count++);
  };
  Status status = Ok{};
  while (!routes_text.empty()) {
    const size_t newline = routes_text.find('\n');
    if (newline == std::string_view::npos) break;
    const std::string_view route = routes_text.substr(0, newline);
    routes_text.remove_prefix(newline + 1);
    if (static_cast<size_t>(std::count(route.begin(), route.end(), '\t')) != kRouteColumns - 1) {
      status = malformed();
      break;
    }
    routes.push_back(route);
    const auto fields = Fields(route);
    route_tenant_.push_back(place(tenants, tenant_count, fields[0]));
    route_month_.push_back(place(months, month_count, fields[kRouteColumns - 1]));
  }
  // Each row's route, chunk by chunk (ChunkWriter's layout).
  for (size_t at = 0; status.ok() && at < chunks.size();) {
    if (chunks.size() - at < 8) {
      status = malformed();
      break;
    }
    const uint32_t count = columns::GetU32(chunks, at);
    const uint32_t bytes = columns::GetU32(chunks, at + 4);
    at += 8;
    if (count == 0 || bytes > chunks.size() - at || bytes / 4 < count) {
      status = malformed();
      break;
    }
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t route = columns::GetU32(chunks, at + 4 * i);
      if (route >= routes.size()) {
        status = malformed();
        break;
      }
      const auto row = static_cast<int64_t>(rows + i);
      Place& tenant = tenants[route_tenant_[route]];
      if (tenant.first < 0) tenant.first = row;
      tenant.last = row;
      Place& month = months[route_month_[route]];
      if (month.first < 0) month.first = row;
    }
    rows += count;
    at += bytes;
  }
  tenants.resize(tenant_count);
  months.resize(month_count);
  if (!status.ok()) return status;
  // Every route line is some row's (the writer adds one with its first row).
  for (const std::vector<Place>* places : {&tenants, &months}) {
    for (const Place& p : *places) {
      if (p.first < 0) return malformed();
    }
  }
  if (rows >= static_cast<size_t>(columns::kBlockIds)) {
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
    for (std::string_view route : batch.routes) {
      if (ids_.find(route) == ids_.end()) missing.emplace(route, true);
    }
    if (missing.empty()) break;
    if (ids_.size() + missing.size() > kMaxRemembered) ids_.clear();
    std::array<columns::ArrayText, kRouteColumns> arrays;
    for (const auto& [route, unused] : missing) {
      const auto fields = Fields(route);
      for (size_t i = 0; i < kRouteColumns; ++i)
        arrays[i].Text(columns::UnescapeCopyText(fields[i]));
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
  batch_ids_.clear();
  for (std::string_view route : batch.routes) {
    const auto found = ids_.find(route);
    if (found == ids_.end()) {
      return Error{ErrorCode::kInternal, "a call-log route was neither added nor found", ""};
    }
    batch_ids_.push_back(found->second);
  }
  return Ok{};
}

Status CallRoutes::Render(const BatchRows& batch, int64_t first_id, std::string_view chunks,
                          std::string& out, size_t chunk_fields) const {
  using columns::GetU32;
  using columns::PutU16;
  using columns::PutU32;
  using columns::PutU64;
  if (batch_ids_.size() != batch.routes.size()) {
    return Error{ErrorCode::kInternal, "a call-log batch's routes are not resolved", ""};
  }
  out.clear();
  out.reserve(chunks.size() + batch.rows * 12 + 64);
  // COPY's binary header: the signature, no flags, no extension.
  out.append("PGCOPY\n\377\r\n\0", 11);
  PutU32(out, 0);
  PutU32(out, 0);
  // The chunks were checked by BatchRows::Read (the same text).
  size_t place = 0;
  for (size_t at = 0; at < chunks.size();) {
    const uint32_t rows = GetU32(chunks, at);
    const uint32_t bytes = GetU32(chunks, at + 4);
    at += 8;
    PutU16(out, static_cast<uint16_t>(chunk_fields));
    PutU32(out, 8);
    PutU64(out, static_cast<uint64_t>(first_id + static_cast<int64_t>(place)));
    PutU32(out, 4);
    PutU32(out, rows);
    // The route ids: an int8 array (ArrayElements' layout).
    PutU32(out, 20 + 12 * rows);
    PutU32(out, 1);
    PutU32(out, 0);
    PutU32(out, static_cast<uint32_t>(columns::ElementType::kInt8));
    PutU32(out, rows);
    PutU32(out, 1);
    for (uint32_t i = 0; i < rows; ++i) {
      PutU32(out, 8);
      PutU64(out, static_cast<uint64_t>(batch_ids_[GetU32(chunks, at + 4 * i)]));
    }
    out.append(chunks.substr(at + 4 * size_t{rows}, bytes - 4 * size_t{rows}));
    at += bytes;
    place += rows;
  }
  PutU16(out, 0xFFFF);  // the trailer
  return Ok{};
}

}  // namespace turnpike::store::postgres
