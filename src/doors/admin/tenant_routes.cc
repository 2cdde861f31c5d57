#include <algorithm>
#include <boost/json/object.hpp>
#include <cmath>

#include "doors/admin/body_reader.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace json = boost::json;
using governance::Plan;
using governance::Tenant;

namespace {

json::value CacheModeName(governance::CachePolicy::Mode mode) {
  switch (mode) {
    case governance::CachePolicy::Mode::kOn:
      return "on";
    case governance::CachePolicy::Mode::kOff:
      return "off";
    case governance::CachePolicy::Mode::kDefault:
      break;
  }
  return nullptr;  // the gateway's llm_cache.enabled
}

// The plan's LLM cache fields: "cache" "on" | "off" | null (the gateway's default),
// "cache_scope" "tenant" | "key", "cache_tool_calls", "cache_semantic" (a similarity threshold
// in (0, 1], kept to 4 decimals as semantic_bp; 0 or absent: exact only; doors/llm
// semantic_index.h for how to pick one).
void ReadCachePolicy(Body& body, governance::CachePolicy& policy) {
  if (std::optional<std::string> mode = body.Text("cache", false)) {
    if (*mode == "on") {
      policy.mode = governance::CachePolicy::Mode::kOn;
    } else if (*mode == "off") {
      policy.mode = governance::CachePolicy::Mode::kOff;
    } else if (*mode != "default") {
      body.Fail("must be \"on\", \"off\" or \"default\"", "cache");
    }
  }
  if (std::optional<std::string> scope = body.Text("cache_scope", false)) {
    if (*scope == "key") {
      policy.key_scope = true;
    } else if (*scope != "tenant") {
      body.Fail("must be \"tenant\" or \"key\"", "cache_scope");
    }
  }
  policy.tool_calls = body.Bool("cache_tool_calls").value_or(false);
  const boost::json::value* semantic = body.Find("cache_semantic");
  if (semantic == nullptr || semantic->is_null()) return;
  const double threshold = semantic->is_number() ? semantic->to_number<double>() : -1;
  if (!(threshold >= 0 && threshold <= 1)) {
    body.Fail("must be a similarity threshold in (0, 1], or 0 for exact lookups only",
              "cache_semantic");
    return;
  }
  policy.semantic_bp = static_cast<int32_t>(std::lround(threshold * 10000));
  if (threshold > 0 && policy.semantic_bp == 0) policy.semantic_bp = 1;
}

// "budget_alerts": the plan's own thresholds, whole percents of its monthly budget in
// [1, 1000], at most kMaxBudgetAlerts (kept sorted, each once; [] = none); null or absent: the
// gateway's webhooks.budget_alerts.
void ReadBudgetAlerts(Body& body, std::optional<std::vector<int>>& out) {
  const boost::json::value* list = body.Find("budget_alerts");
  if (list == nullptr || list->is_null()) return;
  constexpr const char* kShape = "must be a list of whole percents from 1 to 1000 (at most 16)";
  if (!list->is_array() || list->as_array().size() > governance::kMaxBudgetAlerts) {
    body.Fail(kShape, "budget_alerts");
    return;
  }
  std::vector<int> percents;
  for (const boost::json::value& item : list->as_array()) {
    if (!item.is_int64() || item.as_int64() < 1 ||
        item.as_int64() > governance::kMaxBudgetAlertPercent) {
      body.Fail(kShape, "budget_alerts");
      return;
    }
    percents.push_back(static_cast<int>(item.as_int64()));
  }
  std::sort(percents.begin(), percents.end());
  percents.erase(std::unique(percents.begin(), percents.end()), percents.end());
  out = std::move(percents);
}

json::value BudgetAlertsJson(const std::optional<std::vector<int>>& percents) {
  if (!percents) return nullptr;
  json::array out;
  for (const int p : *percents) out.push_back(p);
  return out;
}

json::object PlanJson(const Plan& p) {
  return {{"id", p.id},
          {"monthly_budget_usd", OptionalUsd(p.monthly_budget_micros)},
          {"rpm", OptionalInt(p.rpm)},
          {"tpm", OptionalInt(p.tpm)},
          {"allowed_models", Strings(p.allowed_models)},
          {"max_request_cost_usd", OptionalUsd(p.max_request_cost_micros)},
          {"search_query_price_usd", OptionalUsd(p.search_query_price_micros)},
          {"fail_open", p.fail_open},
          {"cache", CacheModeName(p.cache.mode)},
          {"cache_scope", p.cache.key_scope ? "key" : "tenant"},
          {"cache_tool_calls", p.cache.tool_calls},
          {"cache_semantic", p.cache.semantic_bp / 10000.0},
          {"budget_alerts", BudgetAlertsJson(p.budget_alerts)}};
}

json::object TenantJson(const Tenant& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"plan", t.plan_id},
          {"status", t.status == governance::TenantStatus::kSuspended ? "suspended" : "active"},
          {"log_bodies", t.log_bodies},
          {"created_at", t.created_at}};
}

Result<Plan> ReadPlan(std::string id, const json::object& object) {
  Body body(object, {"monthly_budget_usd", "rpm", "tpm", "allowed_models", "max_request_cost_usd",
                     "search_query_price_usd", "fail_open", "cache", "cache_scope",
                     "cache_tool_calls", "cache_semantic", "budget_alerts", "id"});
  Plan plan;
  plan.id = std::move(id);
  plan.monthly_budget_micros = body.Usd("monthly_budget_usd");
  plan.rpm = body.Int("rpm", 1, governance::kMaxRateLimit);
  plan.tpm = body.Int("tpm", 1, governance::kMaxRateLimit);
  plan.allowed_models = body.Models("allowed_models");
  plan.max_request_cost_micros = body.Usd("max_request_cost_usd");
  plan.search_query_price_micros = body.Usd("search_query_price_usd");
  plan.fail_open = body.Bool("fail_open").value_or(false);
  ReadCachePolicy(body, plan.cache);
  ReadBudgetAlerts(body, plan.budget_alerts);
  std::optional<std::string> body_id = body.Text("id", false);
  if (!body.error && body_id && *body_id != plan.id) {
    return Bad("id in the body differs from the path", "id");
  }
  if (body.error) return *body.error;
  return plan;
}

std::optional<governance::TenantStatus> ParseTenantStatus(const std::string& s) {
  if (s == "active") return governance::TenantStatus::kActive;
  if (s == "suspended") return governance::TenantStatus::kSuspended;
  return std::nullopt;
}

}  // namespace

Answer ListPlans(Service& service, const AdminCall&) {
  json::array data;
  for (const Plan& p : service.cell().Load()->plans()) data.push_back(PlanJson(p));
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer PutPlan(Service& service, const AdminCall& call) {
  const std::string id(call.Param("id"));
  if (!ValidId(id)) co_return Bad("plan ids are 1-64 of A-Z a-z 0-9 - _ .", "id");
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Result<Plan> plan = ReadPlan(id, object.value());
  if (!plan.ok()) co_return plan.error();
  Result<Plan> saved = co_await service.PutPlan(std::move(plan.value()));
  if (!saved.ok()) co_return saved.error();
  co_return JsonAnswer(200, PlanJson(saved.value()));
}

Answer ListTenants(Service& service, const AdminCall&) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  json::array data;
  for (const auto& entry : snapshot->tenants()) data.push_back(TenantJson(entry.tenant));
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}});
}

Answer CreateTenant(Service& service, const AdminCall& call) {
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(), {"id", "name", "plan", "log_bodies", "status"});
  Tenant tenant;
  std::optional<std::string> id = body.Text("id", true);
  std::optional<std::string> plan = body.Text("plan", true);
  std::optional<std::string> name = body.Text("name", false);
  std::optional<std::string> status = body.Text("status", false);
  tenant.log_bodies = body.Bool("log_bodies").value_or(false);
  if (body.error) co_return *body.error;
  if (!ValidId(*id)) co_return Bad("tenant ids are 1-64 of A-Z a-z 0-9 - _ .", "id");
  tenant.id = *id;
  tenant.plan_id = *plan;
  tenant.name = name.value_or(*id);
  if (status) {
    std::optional<governance::TenantStatus> parsed = ParseTenantStatus(*status);
    if (!parsed) co_return Bad("status must be active or suspended", "status");
    tenant.status = *parsed;
  }
  Result<Tenant> created = co_await service.CreateTenant(std::move(tenant));
  if (!created.ok()) co_return created.error();
  co_return JsonAnswer(201, TenantJson(created.value()));
}

Answer GetTenant(Service& service, const AdminCall& call) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  const std::string id(call.Param("id"));
  const governance::TenantEntry* entry = snapshot->FindTenant(id);
  if (entry == nullptr) co_return NoSuch("tenant", id);
  co_return JsonAnswer(200, TenantJson(entry->tenant));
}

Answer UpdateTenant(Service& service, const AdminCall& call) {
  Result<json::object> object = ParseObject(call.body);
  if (!object.ok()) co_return object.error();
  Body body(object.value(), {"name", "plan", "status", "log_bodies"});
  control::TenantPatch patch;
  patch.id = std::string(call.Param("id"));
  patch.name = body.Text("name", false);
  patch.plan_id = body.Text("plan", false);
  std::optional<std::string> status = body.Text("status", false);
  patch.log_bodies = body.Bool("log_bodies");
  if (body.error) co_return *body.error;
  if (status) {
    patch.status = ParseTenantStatus(*status);
    if (!patch.status) co_return Bad("status must be active or suspended", "status");
  }
  Result<Tenant> updated = co_await service.UpdateTenant(std::move(patch));
  if (!updated.ok()) co_return updated.error();
  co_return JsonAnswer(200, TenantJson(updated.value()));
}

}  // namespace turnpike::doors::admin
