#include "cache/l1_cache.h"

#include <gtest/gtest.h>

#include <atomic>
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

// Charge of one Entry(body) under Key(tenant, n) (tenant of one character: the key's bytes fit
// the entry's inline room, charged in Envelope::Charge).
size_t ChargeOf(size_t body) { return Entry(body)->Charge(); }

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

// The entry keeps its own copy of the key: inline up to L1Slot::kInlineId bytes, in a string
// past it. Keys on both sides of that size hit, and their tenants' accounts stay apart: a
// tenant that fills its share evicts only its own entries, whatever the length of its id.
TEST(L1Cache, KeysOfAnyLengthAreCopiedIntoTheEntry) {
  const std::string short_tenant = "s";
  const std::string long_tenant(2 * L1Slot::kInlineId, 'l');
  const size_t charge = Entry(100)->Charge() + Key(long_tenant, 0).id.size();  // out of line
  L1Cache l1({.max_bytes = 100 * charge, .tenant_max_bytes = 4 * charge, .shards = 1});
  for (int i = 0; i < 3; ++i) {
    CacheKey key = Key(long_tenant, i);
    ASSERT_GT(key.id.size(), L1Slot::kInlineId);
    ASSERT_TRUE(l1.Insert(key, Entry(100)));
    key.id.assign(key.id.size(), '?');  // the caller's string is reused: the entry has its own
  }
  ASSERT_TRUE(l1.Insert(Key(short_tenant, 0), Entry(100)));
  for (int i = 0; i < 3; ++i) {
    const std::shared_ptr<const Envelope> hit = l1.Find(Key(long_tenant, i).id, 0, kNow);
    ASSERT_NE(hit, nullptr) << i;
    EXPECT_EQ(hit->l1.id, Key(long_tenant, i).id);
    EXPECT_EQ(hit->l1.tenant, long_tenant);
  }
  const std::shared_ptr<const Envelope> hit = l1.Find(Key(short_tenant, 0).id, 0, kNow);
  ASSERT_NE(hit, nullptr);
  EXPECT_LE(hit->l1.id.size(), L1Slot::kInlineId);
  EXPECT_EQ(hit->l1.tenant, short_tenant);
  for (int i = 3; i < 20; ++i) ASSERT_TRUE(l1.Insert(Key(long_tenant, i), Entry(100)));
  EXPECT_NE(l1.Find(Key(short_tenant, 0).id, 0, kNow), nullptr);
  EXPECT_EQ(l1.Find(Key(long_tenant, 0).id, 0, kNow), nullptr);  // its own, evicted
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

TEST(L1Cache, ARemovedEntryIsReleasedByTheShardsLaterWrites) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 0, .shards = 1});
  auto first = std::make_shared<Envelope>();
  first->expires_at_ms = kNow + 1000;
  std::weak_ptr<const Envelope> watch = first;
  ASSERT_TRUE(l1.Insert(Key("a", 1), std::move(first)));
  ASSERT_TRUE(l1.Insert(Key("a", 1), Entry(10)));  // replaces it: unlinked, waiting
  EXPECT_EQ(l1.Stats().waiting, 1u);
  EXPECT_FALSE(watch.expired());  // a reader could still hold its pointer
  // No reader: each write advances the epoch once; the second after the removal releases it.
  ASSERT_TRUE(l1.Insert(Key("a", 2), Entry(10)));
  ASSERT_TRUE(l1.Insert(Key("a", 3), Entry(10)));
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(l1.Stats().waiting, 0u);
  EXPECT_EQ(l1.Stats().entries, 3u);
}

TEST(L1Cache, AnEnvelopeIsStoredOnce) {
  L1Cache l1({.max_bytes = 1 << 20, .tenant_max_bytes = 0, .shards = 1});
  const auto entry = Entry(10);
  ASSERT_TRUE(l1.Insert(Key("a", 1), entry));
  EXPECT_FALSE(l1.Insert(Key("a", 2), entry));
  EXPECT_EQ(l1.Stats().entries, 1u);
}

TEST(L1Cache, TheIndexGrowsAndDropsTombstones) {
  // Many more entries than the first table holds, then churn by replacement: every entry
  // stays findable through each table published.
  L1Cache l1({.max_bytes = 64 << 20, .tenant_max_bytes = 0, .shards = 1});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(l1.Insert(Key("a", i), Entry(10 + i % 7)));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(l1.Insert(Key("a", i), Entry(20)));
  }
  size_t found = 0;
  for (int i = 0; i < 1000; ++i) found += l1.Find(Key("a", i).id, 0, kNow) != nullptr;
  EXPECT_EQ(found, 1000u);
  EXPECT_EQ(l1.Stats().entries, 1000u);
  EXPECT_EQ(l1.Stats().bytes, 1000 * ChargeOf(20));
}

// The body an entry for key n of generation g carries in the stress test below.
std::string StressBody(int n, uint64_t g) {
  std::string body = "k" + std::to_string(n) + "g" + std::to_string(g) + ":";
  body.append(64 + n % 64, static_cast<char>('a' + n % 26));
  return body;
}

// Lock-free readers against writers that replace, evict (a small cap), grow and shrink the
// index, and move the generation on: every envelope a reader gets is the one it asked for,
// whole, and of its generation. Under the ASan build a reader touching a released envelope or
// table fails here; the counts below prove each side ran against the other.
TEST(L1Cache, LockFreeReadersAgainstWritersAndEvictions) {
  constexpr int kKeys = 96;
  constexpr int kReaders = 2;
  constexpr int kWriters = 2;
  constexpr int kReads = 150'000;
  constexpr int kWrites = 30'000;
  const size_t max_bytes = 40 * ChargeOf(128);
  L1Cache l1({.max_bytes = max_bytes, .tenant_max_bytes = max_bytes / 2, .shards = 2});
  std::atomic<uint64_t> generation{1};
  std::atomic<int> writers_left{kWriters};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      uint64_t local_hits = 0;
      for (int i = 0; i < kReads || writers_left.load() > 0; ++i) {
        const int n = (i * 7 + r * 13) % kKeys;
        const CacheKey key = Key(n % 2 == 0 ? "a" : "b", n);
        const uint64_t g = generation.load();
        const auto hit = l1.Find(HashedId(key), g, kNow);
        if (hit == nullptr) continue;
        ++local_hits;
        if (hit->generation != g || hit->body != StressBody(n, g) || hit->l1.id != key.id) ++bad;
      }
      hits += local_hits;
    });
  }
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kWrites; ++i) {
        if (w == 0 && i % 5000 == 4999) generation.fetch_add(1);
        const int n = (i * 11 + w * 5) % kKeys;
        const uint64_t g = generation.load();
        auto entry = std::make_shared<Envelope>();
        entry->generation = g;
        entry->expires_at_ms = kNow + 1000;
        entry->body = StressBody(n, g);
        l1.Insert(Key(n % 2 == 0 ? "a" : "b", n), std::move(entry));
      }
      --writers_left;
    });
  }
  for (auto& thread : threads) thread.join();
  const L1Stats stats = l1.Stats();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(hits.load(), 0u);
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_LE(stats.bytes, max_bytes);
  // What is left is consistent: each entry of the last generation is findable once.
  size_t found = 0;
  for (int n = 0; n < kKeys; ++n) {
    found += l1.Find(Key(n % 2 == 0 ? "a" : "b", n).id, generation.load(), kNow) != nullptr;
  }
  EXPECT_EQ(found, l1.Stats().entries);  // the others, of older generations, left as met
}

}  // namespace
}  // namespace turnpike::cache
