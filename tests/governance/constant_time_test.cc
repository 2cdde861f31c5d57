// Proves that secret hashes are compared with OpenSSL's constant-time CRYPTO_memcmp: this
// binary defines CRYPTO_memcmp itself (the static governance library binds to it at link
// time), counts the calls and forwards to libcrypto's. If keys.cc compared with memcmp or
// operator==, the count would stay 0. Kept in its own binary so no other test sees the shim.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "governance/keys.h"

namespace {
std::atomic<int> g_constant_time_compares{0};  // test-only shim state
}  // namespace

extern "C" int CRYPTO_memcmp(const void* a, const void* b, size_t len) {
  using Fn = int (*)(const void*, const void*, size_t);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "CRYPTO_memcmp"));
  g_constant_time_compares.fetch_add(1);
  return real(a, b, len);
}

namespace turnpike::governance {
namespace {

TEST(ConstantTimeTest, VerificationComparesHashesWithCryptoMemcmp) {
  Result<GeneratedKey> generated = GenerateKey();
  ASSERT_TRUE(generated.ok());
  std::optional<ParsedKey> parsed = ParseKey(generated->key);
  ASSERT_TRUE(parsed.has_value());
  Result<SecretVerifier> verifier = SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());

  int before = g_constant_time_compares.load();
  EXPECT_TRUE(VerifySecret(parsed->secret, generated->secret_hash));
  EXPECT_EQ(g_constant_time_compares.load(), before + 1);
  EXPECT_TRUE(verifier->Verify(parsed->secret, generated->secret_hash));
  EXPECT_EQ(g_constant_time_compares.load(), before + 2);
  SecretHash wrong = generated->secret_hash;
  wrong[0] ^= 1;
  EXPECT_FALSE(verifier->Verify(parsed->secret, wrong));
  EXPECT_EQ(g_constant_time_compares.load(), before + 3);
}

// A key verified once is then checked against the remembered secret: still one constant-time
// compare, no hash. A wrong secret for that key is hashed (and refused) as before.
TEST(ConstantTimeTest, RememberedSecretIsComparedInConstantTime) {
  Result<GeneratedKey> generated = GenerateKey();
  ASSERT_TRUE(generated.ok());
  std::optional<ParsedKey> parsed = ParseKey(generated->key);
  ASSERT_TRUE(parsed.has_value());
  Result<SecretVerifier> verifier = SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());

  EXPECT_TRUE(verifier->Verify(parsed->secret, generated->secret_hash));
  EXPECT_EQ(verifier->remembered_hits(), 0u);
  int before = g_constant_time_compares.load();
  EXPECT_TRUE(verifier->Verify(parsed->secret, generated->secret_hash));
  EXPECT_EQ(verifier->remembered_hits(), 1u);
  EXPECT_EQ(g_constant_time_compares.load(), before + 1);

  std::string wrong(parsed->secret);
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  before = g_constant_time_compares.load();
  EXPECT_FALSE(verifier->Verify(wrong, generated->secret_hash));
  EXPECT_EQ(g_constant_time_compares.load(), before + 2);  // the remembered one, then the hash
  EXPECT_EQ(verifier->remembered_hits(), 1u);
  // The wrong secret did not replace the right one.
  EXPECT_TRUE(verifier->Verify(parsed->secret, generated->secret_hash));
  EXPECT_EQ(verifier->remembered_hits(), 2u);
  // A secret of another length is never compared against the remembered one.
  EXPECT_FALSE(verifier->Verify(parsed->secret.substr(1), generated->secret_hash));
  EXPECT_EQ(verifier->remembered_hits(), 2u);
}

// Keys whose hashes share a slot evict each other; each still verifies, by hashing.
TEST(ConstantTimeTest, KeysSharingASlotBothVerify) {
  Result<SecretVerifier> verifier = SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());
  std::vector<GeneratedKey> keys;
  while (keys.size() < 2) {
    Result<GeneratedKey> generated = GenerateKey();
    ASSERT_TRUE(generated.ok());
    if (keys.empty() || generated->secret_hash[0] % SecretVerifier::kRememberedKeys ==
                            keys[0].secret_hash[0] % SecretVerifier::kRememberedKeys) {
      keys.push_back(std::move(generated.value()));
    }
  }
  for (int round = 0; round < 3; ++round) {
    for (const GeneratedKey& key : keys) {
      EXPECT_TRUE(verifier->Verify(ParseKey(key.key)->secret, key.secret_hash));
    }
  }
  EXPECT_EQ(verifier->remembered_hits(), 0u);  // each evicted the other
  EXPECT_TRUE(verifier->Verify(ParseKey(keys[1].key)->secret, keys[1].secret_hash));
  EXPECT_EQ(verifier->remembered_hits(), 1u);
}

}  // namespace
}  // namespace turnpike::governance
