// Proves that secret hashes are compared with OpenSSL's constant-time CRYPTO_memcmp: this
// binary defines CRYPTO_memcmp itself (the static governance library binds to it at link
// time), counts the calls and forwards to libcrypto's. If keys.cc compared with memcmp or
// operator==, the count would stay 0. Kept in its own binary so no other test sees the shim.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>

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

}  // namespace
}  // namespace turnpike::governance
