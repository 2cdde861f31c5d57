// The admin door through the router and the dispatcher, as a worker runs it: every resource's
// routes, the token before 404 and 405, 403 when the API is off, 400 naming the field, the
// answer through WorkerCore::Respond (Server-Timing, accounted status), percent-decoded
// parameters, and a resource another door adds through core/admin_route.h.
#include "doors/admin/admin_api.h"

#include <gtest/gtest.h>

#include "admin_fixture.h"
#include "governance/keys.h"

namespace turnpike::doors::admin::testing {
namespace {

using Verb = core::Verb;
namespace json = boost::json;

size_t DataSize(const Answered& a) { return a.body.at("data").as_array().size(); }

TEST_F(AdminDoorTest, PlansAndTenantsAreRoutedByPathAndMethod) {
  Answered a = Call(Verb::get, "/admin/v1/plans");
  ASSERT_EQ(a.status, 200u);
  EXPECT_EQ(DataSize(a), 1u);
  EXPECT_EQ(a.content_type, "application/json");
  a = Call(Verb::put, "/admin/v1/plans/pro", R"({"rpm": 10})");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("id"), "pro");
  EXPECT_EQ(a.body.at("rpm"), 10);
  EXPECT_TRUE(a.body.at("budget_alerts").is_null());  // the gateway's thresholds
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/plans")), 2u);

  a = Call(Verb::post, "/admin/v1/tenants", R"({"id": "beta", "plan": "pro"})");
  ASSERT_EQ(a.status, 201u) << json::serialize(a.body);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/tenants")), 2u);
  a = Call(Verb::get, "/admin/v1/tenants/beta");
  ASSERT_EQ(a.status, 200u);
  EXPECT_EQ(a.body.at("plan"), "pro");
  a = Call(Verb::patch, "/admin/v1/tenants/beta", R"({"status": "suspended"})");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("status"), "suspended");
  EXPECT_EQ(engine_->fake_records().writes(), 3);
}

TEST_F(AdminDoorTest, KeysAreRoutedWithTheirQueryAndRevoke) {
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys")), 1u);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys?tenant=acme")), 1u);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys?tenant=other")), 0u);
  Answered a = Call(Verb::post, "/admin/v1/keys", R"({"tenant": "acme", "name": "ci"})");
  ASSERT_EQ(a.status, 201u) << json::serialize(a.body);
  EXPECT_TRUE(a.body.as_object().contains("key")) << "the secret, shown once";
  a = Call(Verb::get, std::string("/admin/v1/keys/") + kKeyId);
  ASSERT_EQ(a.status, 200u);
  EXPECT_EQ(a.body.at("status"), "active");
  a = Call(Verb::post, std::string("/admin/v1/keys/") + kKeyId + "/revoke");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("status"), "revoked");
}

TEST_F(AdminDoorTest, ACreateRetriedWithItsIdempotencyKeyMakesOneKey) {
  const std::string auth = std::string("Bearer ") + kToken;
  const auto create = [&](std::string_view tenant_body, std::string_view idempotency_key) {
    return CallWith(Verb::post, "/admin/v1/keys", std::string(tenant_body),
                    {{"authorization", auth}, {"idempotency-key", idempotency_key}});
  };
  Answered first = create(R"({"tenant": "acme", "name": "ci"})", "7d0c1a52-retry");
  ASSERT_EQ(first.status, 201u) << json::serialize(first.body);
  const std::string id(first.body.at("id").as_string());
  EXPECT_EQ(id, *governance::IdempotentPublicId(governance::kKeyPrefix, "acme", "7d0c1a52-retry"));

  // The retry (whatever its body) is refused, naming the key made first; no second key.
  Answered again = create(R"({"tenant": "acme", "name": "ci"})", "7d0c1a52-retry");
  EXPECT_EQ(again.status, 409u);
  EXPECT_EQ(again.field(), "Idempotency-Key");
  EXPECT_NE(json::serialize(again.body).find(id), std::string::npos) << json::serialize(again.body);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys?tenant=acme")), 2u);  // the fixture's + 1

  // Another Idempotency-Key, or none: another key.
  EXPECT_EQ(create(R"({"tenant": "acme"})", "7d0c1a52-other").status, 201u);
  EXPECT_EQ(Call(Verb::post, "/admin/v1/keys", R"({"tenant": "acme"})").status, 201u);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys?tenant=acme")), 4u);

  // Made by another replica (in the store, not yet in this one's records): the store's
  // primary key refuses the insert, and the answer is the same 409.
  const std::string elsewhere =
      *governance::IdempotentPublicId(governance::kKeyPrefix, "acme", "made-on-b");
  engine_->fake_records().ChangeBehindTheBack([&](store::GovernanceRows& rows) {
    governance::Key key;
    key.public_id = elsewhere;
    key.tenant_id = "acme";
    rows.keys.push_back(key);
  });
  Answered refused = create(R"({"tenant": "acme"})", "made-on-b");
  EXPECT_EQ(refused.status, 409u) << json::serialize(refused.body);
  EXPECT_NE(json::serialize(refused.body).find(elsewhere), std::string::npos);

  // An admin token's create honours it too, in its own id space.
  const auto token = [&](std::string_view idempotency_key) {
    return CallWith(Verb::post, "/admin/v1/tenants/acme/admin-tokens", "{}",
                    {{"authorization", auth}, {"idempotency-key", idempotency_key}});
  };
  EXPECT_EQ(token("7d0c1a52-retry").status, 201u);
  EXPECT_EQ(token("7d0c1a52-retry").status, 409u);

  // Not visible ASCII, or too long: a 400 naming the header.
  for (const std::string bad :
       {std::string("has space"), std::string(256, 'k'), std::string("\x01")}) {
    Answered a = create(R"({"tenant": "acme"})", bad);
    EXPECT_EQ(a.status, 400u) << bad;
    EXPECT_EQ(a.field(), "Idempotency-Key");
  }
  EXPECT_EQ(create(R"({"tenant": "acme"})", std::string(255, 'k')).status, 201u);
}

TEST_F(AdminDoorTest, ADeletedKeyIsGoneFromTheStoreTheSnapshotAndTheList) {
  const int writes = engine_->fake_records().writes();
  Answered a = Call(Verb::delete_, std::string("/admin/v1/keys/") + kKeyId);
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("id"), kKeyId);
  EXPECT_EQ(a.body.at("deleted"), true);
  EXPECT_EQ(engine_->fake_records().writes(), writes + 1);
  EXPECT_EQ(DataSize(Call(Verb::get, "/admin/v1/keys")), 0u);
  EXPECT_EQ(Call(Verb::get, std::string("/admin/v1/keys/") + kKeyId).status, 404u);
  EXPECT_EQ(Call(Verb::delete_, std::string("/admin/v1/keys/") + kKeyId).status, 404u);
  EXPECT_EQ(engine_->fake_records().writes(), writes + 1);
}

TEST_F(AdminDoorTest, PricesSpendCallsAndReconcileAreRouted) {
  EXPECT_EQ(Call(Verb::get, "/admin/v1/prices").status, 200u);
  // A model name with a slash arrives percent-encoded in one segment and is decoded.
  Answered a = Call(Verb::put, "/admin/v1/prices/acme%2Fm1",
                    R"({"input": 1, "output": 2, "max_output_tokens": 100})");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("model"), "acme/m1");
  a = Call(Verb::delete_, "/admin/v1/prices/acme%2Fm1");
  EXPECT_NE(a.status, 405u);
  EXPECT_NE(a.status, 404u) << json::serialize(a.body);

  a = Call(Verb::get, "/admin/v1/spend?month=2026-01");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("month"), "2026-01");
  a = Call(Verb::get, "/admin/v1/spend?month=2026-13");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "month");
  a = Call(Verb::get, "/admin/v1/calls?limit=5");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_TRUE(a.body.at("next_cursor").is_null());
  a = Call(Verb::get, "/admin/v1/calls?limit=x");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "limit");
  a = Call(Verb::post, "/admin/v1/reconcile");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_TRUE(a.body.as_object().contains("drift_usd"));
}

TEST_F(AdminDoorTest, TheTokenIsCheckedBeforeTheMethodAndThePath) {
  // GET-only path, PUT without the token: 401, not the router's 405.
  Answered a = Call(Verb::put, "/admin/v1/plans", "{}", false);
  EXPECT_EQ(a.status, 401u);
  EXPECT_EQ(a.type(), "unauthorized");
  EXPECT_EQ(a.allow, "");
  EXPECT_EQ(Call(Verb::get, "/admin/v1/nothing", "", false).status, 401u);
  EXPECT_EQ(Call(Verb::delete_, "/admin/v1/tenants/acme", "", false).status, 401u);

  // With the token: the door's own 405 with Allow, and 404.
  a = Call(Verb::put, "/admin/v1/plans", "{}");
  EXPECT_EQ(a.status, 405u);
  EXPECT_EQ(a.allow, "GET");
  EXPECT_EQ(a.type(), "method_not_allowed");
  EXPECT_EQ(a.body.at("error").at("message"), "Use GET on this path.");
  a = Call(Verb::delete_, "/admin/v1/tenants/acme");
  EXPECT_EQ(a.status, 405u);
  EXPECT_EQ(a.allow, "GET, PATCH");
  EXPECT_EQ(Call(Verb::get, std::string("/admin/v1/keys/") + kKeyId + "/revoke").allow, "POST");
  a = Call(Verb::get, "/admin/v1/nothing?x=1");
  EXPECT_EQ(a.status, 404u);
  EXPECT_EQ(a.type(), "not_found");
  EXPECT_EQ(a.body.at("error").at("message"), "No admin endpoint /admin/v1/nothing?x=1.");
  EXPECT_EQ(Call(Verb::get, "/admin/v1/plans/p/extra").status, 404u);
  EXPECT_EQ(Call(Verb::get, "/admin/").status, 404u);
}

TEST_F(AdminDoorTest, AnAddressWithTooManyFailuresIsRefusedEvenWithTheToken) {
  for (int i = 0; i < AuthFailures::kMaxFailures; ++i) {
    EXPECT_EQ(Call(Verb::get, "/admin/v1/plans", "", false).status, 401u);
  }
  Answered refused = Call(Verb::get, "/admin/v1/plans");
  EXPECT_EQ(refused.status, 429u);
  EXPECT_EQ(refused.type(), "rate_limited");
  EXPECT_FALSE(refused.retry_after.empty());
  EXPECT_GE(std::stoi(refused.retry_after), 1);
  EXPECT_LE(std::stoi(refused.retry_after), 60);
}

TEST_F(AdminDoorTest, TheApiIsOffWithoutAToken) {
  token_.clear();
  Answered a = Call(Verb::get, "/admin/v1/plans");
  EXPECT_EQ(a.status, 403u);
  EXPECT_EQ(a.type(), "forbidden");
  EXPECT_EQ(Call(Verb::put, "/admin/v1/plans", "", false).status, 403u);
  EXPECT_EQ(Call(Verb::get, "/admin/v1/nothing").status, 403u);
}

TEST_F(AdminDoorTest, UnknownIdsAre404) {
  Answered a = Call(Verb::get, "/admin/v1/tenants/nope");
  EXPECT_EQ(a.status, 404u);
  EXPECT_EQ(a.body.at("error").at("message"), "No tenant nope.");
  EXPECT_EQ(Call(Verb::get, "/admin/v1/keys/nope").status, 404u);
  EXPECT_EQ(Call(Verb::post, "/admin/v1/keys/nope/revoke").status, 404u);
  EXPECT_EQ(Call(Verb::delete_, "/admin/v1/keys/nope").status, 404u);
  EXPECT_EQ(Call(Verb::patch, "/admin/v1/tenants/nope", R"({"name": "x"})").status, 404u);
}

TEST_F(AdminDoorTest, BadBodiesAre400NamingTheField) {
  Answered a = Call(Verb::post, "/admin/v1/keys", R"({"tenant": 5})");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.type(), "invalid_request");
  EXPECT_EQ(a.field(), "tenant");
  EXPECT_EQ(a.body.at("error").at("message"), "tenant must be a string");
  a = Call(Verb::post, "/admin/v1/keys", R"({"name": "no tenant"})");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "tenant");
  a = Call(Verb::put, "/admin/v1/plans/p", R"({"rpm": "many"})");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "rpm");
  a = Call(Verb::put, "/admin/v1/plans/p", R"({"colour": "red"})");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "colour");
  for (const char* alerts : {R"([0])", R"([1001])", R"([50.5])", R"("50")", R"({"a": 1})",
                             R"([1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17])"}) {
    a = Call(Verb::put, "/admin/v1/plans/p", std::string(R"({"budget_alerts": )") + alerts + "}");
    EXPECT_EQ(a.status, 400u) << alerts;
    EXPECT_EQ(a.field(), "budget_alerts") << alerts;
  }
  a = Call(Verb::put, "/admin/v1/plans/bad%20id", "{}");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "id");
  a = Call(Verb::post, "/admin/v1/tenants", "{not json");
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.field(), "");
  EXPECT_EQ(engine_->fake_records().writes(), 0);
}

TEST_F(AdminDoorTest, APlansBudgetAlertsAreSortedOnceEachAndNullIsTheGatewaysOwn) {
  Answered a = Call(Verb::put, "/admin/v1/plans/p", R"({"budget_alerts": [90, 25, 90, 1000]})");
  ASSERT_EQ(a.status, 200u) << json::serialize(a.body);
  EXPECT_EQ(a.body.at("budget_alerts"), json::parse("[25, 90, 1000]"));
  a = Call(Verb::put, "/admin/v1/plans/p", R"({"budget_alerts": []})");
  ASSERT_EQ(a.status, 200u);
  EXPECT_EQ(a.body.at("budget_alerts"), json::array());
  a = Call(Verb::put, "/admin/v1/plans/p", R"({"budget_alerts": null})");
  ASSERT_EQ(a.status, 200u);
  EXPECT_TRUE(a.body.at("budget_alerts").is_null());
}

TEST_F(AdminDoorTest, AnswersGoThroughTheCoreWithServerTimingAndTheirStatusCounted) {
  EXPECT_EQ(Call(Verb::get, "/admin/v1/plans").status, 200u);
  EXPECT_EQ(Call(Verb::put, "/admin/v1/plans", "", false).status, 401u);
  EXPECT_EQ(Call(Verb::put, "/admin/v1/plans").status, 405u);
  const Answered a = Call(Verb::get, "/admin/v1/nothing");
  EXPECT_NE(a.server_timing.find("parse;dur="), std::string::npos)
      << "Server-Timing on an error too: " << a.server_timing;
  EXPECT_EQ(Counted(200), 1u);
  EXPECT_EQ(Counted(401), 1u);
  EXPECT_EQ(Counted(405), 1u);
  EXPECT_EQ(Counted(404), 1u);
}

TEST_F(AdminDoorTest, AnotherDoorsResourceSharesTheTokenTheErrorsAndTheTenantScope) {
  Answered a = Call(Verb::get, "/admin/v1/widgets/t%2D1");
  ASSERT_EQ(a.status, 200u);
  EXPECT_EQ(a.body.at("tenant"), "t-1") << "resolved from the decoded path before the handler";
  EXPECT_NE(a.server_timing.find("route;dur="), std::string::npos) << a.server_timing;
  EXPECT_EQ(Call(Verb::get, "/admin/v1/widgets/t1", "", false).status, 401u);
  a = Call(Verb::post, "/admin/v1/widgets/t1");
  EXPECT_EQ(a.status, 405u);
  EXPECT_EQ(a.allow, "GET");
}

TEST(AdminResourcesTest, RoutesOutsideTheAdminPrefixOrWithoutMethodsAreRefused) {
  AdminResources resources;
  auto handler = [](const core::AdminCall& call) { return WidgetHandler(call); };
  EXPECT_THROW(resources.Add({{"/v1/widgets", {core::Verb::get}, {}, handler}}),
               std::invalid_argument);
  EXPECT_THROW(resources.Add({{"/admin/v1/widgets", {}, {}, handler}}), std::invalid_argument);
  EXPECT_THROW(resources.Add({{"/admin/v1/widgets", {core::Verb::get}, {}, nullptr}}),
               std::invalid_argument);
  resources.Add({{"/admin/v1/widgets", {core::Verb::get}, {}, handler}});
  const std::vector<core::RouteSpec> specs = resources.Routes();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].route, 0);
  EXPECT_EQ(specs[1].pattern, "/admin/**");
  EXPECT_EQ(resources.Find(specs[1].route), nullptr);
  EXPECT_NE(resources.Find(0), nullptr);
}

}  // namespace
}  // namespace turnpike::doors::admin::testing
