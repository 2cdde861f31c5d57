// The console's session cookie and CSRF token (doors/admin/console_session.h), and the admin
// door's use of them: a cookie instead of a bearer token, a CSRF token on every cookie write, a
// tenant's session ended by its token's revocation.
#include "doors/admin/console_session.h"

#include "admin_fixture.h"
#include "common/clock.h"

namespace turnpike::doors::admin::testing {
namespace {

using core::Verb;
constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kHour = 3600;

TEST(ConsoleSessionTest, AnIssuedCookieVerifiesToItsIdentity) {
  const ConsoleSessions sessions("admin-secret", kHour);
  const ConsoleIdentity op{"", "", kNow + kHour};
  const ConsoleIdentity tenant{"acme", "abcdefghijkl", kNow + kHour};
  const std::string op_value = sessions.Issue(op);
  const std::string tenant_value = sessions.Issue(tenant);
  ASSERT_FALSE(op_value.empty());
  EXPECT_EQ(op_value.find("admin-secret"), std::string::npos) << "the token is never in it";
  EXPECT_EQ(sessions.Verify(op_value, kNow), op);
  EXPECT_EQ(sessions.Verify(tenant_value, kNow), tenant);
}

TEST(ConsoleSessionTest, ATamperedExpiredOrForeignCookieIsRefused) {
  const ConsoleSessions sessions("admin-secret", kHour);
  const std::string value = sessions.Issue({"acme", "abcdefghijkl", kNow + kHour});
  std::string other_tenant = value;
  other_tenant.replace(other_tenant.find("acme"), 4, "evil");
  EXPECT_FALSE(sessions.Verify(other_tenant, kNow));
  std::string later = value;
  later.replace(later.find(std::to_string(kNow + kHour)), 10, std::to_string(kNow + 9 * kHour));
  EXPECT_FALSE(sessions.Verify(later, kNow)) << "a longer expiry breaks the MAC";
  EXPECT_FALSE(sessions.Verify(value, kNow + kHour)) << "expired at its second";
  EXPECT_TRUE(sessions.Verify(value, kNow + kHour - 1));
  const ConsoleSessions other_token("another-secret", kHour);
  EXPECT_FALSE(other_token.Verify(value, kNow)) << "a replica with another token refuses it";
  const ConsoleSessions same_token("admin-secret", kHour);
  EXPECT_TRUE(same_token.Verify(value, kNow)) << "a replica with the same token accepts it";
  EXPECT_FALSE(sessions.Verify("", kNow));
  EXPECT_FALSE(sessions.Verify("v1:::1:", kNow));
  EXPECT_FALSE(sessions.Verify(value.substr(0, value.size() - 1), kNow));
}

TEST(ConsoleSessionTest, NoSessionWithoutATokenOrWithABadId) {
  const ConsoleSessions off("", kHour);
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.Issue({"", "", kNow + kHour}), "");
  const ConsoleSessions sessions("admin-secret", kHour);
  EXPECT_EQ(sessions.Issue({"ac:me", "abcdefghijkl", kNow + kHour}), "");
  EXPECT_EQ(sessions.Issue({"acme", "abc;def", kNow + kHour}), "");
}

TEST(ConsoleSessionTest, TheCsrfTokenBelongsToOneSession) {
  const ConsoleSessions sessions("admin-secret", kHour);
  const std::string a = sessions.Issue({"", "", kNow + kHour});
  const std::string b = sessions.Issue({"", "", kNow + 2 * kHour});
  const std::string csrf = sessions.CsrfToken(a);
  EXPECT_EQ(csrf.size(), 64u);
  EXPECT_TRUE(sessions.CsrfMatches(a, csrf));
  EXPECT_FALSE(sessions.CsrfMatches(b, csrf));
  EXPECT_FALSE(sessions.CsrfMatches(a, ""));
  EXPECT_FALSE(sessions.CsrfMatches(a, a)) << "the cookie itself is not its CSRF token";
  EXPECT_FALSE(ConsoleSessions("another-secret", kHour).CsrfMatches(a, csrf));
}

TEST(ConsoleSessionTest, CookieValueFindsItsName) {
  EXPECT_EQ(CookieValue("a=1; tp_session=v1:x; b=2", "tp_session"), "v1:x");
  EXPECT_EQ(CookieValue("tp_session=\"q\"", "tp_session"), "q");
  EXPECT_EQ(CookieValue("xtp_session=1; tp_sessionx=2", "tp_session"), "");
  EXPECT_EQ(CookieValue("", "tp_session"), "");
}

class ConsoleCookieTest : public AdminDoorTest {
 protected:
  std::string Cookie(const ConsoleIdentity& who) const {
    return std::string(kSessionCookie) + "=" + sessions_.Issue(who);
  }
};

TEST_F(ConsoleCookieTest, TheCookieReadsAndWritesOnlyWithItsCsrfToken) {
  const int64_t expiry = UnixSeconds() + kHour;
  const std::string value = sessions_.Issue({"", "", expiry});
  const std::string cookie = std::string(kSessionCookie) + "=" + value;
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/tenants", "", {{"cookie", cookie}}).status, 200u);
  const std::string body = R"({"id": "beta", "name": "Beta", "plan": "basic"})";
  Answered a = CallWith(Verb::post, "/admin/v1/tenants", body, {{"cookie", cookie}});
  EXPECT_EQ(a.status, 403u);
  EXPECT_EQ(a.type(), "forbidden") << boost::json::serialize(a.body);
  a = CallWith(Verb::post, "/admin/v1/tenants", body,
               {{"cookie", cookie}, {"x-csrf-token", "0123"}});
  EXPECT_EQ(a.status, 403u);
  const std::string csrf = sessions_.CsrfToken(value);
  a = CallWith(Verb::post, "/admin/v1/tenants", body, {{"cookie", cookie}, {"x-csrf-token", csrf}});
  EXPECT_EQ(a.status, 201u) << boost::json::serialize(a.body);
  // An expired or forged cookie is a 401, as a wrong token is.
  const std::string expired = Cookie({"", "", UnixSeconds() - 1});
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/tenants", "", {{"cookie", expired}}).status, 401u);
  // A bearer token's write needs no CSRF token, cookie or not.
  a = Call(Verb::post, "/admin/v1/tenants", R"({"id": "gamma", "name": "G", "plan": "basic"})");
  EXPECT_EQ(a.status, 201u) << boost::json::serialize(a.body);
}

TEST_F(ConsoleCookieTest, ATenantSessionIsScopedAndEndsWithItsTokensRevocation) {
  Answered made = Call(Verb::post, "/admin/v1/tenants/acme/admin-tokens", R"({"name": "ui"})");
  ASSERT_EQ(made.status, 201u) << boost::json::serialize(made.body);
  const std::string token_id(made.body.at("id").as_string());
  const std::string cookie = Cookie({"acme", token_id, UnixSeconds() + kHour});
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/keys", "", {{"cookie", cookie}}).status, 200u);
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/plans", "", {{"cookie", cookie}}).status, 403u)
      << "a tenant's session is its token: the operator's routes are refused";
  const std::string forged = Cookie({"other", token_id, UnixSeconds() + kHour});
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/keys", "", {{"cookie", forged}}).status, 401u);
  Answered revoked = Call(Verb::delete_, "/admin/v1/tenants/acme/admin-tokens/" + token_id);
  ASSERT_EQ(revoked.status, 200u) << boost::json::serialize(revoked.body);
  EXPECT_EQ(CallWith(Verb::get, "/admin/v1/keys", "", {{"cookie", cookie}}).status, 401u);
}

}  // namespace
}  // namespace turnpike::doors::admin::testing
