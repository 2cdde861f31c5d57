// The governance resources' routes: the admin API's table (admin_api.h documents it).
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace {
using core::AdminRoute;
using core::TenantFrom;
using Verb = core::Verb;
using Handler = Answer (*)(Service&, const AdminCall&);

AdminRoute Route(std::string pattern, Verb method, TenantFrom tenant, Service& service,
                 Handler handler) {
  // A plain lambda (no coroutine): the handler's coroutine gets the service as a parameter.
  return {
      std::move(pattern), {method}, std::move(tenant), [&service, handler](const AdminCall& call) {
        return handler(service, call);
      }};
}

}  // namespace

std::vector<core::AdminRoute> GovernanceRoutes(Service& service) {
  const TenantFrom kOperator = TenantFrom::None();
  constexpr std::string_view kV1 = "/admin/v1/";
  auto at = [&](std::string_view path) { return std::string(kV1) + std::string(path); };
  std::vector<AdminRoute> routes;
  routes.push_back(Route(at("plans"), Verb::get, kOperator, service, ListPlans));
  routes.push_back(Route(at("plans/{id}"), Verb::put, kOperator, service, PutPlan));
  routes.push_back(Route(at("tenants"), Verb::get, kOperator, service, ListTenants));
  routes.push_back(Route(at("tenants"), Verb::post, kOperator, service, CreateTenant));
  routes.push_back(
      Route(at("tenants/{id}"), Verb::get, TenantFrom::Path("id"), service, GetTenant));
  // A tenant's plan and status are the operator's: its own admin token may not change them.
  routes.push_back(Route(at("tenants/{id}"), Verb::patch, kOperator, service, UpdateTenant));
  routes.push_back(Route(at("keys"), Verb::get, TenantFrom::Query("tenant"), service, ListKeys));
  routes.push_back(Route(at("keys"), Verb::post, TenantFrom::Body("tenant"), service, CreateKey));
  // A key's tenant is the key's own, read from the published snapshot.
  const TenantFrom key_owner =
      TenantFrom::OwnerOf("id", "key", [&service](std::string_view id) -> std::string {
        const governance::SnapshotPtr snapshot = service.cell().Load();
        const governance::KeyEntry* key = FindVirtualKey(*snapshot, id);
        return key == nullptr ? std::string() : key->key.tenant_id;
      });
  routes.push_back(Route(at("keys/{id}"), Verb::get, key_owner, service, GetKey));
  routes.push_back(Route(at("keys/{id}/revoke"), Verb::post, key_owner, service, RevokeKey));
  routes.push_back(Route(at("keys/{id}"), Verb::delete_, key_owner, service, DeleteKey));
  // A tenant's admin tokens are the operator's to give and take.
  routes.push_back(
      Route(at("tenants/{id}/admin-tokens"), Verb::get, kOperator, service, ListAdminTokens));
  routes.push_back(
      Route(at("tenants/{id}/admin-tokens"), Verb::post, kOperator, service, CreateAdminToken));
  routes.push_back(Route(at("tenants/{id}/admin-tokens/{token_id}"), Verb::delete_, kOperator,
                         service, RevokeAdminToken));
  routes.push_back(Route(at("prices"), Verb::get, kOperator, service, ListPrices));
  routes.push_back(Route(at("prices/{model}"), Verb::put, kOperator, service, PutPrice));
  routes.push_back(Route(at("prices/{model}"), Verb::delete_, kOperator, service, DeletePrice));
  routes.push_back(Route(at("spend"), Verb::get, TenantFrom::Query("tenant"), service, Spend));
  routes.push_back(
      Route(at("spend/daily"), Verb::get, TenantFrom::Query("tenant"), service, DailySpend));
  routes.push_back(Route(at("calls"), Verb::get, TenantFrom::Query("tenant"), service, Calls));
  routes.push_back(Route(at("reconcile"), Verb::post, kOperator, service, Reconcile));
  // A tenant's own provider keys are its admin's to manage; rotation is the operator's.
  const TenantFrom tenant_path = TenantFrom::Path("id");
  routes.push_back(
      Route(at("tenants/{id}/provider-keys"), Verb::get, tenant_path, service, ListProviderKeys));
  routes.push_back(Route(at("tenants/{id}/provider-keys/{deployment}"), Verb::put, tenant_path,
                         service, PutProviderKey));
  routes.push_back(Route(at("tenants/{id}/provider-keys/{deployment}"), Verb::delete_, tenant_path,
                         service, DeleteProviderKey));
  routes.push_back(
      Route(at("provider-keys/rotate"), Verb::post, kOperator, service, RotateProviderKeys));
  routes.push_back(Route(at("audit"), Verb::get, TenantFrom::Query("tenant"), service, ListAudit));
  return routes;
}

}  // namespace turnpike::doors::admin
