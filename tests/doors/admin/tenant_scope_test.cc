// The one place an admin request's tenant is found and permitted (tenant_scope.h), and what
// each governance route declares: its tenant from the path, the query, the body, an object's
// owner, or none.
#include "doors/admin/tenant_scope.h"

#include <gtest/gtest.h>

#include <map>

#include "admin_fixture.h"
#include "doors/admin/routes.h"

namespace turnpike::doors::admin {
namespace {

using core::AdminCall;
using core::TenantFrom;
using Where = TenantFrom::Where;

AdminCall MakeCall(std::string body = {}) {
  static std::string kept;
  kept = std::move(body);
  AdminCall call;
  call.params = {{"id", "acme"}};
  call.query = {{"month", "2026-01"}, {"tenant", "beta"}};
  call.body = kept;
  return call;
}

TEST(TenantScopeTest, TheTenantIsReadWhereTheRouteDeclaresIt) {
  EXPECT_EQ(ResolveTenant(TenantFrom::None(), MakeCall()), "");
  EXPECT_EQ(ResolveTenant(TenantFrom::Path("id"), MakeCall()), "acme");
  EXPECT_EQ(ResolveTenant(TenantFrom::Query("tenant"), MakeCall()), "beta");
  EXPECT_EQ(ResolveTenant(TenantFrom::Query("tenant"), AdminCall{}), "") << "every tenant";
  EXPECT_EQ(ResolveTenant(TenantFrom::Body("tenant"), MakeCall(R"({"tenant": "gamma"})")), "gamma");
  // Absent, not a string, not JSON: nothing (the handler reports the field itself).
  EXPECT_EQ(ResolveTenant(TenantFrom::Body("tenant"), MakeCall(R"({"name": "x"})")), "");
  EXPECT_EQ(ResolveTenant(TenantFrom::Body("tenant"), MakeCall(R"({"tenant": 5})")), "");
  EXPECT_EQ(ResolveTenant(TenantFrom::Body("tenant"), MakeCall("{nope")), "");
  EXPECT_EQ(ResolveTenant(TenantFrom::Body("tenant"), MakeCall("[1]")), "");
}

// Permit on a call whose tenant ResolveTenant found.
Status PermitCall(const AdminPrincipal& principal, const TenantFrom& from, AdminCall& call) {
  call.tenant = ResolveTenant(from, call);
  return Permit(principal, from, call);
}

TenantFrom KeyOwner() {
  return TenantFrom::OwnerOf("id", "key", [](std::string_view id) -> std::string {
    if (id == "k-acme") return "acme";
    if (id == "k-beta") return "beta";
    return "";
  });
}

TEST(TenantScopeTest, AnOwnerRouteReadsTheObjectsTenant) {
  AdminCall call;
  call.params = {{"id", "k-beta"}};
  EXPECT_EQ(ResolveTenant(KeyOwner(), call), "beta");
  call.params = {{"id", "nope"}};
  EXPECT_EQ(ResolveTenant(KeyOwner(), call), "") << "no such object";
}

TEST(TenantScopeTest, TheOperatorMayActOnEveryRoute) {
  const AdminPrincipal op;
  for (const TenantFrom& from :
       {TenantFrom::None(), TenantFrom::Path("id"), TenantFrom::Query("tenant"),
        TenantFrom::Body("tenant"), KeyOwner()}) {
    AdminCall call = MakeCall();
    EXPECT_TRUE(PermitCall(op, from, call).ok());
  }
  AdminCall every;
  EXPECT_TRUE(PermitCall(op, TenantFrom::Query("tenant"), every).ok());
  EXPECT_EQ(every.Query("tenant"), "") << "the operator's list stays every tenant's";
}

TEST(TenantScopeTest, ATenantPrincipalMayActOnlyOnItsOwnTenant) {
  const AdminPrincipal acme{"acme"};
  AdminCall own = MakeCall(R"({"tenant": "acme"})");
  EXPECT_TRUE(PermitCall(acme, TenantFrom::Path("id"), own).ok());
  EXPECT_TRUE(PermitCall(acme, TenantFrom::Body("tenant"), own).ok());
  AdminCall own_key;
  own_key.params = {{"id", "k-acme"}};
  EXPECT_TRUE(PermitCall(acme, KeyOwner(), own_key).ok());
}

TEST(TenantScopeTest, AnotherTenantsObjectIsNotFoundWhetherItExistsOrNot) {
  const AdminPrincipal beta{"beta"};
  AdminCall other = MakeCall(R"({"tenant": "acme"})");  // path id "acme", query tenant "beta"
  for (const TenantFrom& from : {TenantFrom::Path("id"), TenantFrom::Body("tenant")}) {
    const Status refused = PermitCall(beta, from, other);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(refused.error().message, "No tenant acme.");
  }
  AdminCall missing = MakeCall();
  missing.params = {{"id", "ghost"}};
  const Status ghost = PermitCall(beta, TenantFrom::Path("id"), missing);
  ASSERT_FALSE(ghost.ok());
  EXPECT_EQ(ghost.error().message, "No tenant ghost.") << "the same answer as for one that exists";

  AdminCall key;
  key.params = {{"id", "k-acme"}};
  const Status theirs = PermitCall(beta, KeyOwner(), key);
  key.params = {{"id", "k-none"}};
  const Status nobodys = PermitCall(beta, KeyOwner(), key);
  ASSERT_FALSE(theirs.ok());
  ASSERT_FALSE(nobodys.ok());
  EXPECT_EQ(theirs.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(theirs.error().message, "No key k-acme.");
  EXPECT_EQ(nobodys.error().message, "No key k-none.");
}

TEST(TenantScopeTest, AListOfATenantPrincipalIsItsOwn) {
  const AdminPrincipal acme{"acme"};
  AdminCall every;
  every.query = {{"month", "2026-01"}};
  ASSERT_TRUE(PermitCall(acme, TenantFrom::Query("tenant"), every).ok());
  EXPECT_EQ(every.Query("tenant"), "acme");
  EXPECT_EQ(every.tenant, "acme");
  AdminCall other = MakeCall();  // ?tenant=beta
  const Status refused = PermitCall(acme, TenantFrom::Query("tenant"), other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotFound);
}

TEST(TenantScopeTest, ATenantPrincipalMustNameItsTenantInABodyAndCannotUseOperatorRoutes) {
  const AdminPrincipal acme{"acme"};
  AdminCall unnamed = MakeCall(R"({"name": "x"})");
  const Status missing = PermitCall(acme, TenantFrom::Body("tenant"), unnamed);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(missing.error().param, "tenant");
  AdminCall call = MakeCall();
  const Status op_only = PermitCall(acme, TenantFrom::None(), call);
  ASSERT_FALSE(op_only.ok());
  EXPECT_EQ(op_only.error().code, ErrorCode::kForbidden);
}

using testing::AdminDoorTest;

TEST_F(AdminDoorTest, EveryGovernanceRouteDeclaresWhereItsTenantIs) {
  const std::vector<core::AdminRoute> routes = GovernanceRoutes(*service_);
  std::map<std::string, std::pair<Where, std::string>> declared;
  for (const core::AdminRoute& r : routes) {
    for (core::Verb v : {core::Verb::get, core::Verb::post, core::Verb::put, core::Verb::patch,
                         core::Verb::delete_}) {
      if (!r.methods.Has(v)) continue;
      declared[std::string(boost::beast::http::to_string(v)) + " " + r.pattern] = {r.tenant.where,
                                                                                   r.tenant.name};
    }
  }
  const std::map<std::string, std::pair<Where, std::string>> expected = {
      {"GET /admin/v1/plans", {Where::kNone, ""}},
      {"PUT /admin/v1/plans/{id}", {Where::kNone, ""}},
      {"GET /admin/v1/tenants", {Where::kNone, ""}},
      {"POST /admin/v1/tenants", {Where::kNone, ""}},
      {"GET /admin/v1/tenants/{id}", {Where::kPath, "id"}},
      {"PATCH /admin/v1/tenants/{id}", {Where::kNone, ""}},
      {"GET /admin/v1/keys", {Where::kQuery, "tenant"}},
      {"POST /admin/v1/keys", {Where::kBody, "tenant"}},
      {"GET /admin/v1/keys/{id}", {Where::kOwner, "id"}},
      {"POST /admin/v1/keys/{id}/revoke", {Where::kOwner, "id"}},
      {"DELETE /admin/v1/keys/{id}", {Where::kOwner, "id"}},
      {"GET /admin/v1/tenants/{id}/admin-tokens", {Where::kNone, ""}},
      {"POST /admin/v1/tenants/{id}/admin-tokens", {Where::kNone, ""}},
      {"DELETE /admin/v1/tenants/{id}/admin-tokens/{token_id}", {Where::kNone, ""}},
      {"GET /admin/v1/prices", {Where::kNone, ""}},
      {"PUT /admin/v1/prices/{model}", {Where::kNone, ""}},
      {"DELETE /admin/v1/prices/{model}", {Where::kNone, ""}},
      {"GET /admin/v1/spend", {Where::kQuery, "tenant"}},
      {"GET /admin/v1/spend/daily", {Where::kQuery, "tenant"}},
      {"GET /admin/v1/calls", {Where::kQuery, "tenant"}},
      {"POST /admin/v1/reconcile", {Where::kNone, ""}},
      {"GET /admin/v1/tenants/{id}/provider-keys", {Where::kPath, "id"}},
      {"PUT /admin/v1/tenants/{id}/provider-keys/{deployment}", {Where::kPath, "id"}},
      {"DELETE /admin/v1/tenants/{id}/provider-keys/{deployment}", {Where::kPath, "id"}},
      {"POST /admin/v1/provider-keys/rotate", {Where::kNone, ""}},
      {"GET /admin/v1/audit", {Where::kQuery, "tenant"}},
  };
  EXPECT_EQ(declared, expected);
  EXPECT_EQ(routes.size(), expected.size()) << "one method per route";
}

}  // namespace
}  // namespace turnpike::doors::admin
