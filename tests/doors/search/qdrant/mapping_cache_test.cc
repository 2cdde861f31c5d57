// The Qdrant backend's mapping cache (mapping_cache.h): ttl, own-write erase, the bound with
// oldest-first eviction, tenant-first keys, and Observe's verdicts on what a Cover leg read.
#include "doors/search/qdrant/mapping_cache.h"

#include <gtest/gtest.h>

namespace turnpike::search::qdrant {
namespace {

using std::chrono::milliseconds;
using Clock = MappingCache::Clock;

IndexInfo Info(int64_t created_ms, std::vector<std::pair<std::string, FieldType>> fields) {
  IndexInfo info;
  info.created_ms = created_ms;
  for (auto& [path, type] : fields) {
    FieldMapping f;
    f.path = path;
    f.type = type;
    info.mapping.fields.push_back(std::move(f));
  }
  return info;
}

const Clock::time_point kT0{};

TEST(MappingCacheTest, FindsWithinTheTtlOnly) {
  MappingCache cache(milliseconds(100), 8);
  EXPECT_EQ(cache.Find("t", "i", kT0), nullptr);
  cache.Store("t", "i", Info(1, {{"a", FieldType::kKeyword}}), kT0);
  auto hit = cache.Find("t", "i", kT0 + milliseconds(99));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->created_ms, 1);
  EXPECT_EQ(hit->mapping.fields.size(), 1u);
  EXPECT_EQ(cache.Find("t", "i", kT0 + milliseconds(100)), nullptr);
}

TEST(MappingCacheTest, TenantIsPartOfTheKey) {
  MappingCache cache(milliseconds(100), 8);
  cache.Store("t1", "i", Info(1, {}), kT0);
  EXPECT_EQ(cache.Find("t2", "i", kT0), nullptr);
  EXPECT_EQ(cache.Find("t1", "j", kT0), nullptr);
  // No ambiguity between (tenant "a/b", index "c") and (tenant "a", index "b/c").
  cache.Store("a/b", "c", Info(2, {}), kT0);
  EXPECT_EQ(cache.Find("a", "b/c", kT0), nullptr);
  EXPECT_NE(cache.Find("a/b", "c", kT0), nullptr);
}

TEST(MappingCacheTest, EraseDropsTheEntry) {
  MappingCache cache(milliseconds(100), 8);
  cache.Store("t", "i", Info(1, {}), kT0);
  cache.Erase("t", "i");
  cache.Erase("t", "never");  // absent: nothing happens
  EXPECT_EQ(cache.Find("t", "i", kT0), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MappingCacheTest, BoundedEvictingTheOldest) {
  MappingCache cache(milliseconds(1'000), 3);
  cache.Store("t", "a", Info(1, {}), kT0 + milliseconds(1));
  cache.Store("t", "b", Info(1, {}), kT0 + milliseconds(2));
  cache.Store("t", "c", Info(1, {}), kT0 + milliseconds(3));
  // Re-verifying "a" makes "b" the oldest.
  EXPECT_EQ(cache.Observe("t", "a", Info(1, {}), kT0 + milliseconds(4)),
            MappingCache::Seen::kUnchanged);
  cache.Store("t", "d", Info(1, {}), kT0 + milliseconds(5));
  EXPECT_EQ(cache.size(), 3u);
  const auto now = kT0 + milliseconds(6);
  EXPECT_NE(cache.Find("t", "a", now), nullptr);
  EXPECT_EQ(cache.Find("t", "b", now), nullptr);
  EXPECT_NE(cache.Find("t", "c", now), nullptr);
  EXPECT_NE(cache.Find("t", "d", now), nullptr);
  // Replacing an existing key evicts nothing.
  cache.Store("t", "d", Info(2, {}), now);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(MappingCacheTest, TtlZeroIsOff) {
  MappingCache cache(milliseconds(0), 8);
  cache.Store("t", "i", Info(1, {}), kT0);
  EXPECT_EQ(cache.Find("t", "i", kT0), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Observe("t", "i", Info(1, {}), kT0), MappingCache::Seen::kUnchanged);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MappingCacheTest, ObserveRestartsTheAgeOfAnUnchangedEntry) {
  MappingCache cache(milliseconds(100), 8);
  cache.Store("t", "i", Info(1, {{"a", FieldType::kLong}}), kT0);
  EXPECT_EQ(cache.Observe("t", "i", Info(1, {{"a", FieldType::kLong}}), kT0 + milliseconds(90)),
            MappingCache::Seen::kUnchanged);
  EXPECT_NE(cache.Find("t", "i", kT0 + milliseconds(150)), nullptr);
}

TEST(MappingCacheTest, ObserveStoresAGrownOrMissingEntry) {
  MappingCache cache(milliseconds(100), 8);
  EXPECT_EQ(cache.Observe("t", "i", Info(1, {{"a", FieldType::kLong}}), kT0),
            MappingCache::Seen::kStored);
  EXPECT_EQ(
      cache.Observe("t", "i", Info(1, {{"a", FieldType::kLong}, {"b", FieldType::kKeyword}}), kT0),
      MappingCache::Seen::kStored);
  auto grown = cache.Find("t", "i", kT0);
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(grown->mapping.fields.size(), 2u);
}

TEST(MappingCacheTest, ObserveTellsARetypedRecreation) {
  MappingCache cache(milliseconds(100), 8);
  cache.Store("t", "i", Info(1, {{"a", FieldType::kKeyword}, {"b", FieldType::kLong}}), kT0);
  // Re-created with the same types (and one more field): still valid, stored.
  EXPECT_EQ(
      cache.Observe(
          "t", "i",
          Info(2, {{"a", FieldType::kKeyword}, {"b", FieldType::kLong}, {"c", FieldType::kText}}),
          kT0),
      MappingCache::Seen::kStored);
  // Re-created with "a" retyped: retyped, and the entry is the new mapping.
  EXPECT_EQ(cache.Observe("t", "i", Info(3, {{"a", FieldType::kLong}}), kT0),
            MappingCache::Seen::kRetyped);
  auto now = cache.Find("t", "i", kT0);
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(now->created_ms, 3);
  EXPECT_EQ(now->mapping.fields.front().type, FieldType::kLong);
  // Re-created without a field the cached mapping had: retyped too.
  EXPECT_EQ(cache.Observe("t", "i", Info(4, {{"z", FieldType::kLong}}), kT0),
            MappingCache::Seen::kRetyped);
}

TEST(MappingCacheTest, StillValidComparesTypeAndParameters) {
  Mapping used;
  FieldMapping v;
  v.path = "v";
  v.type = FieldType::kDenseVector;
  v.dims = 3;
  used.fields.push_back(v);
  Mapping same = used;
  EXPECT_TRUE(StillValid(used, same));
  Mapping dims = used;
  dims.fields[0].dims = 4;
  EXPECT_FALSE(StillValid(used, dims));
  Mapping similarity = used;
  similarity.fields[0].similarity = Similarity::kL2Norm;
  EXPECT_FALSE(StillValid(used, similarity));
  EXPECT_TRUE(StillValid(Mapping{}, used));
}

}  // namespace
}  // namespace turnpike::search::qdrant
