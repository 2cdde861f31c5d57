#include "governance/authenticate.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace turnpike::governance {
namespace {

using testing::Fixture;
using testing::kNow;

class AuthenticateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = testing::MakeFixture();
    Result<SnapshotPtr> built =
        GovernanceSnapshot::Build(fixture_.data, nullptr, testing::TestCounters());
    ASSERT_TRUE(built.ok()) << built.error().message;
    snapshot_ = built.value();
  }

  ErrorCode FailureOf(std::string_view key, int64_t now = kNow) {
    Result<Principal> principal = Authenticate(*snapshot_, key, now);
    EXPECT_FALSE(principal.ok());
    return principal.ok() ? ErrorCode::kInternal : principal.error().code;
  }

  Fixture fixture_;
  SnapshotPtr snapshot_;
};

TEST_F(AuthenticateTest, ActiveKeyResolvesTenantKeyAndPlan) {
  Result<SecretVerifier> verifier = SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());
  Result<Principal> principal =
      Authenticate(*snapshot_, fixture_.active_key, kNow, verifier.value());
  ASSERT_TRUE(principal.ok()) << principal.error().message;
  EXPECT_EQ(principal->tenant->tenant.id, "acme");
  EXPECT_EQ(principal->plan->id, "pro");
  EXPECT_EQ(principal->key->key.public_id, ParseKey(fixture_.active_key)->public_id);
  EXPECT_EQ(principal->key->tenant, principal->tenant);
}

// A tenant's admin token and a virtual key are keys of two kinds: each is refused where the
// other is expected, as an unknown key (401), and an admin token resolves its tenant.
TEST(AdminTokenTest, AdminTokensAndVirtualKeysAreEachRefusedWhereTheOtherIsExpected) {
  Fixture fixture = testing::MakeFixture();
  Result<GeneratedKey> admin = GenerateKey(kAdminTokenPrefix);
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->key.starts_with("tpa-"));
  EXPECT_EQ(admin->key.size(), kKeyLength + 1);
  Key token = testing::MakeKey(admin.value(), "acme");
  token.kind = KeyKind::kAdmin;
  fixture.data.keys.push_back(token);
  Result<SnapshotPtr> built =
      GovernanceSnapshot::Build(fixture.data, nullptr, testing::TestCounters());
  ASSERT_TRUE(built.ok()) << built.error().message;
  const GovernanceSnapshot& snapshot = *built.value();

  Result<Principal> tenant = AuthenticateAdminToken(snapshot, admin->key, kNow);
  ASSERT_TRUE(tenant.ok()) << tenant.error().message;
  EXPECT_EQ(tenant->tenant->tenant.id, "acme");

  Result<Principal> as_virtual = Authenticate(snapshot, admin->key, kNow);
  ASSERT_FALSE(as_virtual.ok());
  EXPECT_EQ(as_virtual.error().code, ErrorCode::kUnauthorized);
  // The same secret and id behind the virtual key's prefix: the kind, not the prefix, decides.
  const std::string respelled = "tp-" + admin->key.substr(4);
  Result<Principal> respelled_virtual = Authenticate(snapshot, respelled, kNow);
  ASSERT_FALSE(respelled_virtual.ok());
  EXPECT_EQ(respelled_virtual.error().code, ErrorCode::kUnauthorized);

  Result<Principal> virtual_as_admin = AuthenticateAdminToken(snapshot, fixture.active_key, kNow);
  ASSERT_FALSE(virtual_as_admin.ok());
  EXPECT_EQ(virtual_as_admin.error().code, ErrorCode::kUnauthorized);
  const std::string virtual_respelled = "tpa-" + fixture.active_key.substr(3);
  Result<Principal> respelled_admin = AuthenticateAdminToken(snapshot, virtual_respelled, kNow);
  ASSERT_FALSE(respelled_admin.ok());
  EXPECT_EQ(respelled_admin.error().code, ErrorCode::kUnauthorized);
}

TEST_F(AuthenticateTest, MalformedUnknownAndWrongSecretAre401WithOneMessage) {
  std::string wrong_secret = fixture_.active_key;
  wrong_secret.back() = wrong_secret.back() == 'A' ? 'B' : 'A';
  std::string unknown_id = fixture_.active_key;
  unknown_id[3] = unknown_id[3] == 'a' ? 'b' : 'a';
  const std::string inputs[] = {"", "sk-123", fixture_.active_key + "x", wrong_secret, unknown_id};
  std::string first_message;
  for (const std::string& key : inputs) {
    Result<Principal> principal = Authenticate(*snapshot_, key, kNow);
    ASSERT_FALSE(principal.ok()) << key;
    EXPECT_EQ(principal.error().code, ErrorCode::kUnauthorized) << key;
    EXPECT_EQ(HttpStatus(principal.error().code), 401);
    if (first_message.empty()) first_message = principal.error().message;
    EXPECT_EQ(principal.error().message, first_message);
    if (key.size() > kKeyLength / 2) {
      EXPECT_EQ(principal.error().message.find(key.substr(kKeyLength / 2)), std::string::npos);
    }
  }
}

TEST_F(AuthenticateTest, RevokedAndExpiredAre401SuspendedIs403) {
  EXPECT_EQ(FailureOf(fixture_.revoked_key), ErrorCode::kUnauthorized);
  EXPECT_EQ(FailureOf(fixture_.expired_key), ErrorCode::kUnauthorized);
  EXPECT_EQ(FailureOf(fixture_.suspended_key), ErrorCode::kForbidden);
  EXPECT_EQ(HttpStatus(ErrorCode::kUnauthorized), 401);
  EXPECT_EQ(HttpStatus(ErrorCode::kForbidden), 403);
}

TEST_F(AuthenticateTest, ExpiryIsExclusiveOfTheExpirySecond) {
  EXPECT_TRUE(Authenticate(*snapshot_, fixture_.expired_key, kNow - 1).ok());
  EXPECT_EQ(FailureOf(fixture_.expired_key, kNow), ErrorCode::kUnauthorized);
}

TEST_F(AuthenticateTest, StatusIsCheckedOnlyAfterTheSecret) {
  std::string wrong = fixture_.revoked_key;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  // Both are 401s; only the right secret learns that the key was revoked.
  Result<Principal> guessed = Authenticate(*snapshot_, wrong, kNow);
  Result<Principal> revoked = Authenticate(*snapshot_, fixture_.revoked_key, kNow);
  ASSERT_FALSE(guessed.ok());
  ASSERT_FALSE(revoked.ok());
  EXPECT_EQ(guessed.error().message.find("revoked"), std::string::npos);
  EXPECT_NE(revoked.error().message.find("revoked"), std::string::npos);
}

TEST_F(AuthenticateTest, ModelMustBeAllowedByPlanAndKey) {
  fixture_.data.plans[0].allowed_models = {testing::kModel, testing::kOtherModel};
  fixture_.data.keys[0].allowed_models = {testing::kModel};
  Result<SnapshotPtr> built =
      GovernanceSnapshot::Build(fixture_.data, nullptr, testing::TestCounters());
  ASSERT_TRUE(built.ok());
  Result<Principal> principal = Authenticate(*built.value(), fixture_.active_key, kNow);
  ASSERT_TRUE(principal.ok());
  EXPECT_TRUE(CheckModel(principal.value(), testing::kModel).ok());
  Status other = CheckModel(principal.value(), testing::kOtherModel);  // plan yes, key no
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(other.error().param, "model");
  EXPECT_FALSE(CheckModel(principal.value(), "o3").ok());

  fixture_.data.keys[0].allowed_models = {"o3"};  // key yes, plan no
  built = GovernanceSnapshot::Build(fixture_.data, nullptr, testing::TestCounters());
  ASSERT_TRUE(built.ok());
  principal = Authenticate(*built.value(), fixture_.active_key, kNow);
  ASSERT_TRUE(principal.ok());
  EXPECT_FALSE(CheckModel(principal.value(), "o3").ok());
}

TEST_F(AuthenticateTest, EmptyListsAllowEveryModel) {
  Result<Principal> principal = Authenticate(*snapshot_, fixture_.active_key, kNow);
  ASSERT_TRUE(principal.ok());
  EXPECT_TRUE(CheckModel(principal.value(), "anything").ok());
}

}  // namespace
}  // namespace turnpike::governance
