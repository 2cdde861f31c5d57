#include "store/sqlite/call_routes.h"

#include <cstring>
#include <functional>

namespace turnpike::store::sqlite {
namespace {

// Each part with its length first, so no two routes share a key whatever bytes they hold.
void AppendPart(std::string& key, std::string_view part) {
  const uint32_t size = static_cast<uint32_t>(part.size());
  char prefix[sizeof size];
  std::memcpy(prefix, &size, sizeof size);
  key.append(prefix, sizeof prefix).append(part);
}

void KeyOf(const RouteView& r, std::string& key) {
  key.clear();
  AppendPart(key, r.tenant_id);
  AppendPart(key, r.key_id);
  AppendPart(key, r.model);
  AppendPart(key, r.deployment);
  char month[sizeof r.month];
  std::memcpy(month, &r.month, sizeof month);
  key.append(month, sizeof month);
}

// `slot`'s statement (prepared on first use) with the route's five columns bound, in the
// order tenant, key, model, deployment, month.
Result<Statement*> Bound(Database& db, std::unique_ptr<Statement>& slot, std::string_view sql,
                         const RouteView& r, std::string_view month) {
  Result<Statement*> q = db.Cached(slot, sql, StoreOp::kCallLogRoute);
  if (!q.ok()) return q.error();
  (*q)->BindView(1, r.tenant_id)
      .BindView(2, r.key_id)
      .BindView(3, r.model)
      .BindView(4, r.deployment)
      .BindView(5, month);
  return q;
}

}  // namespace

size_t RouteViewHash::operator()(const RouteView& route) const {
  constexpr size_t kMix = 0x9e3779b97f4a7c15ULL;
  const std::hash<std::string_view> text;
  size_t h = size_t{route.month} * kMix;
  for (std::string_view part : {route.tenant_id, route.key_id, route.model, route.deployment}) {
    h = (h ^ text(part)) * kMix;
  }
  return h;
}

Result<int64_t> CallRoutes::Id(Database& db, const RouteView& r, std::string_view month) {
  KeyOf(r, key_);
  if (auto it = ids_.find(key_); it != ids_.end()) return it->second;
  Result<int64_t> found = Find(db, r, month);
  if (!found.ok()) return found.error();
  if (ids_.size() >= kMaxRemembered) ids_.clear();
  ids_.emplace(key_, found.value());
  return found.value();
}

Result<int64_t> CallRoutes::Find(Database& db, const RouteView& r, std::string_view month) {
  Result<Statement*> select = Bound(db, select_,
                                    "SELECT id FROM call_routes WHERE tenant_id = ? AND key_id = ? "
                                    "AND model = ? AND deployment = ? AND month = ?",
                                    r, month);
  if (!select.ok()) return select.error();
  Result<bool> row = (*select)->Step();
  const int64_t found = row.ok() && row.value() ? (*select)->Int(0) : 0;
  (*select)->Reset();
  if (!row.ok()) return row.error();
  if (found != 0) return found;

  Result<Statement*> insert = Bound(db, insert_,
                                    "INSERT INTO call_routes (tenant_id, key_id, model, "
                                    "deployment, month) VALUES (?, ?, ?, ?, ?)",
                                    r, month);
  if (!insert.ok()) return insert.error();
  Status inserted = (*insert)->Run();
  if (!inserted.ok()) return inserted.error();
  return db.LastInsertId();
}

void CallRoutes::Rollback() { ids_.clear(); }

}  // namespace turnpike::store::sqlite
