// A tenant's own provider keys (BYOK) and the admin audit log (admin_api.h documents both):
//
//   GET    /admin/v1/tenants/{id}/provider-keys                 its keys: deployment, last 4
//                                                               characters, fingerprint; never
//                                                               the key
//   PUT    /admin/v1/tenants/{id}/provider-keys/{deployment}    {"api_key": "..."}
//   DELETE /admin/v1/tenants/{id}/provider-keys/{deployment}
//   POST   /admin/v1/provider-keys/rotate                       (operator) re-seal every key
//   GET    /admin/v1/audit?tenant=&token=&cursor=&limit=        newest first
//
// A tenant's admin token manages its own provider keys and reads its own audit rows
// (tenant_scope.h); rotation is the operator's. An unknown deployment is a 404 naming it.
#include <openssl/evp.h>

#include <boost/json/object.hpp>
#include <charconv>

#include "doors/admin/body_reader.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
using governance::ProviderKey;

namespace {

constexpr size_t kMaxApiKeyBytes = 4096;
constexpr size_t kShownTail = 4;
constexpr size_t kFingerprintHex = 16;
constexpr int64_t kDefaultAuditPage = 100;
constexpr int64_t kMaxAuditPage = 1000;

// "sha256:" and the first hex digits of the key's SHA-256: tells two keys apart, reveals nothing.
std::string Fingerprint(std::string_view key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(key.data(), key.size(), digest, &size, EVP_sha256(), nullptr) != 1) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (size_t i = 0; i < kFingerprintHex / 2 && i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

json::object KeyJson(const ProviderKey& key) {
  const std::string_view api_key = key.api_key;
  const std::string_view tail =
      api_key.size() > 2 * kShownTail ? api_key.substr(api_key.size() - kShownTail) : "";
  return {{"tenant", key.tenant_id},
          {"deployment", key.deployment},
          {"last4", tail},
          {"fingerprint", Fingerprint(api_key)},
          {"data_key_id", key.data_key_id},
          {"updated_at", key.updated_at}};
}

// A header value's bytes: visible ASCII, no space (it is sent as a header: no CR or LF).
bool ValidApiKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxApiKeyBytes) return false;
  for (char c : key) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

bool KnownDeployment(const config::Config& config, std::string_view name) {
  for (const config::ModelRoute& model : config.models) {
    for (const config::Deployment& d : model.deployments) {
      if (d.name == name) return true;
    }
  }
  return false;
}

std::optional<int64_t> IntParam(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Answer ListProviderKeys(Service& service, const AdminCall& call) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  const governance::TenantEntry* tenant = snapshot->FindTenant(call.Param("id"));
  if (tenant == nullptr) co_return NoSuch("tenant", call.Param("id"));
  json::array data;
  for (const ProviderKey& key : tenant->provider_keys) data.push_back(KeyJson(key));
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer PutProviderKey(Service& service, const AdminCall& call) {
  const std::string tenant(call.Param("id"));
  const std::string deployment(call.Param("deployment"));
  if (service.cell().Load()->FindTenant(tenant) == nullptr) co_return NoSuch("tenant", tenant);
  if (!KnownDeployment(service.config(), deployment)) co_return NoSuch("deployment", deployment);
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(), {"api_key"});
  std::optional<std::string> api_key = body.Text("api_key", true);
  if (body.error) co_return *body.error;
  if (!ValidApiKey(*api_key)) {
    co_return Bad("api_key must be 1-4096 visible ASCII characters (no spaces)", "api_key");
  }
  // Named before the co_await (GCC 12: no temporaries in an awaited call's arguments).
  ProviderKey key{tenant, deployment, std::move(*api_key), "", 0};
  Result<ProviderKey> stored = co_await service.PutProviderKey(std::move(key));
  if (!stored.ok()) {
    if (stored.error().code == ErrorCode::kNotFound) co_return NoSuch("tenant", tenant);
    co_return stored.error();
  }
  co_return JsonAnswer(200, KeyJson(stored.value()));
}

Answer DeleteProviderKey(Service& service, const AdminCall& call) {
  const std::string tenant(call.Param("id"));
  const std::string deployment(call.Param("deployment"));
  if (service.cell().Load()->FindTenant(tenant) == nullptr) co_return NoSuch("tenant", tenant);
  Result<ProviderKey> removed = co_await service.DeleteProviderKey(tenant, deployment);
  if (!removed.ok()) {
    if (removed.error().code == ErrorCode::kNotFound) co_return NoSuch("provider key", deployment);
    co_return removed.error();
  }
  co_return JsonAnswer(200, KeyJson(removed.value()));
}

Answer RotateProviderKeys(Service& service, const AdminCall&) {
  Result<int64_t> resealed = co_await service.RotateProviderKeys();
  if (!resealed.ok()) co_return resealed.error();
  co_return JsonAnswer(
      200, json::object{{"resealed", resealed.value()},
                        {"data_key_id", service.has_data_keys() ? json::value(service.data_key_id())
                                                                : json::value(nullptr)}});
}

Answer ListAudit(Service& service, const AdminCall& call) {
  control::AuditQuery query;
  query.tenant_id = call.Query("tenant");
  query.token_id = call.Query("token");
  query.limit = kDefaultAuditPage;
  if (!call.Query("cursor").empty()) {
    std::optional<int64_t> cursor = IntParam(call.Query("cursor"));
    if (!cursor) co_return Bad("cursor must be a non-negative integer", "cursor");
    query.before_id = *cursor;
  }
  if (!call.Query("limit").empty()) {
    std::optional<int64_t> limit = IntParam(call.Query("limit"));
    if (!limit || *limit < 1 || *limit > kMaxAuditPage) {
      co_return Bad("limit must be an integer from 1 to 1000", "limit");
    }
    query.limit = *limit;
  }
  const int64_t limit = query.limit;
  Result<std::vector<control::AuditRow>> rows = co_await service.Audit(std::move(query));
  if (!rows.ok()) co_return rows.error();
  json::array data;
  for (const control::AuditRow& row : rows.value()) {
    data.push_back(json::object{{"id", row.id},
                                {"at_ms", row.at_ms},
                                {"token", row.token_id},
                                {"tenant", row.tenant_id},
                                {"method", row.method},
                                {"route", row.route},
                                {"object", row.object},
                                {"status", row.status}});
  }
  json::value next = nullptr;
  if (static_cast<int64_t>(rows->size()) == limit && !rows->empty()) next = rows->back().id;
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}, {"next_cursor", next}});
}

}  // namespace turnpike::doors::admin
