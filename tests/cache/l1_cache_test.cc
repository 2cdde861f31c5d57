#include "cache/l1_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace turnpike::cache {
namespace {

constexpr int64_t kNow = 1000;

CacheKey Key(std::string_view tenant, int n) {
  Digest128 digest{};
  digest[0] = static_cast<uint8_t>(n);
  digest[1] = static_cast<uint8_t>(n >> 8);
  return MakeKey(tenant, "idx", digest);
}

std::shared_ptr<const Envelope> Entry(size_t body_bytes, uint64_t generation = 0) {
  auto e = std::make_shared<Envelope>();
  e->body.assign(body_bytes, 'x');
  e->generation = generation;
  e->expires_at_ms = kNow + 1000;
  return e;
}

// Charge of one Entry(body) under Key(tenant, n) (tenant of one character).
size_t ChargeOf(size_t body) { return Entry(body)->Charge() + Key("a", 0).id.size(); }

TEST(L1Cache, HitsOnlyTheSameGenerationBeforeExpiry) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 0, .shards = 4});
  const CacheKey key = Key("a", 1);
  ASSERT_TRUE(l1.Insert(key, Entry(10, 3)));
  EXPECT_NE(l1.Find(key.id, 3, kNow), nullptr);
  EXPECT_NE(l1.Find(HashedId(key), 3, kNow), nullptr);  // the hash the key carries
  EXPECT_EQ(l1.Find(Key("a", 2).id, 3, kNow), nullptr);
  EXPECT_EQ(l1.Find(key.id, 2, kNow), nullptr);  // a caller behind a write: kept for others
  EXPECT_EQ(l1.Stats().entries, 1u);
  EXPECT_EQ(l1.Find(key.id, 4, kNow), nullptr);  // a newer generation: stale, dropped
  EXPECT_EQ(l1.Find(key.id, 3, kNow), nullptr);  // gone
  EXPECT_EQ(l1.Stats().stale, 1u);

  ASSERT_TRUE(l1.Insert(key, Entry(10, 3)));
  EXPECT_EQ(l1.Find(key.id, 3, kNow + 1000), nullptr);  // expired
  EXPECT_EQ(l1.Stats().entries, 0u);
  EXPECT_EQ(l1.Stats().bytes, 0u);
}

TEST(L1Cache, ReplacingAnEntryKeepsTheAccountExact) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 0, .shards = 1});
  const CacheKey key = Key("a", 1);
  ASSERT_TRUE(l1.Insert(key, Entry(10)));
  ASSERT_TRUE(l1.Insert(key, Entry(20)));
  EXPECT_EQ(l1.Stats().entries, 1u);
  EXPECT_EQ(l1.Stats().bytes, ChargeOf(20));
  EXPECT_EQ(l1.Find(key.id, 0, kNow)->body.size(), 20u);
}

TEST(L1Cache, AnOlderGenerationNeverReplacesANewerOne) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 0, .shards = 1});
  const CacheKey key = Key("a", 1);
  ASSERT_TRUE(l1.Insert(key, Entry(10, 2)));
  EXPECT_FALSE(l1.Insert(key, Entry(20, 1)));
  EXPECT_EQ(l1.Find(key.id, 2, kNow)->body.size(), 10u);
  EXPECT_TRUE(l1.Insert(key, Entry(30, 3)));
  EXPECT_EQ(l1.Find(key.id, 3, kNow)->body.size(), 30u);
}

TEST(L1Cache, EvictsLeastRecentlyUsedUnderTheByteCap) {
  const size_t charge = ChargeOf(100);
  L1Cache l1({.max_bytes = 3 * charge, .tenant_max_bytes = 0, .shards = 1});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(l1.Insert(Key("a", i), Entry(100)));
  EXPECT_NE(l1.Find(Key("a", 0).id, 0, kNow), nullptr);  // 0 is now the most recent
  ASSERT_TRUE(l1.Insert(Key("a", 3), Entry(100)));       // evicts 1
  EXPECT_EQ(l1.Find(Key("a", 1).id, 0, kNow), nullptr);
  EXPECT_NE(l1.Find(Key("a", 0).id, 0, kNow), nullptr);
  EXPECT_NE(l1.Find(Key("a", 2).id, 0, kNow), nullptr);
  EXPECT_NE(l1.Find(Key("a", 3).id, 0, kNow), nullptr);
  const L1Stats stats = l1.Stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.bytes, 3 * charge);
}

TEST(L1Cache, NeverExceedsItsCapAcrossShards) {
  const size_t max_bytes = 64 * 1024;
  L1Cache l1({.max_bytes = max_bytes, .tenant_max_bytes = 0, .shards = 16});
  for (int i = 0; i < 2000; ++i) {
    l1.Insert(Key("a", i), Entry(100 + i % 300));
    ASSERT_LE(l1.Stats().bytes, max_bytes);
  }
  EXPECT_GT(l1.Stats().evictions, 0u);
  EXPECT_GT(l1.Stats().bytes, max_bytes / 2);  // the shards do fill up
}

TEST(L1Cache, OneTenantCannotEvictAnother) {
  const size_t charge = ChargeOf(100);
  // Room for 40 entries overall, 10 per tenant.
  L1Cache l1({.max_bytes = 40 * charge, .tenant_max_bytes = 10 * charge, .shards = 1});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(l1.Insert(Key("b", i), Entry(100)));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(l1.Insert(Key("a", i), Entry(100)));
  for (int i = 0; i < 10; ++i) EXPECT_NE(l1.Find(Key("b", i).id, 0, kNow), nullptr) << i;
  // Tenant a keeps its 10 most recent entries only.
  for (int i = 990; i < 1000; ++i) EXPECT_NE(l1.Find(Key("a", i).id, 0, kNow), nullptr) << i;
  EXPECT_EQ(l1.Find(Key("a", 989).id, 0, kNow), nullptr);
  EXPECT_EQ(l1.Stats().entries, 20u);
  EXPECT_EQ(l1.Stats().evictions, 990u);
}

TEST(L1Cache, GlobalCapStillHoldsWhenManyTenantsFill) {
  const size_t charge = ChargeOf(100);
  L1Cache l1({.max_bytes = 10 * charge, .tenant_max_bytes = 5 * charge, .shards = 1});
  for (int t = 0; t < 5; ++t) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(l1.Insert(Key(std::string(1, 'a' + t), i), Entry(100)));
  }
  EXPECT_EQ(l1.Stats().entries, 10u);
  EXPECT_EQ(l1.Stats().bytes, 10 * charge);
}

TEST(L1Cache, RejectsAnEntryLargerThanATenantShare) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 4096, .shards = 1});
  EXPECT_FALSE(l1.Insert(Key("a", 1), Entry(5000)));
  EXPECT_EQ(l1.Find(Key("a", 1).id, 0, kNow), nullptr);
  EXPECT_EQ(l1.Stats().rejected, 1u);
  EXPECT_EQ(l1.Stats().bytes, 0u);
}

TEST(L1Cache, AHitOutlivesItsEviction) {
  const size_t charge = ChargeOf(100);
  L1Cache l1({.max_bytes = charge, .tenant_max_bytes = 0, .shards = 1});
  ASSERT_TRUE(l1.Insert(Key("a", 1), Entry(100)));
  std::shared_ptr<const Envelope> held = l1.Find(Key("a", 1).id, 0, kNow);
  ASSERT_TRUE(l1.Insert(Key("a", 2), Entry(100)));  // evicts 1
  EXPECT_EQ(l1.Find(Key("a", 1).id, 0, kNow), nullptr);
  EXPECT_EQ(held->body, std::string(100, 'x'));
}

TEST(L1Cache, TwoThreadsKeepTheAccountExact) {
  const size_t max_bytes = 32 * ChargeOf(100);
  L1Cache l1({.max_bytes = max_bytes, .tenant_max_bytes = max_bytes / 2, .shards = 4});
  auto work = [&l1](std::string tenant) {
    for (int i = 0; i < 20'000; ++i) {
      const CacheKey key = Key(tenant, i % 97);
      if (l1.Find(key.id, 0, kNow) == nullptr) l1.Insert(key, Entry(100 + i % 50));
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(work, "a");
  threads.emplace_back(work, "b");
  for (auto& thread : threads) thread.join();
  const L1Stats stats = l1.Stats();
  EXPECT_LE(stats.bytes, max_bytes);
  EXPECT_GT(stats.evictions, 0u);
  // Every entry left is findable, and the byte account matches what is left.
  size_t found = 0;
  for (const char* tenant : {"a", "b"}) {
    for (int i = 0; i < 97; ++i) found += l1.Find(Key(tenant, i).id, 0, kNow) != nullptr;
  }
  EXPECT_EQ(found, stats.entries);
}

}  // namespace
}  // namespace turnpike::cache
