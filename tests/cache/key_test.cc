#include "cache/key.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace turnpike::cache {
namespace {

TEST(Digester, IsSha256TruncatedTo128Bits) {
  Result<Digester> digester = Digester::Create();
  ASSERT_TRUE(digester.ok());
  // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
  EXPECT_EQ(DigestHex(digester->Of("abc")), "ba7816bf8f01cfea414140de5dae2223");
  EXPECT_EQ(DigestHex(digester->Of("abc")), "ba7816bf8f01cfea414140de5dae2223");  // reusable
}

TEST(CacheKey, IsTenantFirstAndLengthPrefixed) {
  Digest128 digest{};
  digest[0] = 0xab;
  CacheKey key = MakeKey("acme", "docs", digest);
  EXPECT_EQ(key.ns_id(), "{4:acme4:docs}");
  EXPECT_EQ(key.id, "{4:acme4:docs}:ab000000000000000000000000000000");
  EXPECT_EQ(key.tenant(), "acme");
  EXPECT_EQ(NamespaceId("acme", "docs"), key.ns_id());
  CacheKey moved = std::move(key);
  EXPECT_EQ(moved.tenant(), "acme");
}

TEST(CacheKey, DigestHexWritesEveryNibble) {
  const Digest128 digest = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                            0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  EXPECT_EQ(DigestHex(digest), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(MakeKey("t", "n", digest).id, "{1:t1:n}:0123456789abcdeffedcba9876543210");
}

TEST(CacheKey, CarriesTheHashOfItsId) {
  Digest128 digest{};
  digest[3] = 0x5c;
  CacheKey key = MakeKey("acme", "docs", digest);
  EXPECT_EQ(key.hash, IdHash(key.id));
  CacheKey moved = std::move(key);
  EXPECT_EQ(moved.hash, IdHash(moved.id));
  const HashedId carried(moved);
  EXPECT_EQ(carried.hash, HashedId::Of(moved.id).hash);
  EXPECT_EQ(carried, HashedId::Of(moved.id));
  EXPECT_NE(carried, HashedId::Of(MakeKey("acme", "docs", Digest128{}).id));
}

TEST(CacheKey, NoTenantAndNamespaceSplitCollides) {
  const Digest128 digest{};
  EXPECT_NE(MakeKey("a", "bc", digest).id, MakeKey("ab", "c", digest).id);
  EXPECT_NE(MakeKey("a:", "b", digest).id, MakeKey("a", ":b", digest).id);
  EXPECT_NE(MakeKey("t1", "i", digest).id, MakeKey("t2", "i", digest).id);
}

// A key made in a KeySpace is the key made from its tenant and namespace: the same id, hash and
// tenant, whatever string it reuses and however the space was assigned before.
TEST(CacheKey, FromAKeySpaceIsTheSameKey) {
  const Digest128 digest = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                            0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  KeySpace space;
  std::string reused(300, 'x');  // longer than the key and full of other bytes
  for (auto [tenant, ns] : {std::pair<std::string_view, std::string_view>{"acme", "openai 4:chat"},
                            {"", "n"},
                            {"tenant-with:colon", "anthropic 9:claude-x1 key_42"},
                            {"a", ""}}) {
    space.Assign(tenant, ns);
    const CacheKey expected = MakeKey(tenant, ns, digest);
    CacheKey key = MakeKey(space, digest, std::move(reused));
    EXPECT_EQ(key.id, expected.id);
    EXPECT_EQ(key.ns_id(), expected.ns_id());
    EXPECT_EQ(key.tenant(), tenant);
    EXPECT_EQ(space.tenant(), tenant);
    EXPECT_EQ(key.hash, expected.hash);
    reused = std::move(key.id);
  }
}

}  // namespace
}  // namespace turnpike::cache
