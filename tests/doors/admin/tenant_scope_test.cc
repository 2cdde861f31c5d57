// The one place an admin request's tenant is found and permitted (tenant_scope.h), and what
// each governance route declares: its tenant from the path, the query, the body, or none.
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

TEST(TenantScopeTest, TheOperatorMayActOnEveryRoute) {
  const AdminPrincipal op;
  EXPECT_TRUE(Permit(op, TenantFrom::None(), "").ok());
  EXPECT_TRUE(Permit(op, TenantFrom::Path("id"), "acme").ok());
  EXPECT_TRUE(Permit(op, TenantFrom::Query("tenant"), "").ok());
}

TEST(TenantScopeTest, ATenantPrincipalMayActOnlyOnItsOwnTenant) {
  const AdminPrincipal acme{"acme"};
  EXPECT_TRUE(Permit(acme, TenantFrom::Path("id"), "acme").ok());
  EXPECT_TRUE(Permit(acme, TenantFrom::Body("tenant"), "acme").ok());
  const Status other = Permit(acme, TenantFrom::Path("id"), "beta");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kForbidden);
  EXPECT_EQ(other.error().param, "id");
  const Status every = Permit(acme, TenantFrom::Query("tenant"), "");
  ASSERT_FALSE(every.ok()) << "a query route must name its tenant";
  EXPECT_EQ(every.error().param, "tenant");
  const Status op_only = Permit(acme, TenantFrom::None(), "");
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
      {"PATCH /admin/v1/tenants/{id}", {Where::kPath, "id"}},
      {"GET /admin/v1/keys", {Where::kQuery, "tenant"}},
      {"POST /admin/v1/keys", {Where::kBody, "tenant"}},
      {"GET /admin/v1/keys/{id}", {Where::kNone, ""}},
      {"POST /admin/v1/keys/{id}/revoke", {Where::kNone, ""}},
      {"GET /admin/v1/prices", {Where::kNone, ""}},
      {"PUT /admin/v1/prices/{model}", {Where::kNone, ""}},
      {"DELETE /admin/v1/prices/{model}", {Where::kNone, ""}},
      {"GET /admin/v1/spend", {Where::kQuery, "tenant"}},
      {"GET /admin/v1/calls", {Where::kQuery, "tenant"}},
      {"POST /admin/v1/reconcile", {Where::kNone, ""}},
  };
  EXPECT_EQ(declared, expected);
  EXPECT_EQ(routes.size(), expected.size()) << "one method per route";
}

}  // namespace
}  // namespace turnpike::doors::admin
