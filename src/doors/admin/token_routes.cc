// A tenant's admin tokens: keys of KeyKind::kAdmin ("tpa-..."), made, listed and revoked by the
// operator under /admin/v1/tenants/{id}/admin-tokens. They share the keys' storage, snapshot and
// change feed (a revocation takes the path a key's takes to other replicas), and nothing else:
// the keys API neither lists nor touches them, and the doors refuse them
// (governance/authenticate.h).
#include <boost/json/object.hpp>

#include "doors/admin/body_reader.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
using governance::Key;

namespace {

json::object TokenJson(const Key& k) {
  return {{"id", k.public_id},
          {"tenant", k.tenant_id},
          {"name", k.name},
          {"status", k.status == governance::KeyStatus::kRevoked ? "revoked" : "active"},
          {"created_at", k.created_at}};
}

// The tenant's admin token `id`, or nullptr.
const governance::KeyEntry* FindToken(const governance::GovernanceSnapshot& snapshot,
                                      std::string_view tenant, std::string_view id) {
  const governance::KeyEntry* entry = snapshot.FindKey(id);
  if (entry == nullptr || entry->key.kind != governance::KeyKind::kAdmin ||
      entry->key.tenant_id != tenant) {
    return nullptr;
  }
  return entry;
}

}  // namespace

Answer ListAdminTokens(Service& service, const AdminCall& call) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  const std::string_view tenant = call.Param("id");
  if (snapshot->FindTenant(tenant) == nullptr) co_return NoSuch("tenant", tenant);
  json::array data;
  for (const auto& entry : snapshot->keys()) {
    if (entry.key.kind == governance::KeyKind::kAdmin && entry.key.tenant_id == tenant) {
      data.push_back(TokenJson(entry.key));
    }
  }
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer CreateAdminToken(Service& service, const AdminCall& call) {
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(), {"name"});
  Key key;
  key.name = body.Text("name", false).value_or("");
  if (body.error) co_return *body.error;
  Result<std::string> idempotency_key = IdempotencyKey(call);
  if (!idempotency_key.ok()) co_return idempotency_key.error();
  key.tenant_id = std::string(call.Param("id"));
  key.kind = governance::KeyKind::kAdmin;
  Result<control::CreatedKey> created =
      co_await service.CreateKey(std::move(key), std::move(idempotency_key.value()));
  if (!created.ok()) {
    if (created.error().code == ErrorCode::kNotFound) co_return NoSuch("tenant", call.Param("id"));
    co_return created.error();
  }
  json::object out = TokenJson(created->key);
  out["token"] = created->secret_key;
  co_return JsonAnswer(201, out);
}

Answer RevokeAdminToken(Service& service, const AdminCall& call) {
  const std::string id(call.Param("token_id"));
  if (FindToken(*service.cell().Load(), call.Param("id"), id) == nullptr) {
    co_return NoSuch("admin token", id);
  }
  Result<Key> revoked = co_await service.RevokeKey(id);
  if (!revoked.ok()) co_return revoked.error();
  co_return JsonAnswer(200, TokenJson(revoked.value()));
}

}  // namespace turnpike::doors::admin
