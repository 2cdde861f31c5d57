// The units a replica re-registers after a Redis restart (redis/recent_grants.h): a minute's
// sum, never less than what was leased in that minute, with a fixed number of entries.
#include "redis/recent_grants.h"

#include <gtest/gtest.h>

namespace turnpike::redis {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1000 * kSecond;

TEST(RecentGrantsTest, SumsTheLastMinute) {
  RecentGrants grants;
  EXPECT_EQ(grants.Sum(kT0), 0);
  grants.Add(kT0, 10);
  grants.Add(kT0 + 30 * kSecond, 5);
  EXPECT_EQ(grants.Sum(kT0 + 30 * kSecond), 15);
  EXPECT_EQ(grants.Sum(kT0 + 59 * kSecond), 15);
  EXPECT_EQ(grants.Sum(kT0 + 60 * kSecond), 5) << "the first grant left the window";
  EXPECT_EQ(grants.Sum(kT0 + 90 * kSecond), 0);
}

TEST(RecentGrantsTest, AFullRingMergesItsOldestIntoTheNextAndNeverUndercounts) {
  RecentGrants grants;
  const size_t n = RecentGrants::kCapacity * 3;
  for (size_t i = 0; i < n; ++i) grants.Add(kT0 + static_cast<int64_t>(i) * kSecond / 10, 1);
  EXPECT_EQ(grants.size(), RecentGrants::kCapacity);
  const int64_t last = kT0 + static_cast<int64_t>(n - 1) * kSecond / 10;
  EXPECT_EQ(grants.Sum(last), static_cast<int64_t>(n)) << "all within the minute";
  // A minute after the first grant the merged entries still count (later stamps): never less.
  EXPECT_GE(grants.Sum(kT0 + 60 * kSecond), static_cast<int64_t>(n) - 1);
  EXPECT_EQ(grants.Sum(last + 60 * kSecond), 0);
}

TEST(RecentGrantsTest, ExpiredEntriesFreeTheirSlots) {
  RecentGrants grants;
  for (size_t i = 0; i < RecentGrants::kCapacity; ++i) grants.Add(kT0, 1);
  grants.Add(kT0 + 61 * kSecond, 7);
  EXPECT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants.Sum(kT0 + 61 * kSecond), 7);
}

}  // namespace
}  // namespace turnpike::redis
