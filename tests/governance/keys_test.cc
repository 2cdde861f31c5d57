#include "governance/keys.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace turnpike::governance {
namespace {

constexpr char kPublicId[] = "abcdefghij27";
// 43 base64url chars, including the '-' and '_' that base64url allows.
constexpr char kSecret[] = "Zm9v-YmFy_YmF6LXF1eC1xdXV4LWNvcmdlLWdyYXVsd";
static_assert(sizeof(kSecret) - 1 == kSecretLength);

std::string KeyOf(std::string_view id, std::string_view secret) {
  return "tp-" + std::string(id) + "-" + std::string(secret);
}

TEST(KeysTest, GeneratedKeyHasTheDocumentedShapeAndVerifies) {
  Result<GeneratedKey> generated = GenerateKey();
  ASSERT_TRUE(generated.ok());
  const std::string& key = generated->key;
  EXPECT_EQ(key.size(), kKeyLength);
  EXPECT_EQ(key.size(), 59u);
  std::optional<ParsedKey> parsed = ParseKey(key);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->public_id, generated->public_id);
  EXPECT_EQ(parsed->secret.size(), kSecretLength);
  EXPECT_TRUE(VerifySecret(parsed->secret, generated->secret_hash));
  EXPECT_EQ(HashSecret(parsed->secret), generated->secret_hash);
  // The full key is not recoverable from what is stored.
  EXPECT_EQ(key.find(generated->public_id), 3u);
}

TEST(KeysTest, GeneratedKeysDiffer) {
  std::set<std::string> keys, ids;
  constexpr int kKeys = 200;
  for (int i = 0; i < kKeys; ++i) {
    Result<GeneratedKey> generated = GenerateKey();
    ASSERT_TRUE(generated.ok());
    keys.insert(generated->key);
    ids.insert(generated->public_id);
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(ids.size(), static_cast<size_t>(kKeys));
}

TEST(KeysTest, AnIdempotencyKeyNamesOneIdPerKindAndTenant) {
  const std::optional<std::string> id = IdempotentPublicId(kKeyPrefix, "acme", "retry-7");
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(IsValidPublicId(*id));
  EXPECT_EQ(IdempotentPublicId(kKeyPrefix, "acme", "retry-7"), id);  // every retry: the same
  const std::set<std::string> others = {
      *IdempotentPublicId(kKeyPrefix, "acme", "retry-8"),
      *IdempotentPublicId(kKeyPrefix, "acme2", "retry-7"),
      *IdempotentPublicId(kAdminTokenPrefix, "acme", "retry-7"),
      // The parts are length-prefixed: moving a character from one to the other is another id.
      *IdempotentPublicId(kKeyPrefix, "acmer", "etry-7"),
  };
  EXPECT_EQ(others.size(), 4u);
  EXPECT_EQ(others.count(*id), 0u);

  // The key made with it keeps that id and a random secret.
  Result<GeneratedKey> a = GenerateKey(kKeyPrefix, *id);
  Result<GeneratedKey> b = GenerateKey(kKeyPrefix, *id);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->public_id, *id);
  EXPECT_EQ(b->public_id, *id);
  EXPECT_NE(a->key, b->key);
  std::optional<ParsedKey> parsed = ParseKey(a->key);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->public_id, *id);
  EXPECT_TRUE(VerifySecret(parsed->secret, a->secret_hash));
}

TEST(KeysTest, ParseSplitsAtFixedOffsetsAndPointsIntoTheInput) {
  std::string key = KeyOf(kPublicId, kSecret);
  std::optional<ParsedKey> parsed = ParseKey(key);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->public_id, kPublicId);
  EXPECT_EQ(parsed->secret, kSecret);
  EXPECT_EQ(parsed->public_id.data(), key.data() + 3);  // a view, no copy
}

TEST(KeysTest, ParseRejectsMalformedKeys) {
  std::string good = KeyOf(kPublicId, kSecret);
  std::string secret(kSecret);
  const std::vector<std::string> bad = {
      "",
      "tp-",
      good.substr(0, good.size() - 1),                // short
      good + "A",                                     // long
      "sk-" + good.substr(3),                         // wrong prefix
      "TP-" + good.substr(3),                         // prefix is case-sensitive
      KeyOf("ABCDEFGHIJ27", kSecret),                 // upper case id
      KeyOf("abcdefghij18", kSecret),                 // 1 and 8 are not base32
      "tp-" + std::string(kPublicId) + "_" + secret,  // wrong separator
      KeyOf(kPublicId, secret.substr(1) + "="),       // padding
      KeyOf(kPublicId, secret.substr(1) + "+"),       // standard base64, not url
      KeyOf(kPublicId, secret.substr(1) + "/"),
      KeyOf(kPublicId, secret.substr(1) + " "),
  };
  for (const std::string& key : bad) EXPECT_FALSE(ParseKey(key).has_value()) << key;
}

TEST(KeysTest, WrongSecretDoesNotVerify) {
  std::optional<SecretHash> hash = HashSecret(kSecret);
  ASSERT_TRUE(hash.has_value());
  EXPECT_TRUE(VerifySecret(kSecret, *hash));
  std::string flipped(kSecret);
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(VerifySecret(flipped, *hash));
  EXPECT_FALSE(VerifySecret("", *hash));
  EXPECT_FALSE(VerifySecret(std::string(kSecret) + "A", *hash));
}

TEST(KeysTest, VerifierAgreesWithOneShotAndIsReusable) {
  Result<SecretVerifier> verifier = SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());
  std::optional<SecretHash> hash = HashSecret(kSecret);
  ASSERT_TRUE(hash.has_value());
  std::string flipped(kSecret);
  flipped[0] = 'x';
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(verifier->Verify(kSecret, *hash));
    EXPECT_FALSE(verifier->Verify(flipped, *hash));
  }
}

TEST(KeysTest, ExtractApiKeyPrefersBearerThenXApiKey) {
  EXPECT_EQ(ExtractApiKey("Bearer tp-abc", ""), "tp-abc");
  EXPECT_EQ(ExtractApiKey("bearer   tp-abc  ", ""), "tp-abc");
  EXPECT_EQ(ExtractApiKey("BEARER\ttp-abc", ""), "tp-abc");
  EXPECT_EQ(ExtractApiKey("Bearer tp-abc", "tp-other"), "tp-abc");
  EXPECT_EQ(ExtractApiKey("", "tp-other"), "tp-other");
  EXPECT_EQ(ExtractApiKey("Basic dXNlcjpwYXNz", "tp-other"), "tp-other");
  EXPECT_EQ(ExtractApiKey("Bearer ", " tp-other "), "tp-other");
  EXPECT_EQ(ExtractApiKey("Bearertp-abc", ""), std::nullopt);
  EXPECT_EQ(ExtractApiKey("Bearer", ""), std::nullopt);
  EXPECT_EQ(ExtractApiKey("", ""), std::nullopt);
  EXPECT_EQ(ExtractApiKey("Basic dXNlcjpwYXNz", ""), std::nullopt);
}

}  // namespace
}  // namespace turnpike::governance
