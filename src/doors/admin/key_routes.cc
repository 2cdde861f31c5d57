#include <boost/json/object.hpp>

#include "doors/admin/body_reader.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
using governance::Key;

namespace {

json::object KeyJson(const Key& k) {
  return {{"id", k.public_id},
          {"tenant", k.tenant_id},
          {"name", k.name},
          {"status", k.status == governance::KeyStatus::kRevoked ? "revoked" : "active"},
          {"expires_at", k.expires_at == governance::kNeverExpires ? json::value(nullptr)
                                                                   : json::value(k.expires_at)},
          {"monthly_budget_usd", OptionalUsd(k.monthly_budget_micros)},
          {"rpm", OptionalInt(k.rpm)},
          {"tpm", OptionalInt(k.tpm)},
          {"allowed_models", Strings(k.allowed_models)},
          {"created_at", k.created_at},
          {"cache", !k.cache_off}};
}

json::object PriceJson(const control::PriceInfo& p) {
  return {{"model", p.model},
          {"input", Usd(p.price.input_micros_per_mtok)},
          {"output", Usd(p.price.output_micros_per_mtok)},
          {"cached_input", Usd(p.price.cached_input_micros_per_mtok)},
          {"cache_write", Usd(p.price.cache_write())},
          {"reasoning", Usd(p.price.reasoning())},
          {"max_output_tokens", p.price.max_output_tokens},
          {"source", control::PriceSourceName(p.source)}};
}

}  // namespace

const governance::KeyEntry* FindVirtualKey(const governance::GovernanceSnapshot& snapshot,
                                           std::string_view id) {
  const governance::KeyEntry* entry = snapshot.FindKey(id);
  return entry != nullptr && entry->key.kind == governance::KeyKind::kVirtual ? entry : nullptr;
}

Answer ListKeys(Service& service, const AdminCall& call) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  const std::string_view tenant = call.Query("tenant");
  json::array data;
  for (const auto& entry : snapshot->keys()) {
    if (entry.key.kind != governance::KeyKind::kVirtual) continue;  // admin tokens: their own API
    if (tenant.empty() || entry.key.tenant_id == tenant) data.push_back(KeyJson(entry.key));
  }
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer CreateKey(Service& service, const AdminCall& call) {
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(), {"tenant", "name", "expires_at", "monthly_budget_usd", "rpm", "tpm",
                             "allowed_models", "cache"});
  Key key;
  std::optional<std::string> tenant = body.Text("tenant", true);
  key.name = body.Text("name", false).value_or("");
  std::optional<int64_t> expires = body.Int("expires_at", 1, int64_t{1} << 40);
  key.monthly_budget_micros = body.Usd("monthly_budget_usd");
  key.rpm = body.Int("rpm", 1, governance::kMaxRateLimit);
  key.tpm = body.Int("tpm", 1, governance::kMaxRateLimit);
  key.allowed_models = body.Models("allowed_models");
  key.cache_off = !body.Bool("cache").value_or(true);
  if (body.error) co_return *body.error;
  Result<std::string> idempotency_key = IdempotencyKey(call);
  if (!idempotency_key.ok()) co_return idempotency_key.error();
  key.tenant_id = *tenant;
  key.expires_at = expires.value_or(governance::kNeverExpires);
  Result<control::CreatedKey> created =
      co_await service.CreateKey(std::move(key), std::move(idempotency_key.value()));
  if (!created.ok()) co_return created.error();
  json::object out = KeyJson(created->key);
  out["key"] = created->secret_key;
  co_return JsonAnswer(201, out);
}

Answer GetKey(Service& service, const AdminCall& call) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  const std::string id(call.Param("id"));
  const governance::KeyEntry* entry = FindVirtualKey(*snapshot, id);
  if (entry == nullptr) co_return NoSuch("key", id);
  co_return JsonAnswer(200, KeyJson(entry->key));
}

Answer RevokeKey(Service& service, const AdminCall& call) {
  const std::string id(call.Param("id"));
  if (FindVirtualKey(*service.cell().Load(), id) == nullptr) co_return NoSuch("key", id);
  Result<Key> revoked = co_await service.RevokeKey(id);
  if (!revoked.ok()) co_return revoked.error();
  co_return JsonAnswer(200, KeyJson(revoked.value()));
}

Answer DeleteKey(Service& service, const AdminCall& call) {
  const std::string id(call.Param("id"));
  if (FindVirtualKey(*service.cell().Load(), id) == nullptr) co_return NoSuch("key", id);
  Result<Key> deleted = co_await service.DeleteKey(id);
  if (!deleted.ok()) co_return deleted.error();
  json::object out = KeyJson(deleted.value());
  out["deleted"] = true;
  co_return JsonAnswer(200, out);
}

Answer ListPrices(Service& service, const AdminCall&) {
  Result<std::vector<control::PriceInfo>> prices = co_await service.Prices();
  if (!prices.ok()) co_return prices.error();
  json::array data;
  for (const control::PriceInfo& p : prices.value()) data.push_back(PriceJson(p));
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer DeletePrice(Service& service, const AdminCall& call) {
  Result<control::PriceInfo> now = co_await service.DeletePrice(std::string(call.Param("model")));
  if (!now.ok()) co_return now.error();
  co_return JsonAnswer(200, PriceJson(now.value()));
}

Answer PutPrice(Service& service, const AdminCall& call) {
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(),
            {"input", "output", "cached_input", "cache_write", "reasoning", "max_output_tokens"});
  store::PriceOverride price;
  price.model = std::string(call.Param("model"));
  std::optional<int64_t> input = body.Usd("input", true);
  std::optional<int64_t> output = body.Usd("output", true);
  std::optional<int64_t> cached = body.Usd("cached_input");
  std::optional<int64_t> cache_write = body.Usd("cache_write");
  std::optional<int64_t> reasoning = body.Usd("reasoning");
  std::optional<int64_t> max_output = body.Int("max_output_tokens", 1, 100'000'000, true);
  if (body.error) co_return *body.error;
  price.price = {*input,
                 *output,
                 cached.value_or(*input),
                 *max_output,
                 cache_write.value_or(*input),
                 reasoning.value_or(*output)};
  Result<control::PriceInfo> saved = co_await service.PutPrice(std::move(price));
  if (!saved.ok()) co_return saved.error();
  co_return JsonAnswer(200, PriceJson(saved.value()));
}

}  // namespace turnpike::doors::admin
