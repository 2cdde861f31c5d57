// Failed admin authentications per client address (auth_failures.h), on a clock the test moves.
#include "doors/admin/auth_failures.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::doors::admin {
namespace {

using Clock = AuthFailures::Clock;
constexpr Clock::time_point kStart{};

TEST(AuthFailuresTest, AnAddressIsRefusedAfterTheLimitUntilItsWindowEnds) {
  AuthFailures failures;
  for (int i = 0; i < AuthFailures::kMaxFailures - 1; ++i) {
    failures.Failed("10.0.0.1:" + std::to_string(5000 + i), kStart);  // another port each time
  }
  EXPECT_FALSE(failures.Blocked("10.0.0.1:1", kStart)) << "one failure under the limit";
  failures.Failed("10.0.0.1:2", kStart + std::chrono::seconds(10));
  std::optional<int64_t> wait = failures.Blocked("10.0.0.1:3", kStart + std::chrono::seconds(10));
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 50) << "the rest of the window that began with the first failure";
  EXPECT_FALSE(failures.Blocked("10.0.0.2:1", kStart)) << "another address";
  EXPECT_FALSE(failures.Blocked("10.0.0.1:1", kStart + AuthFailures::kWindow));
  // A failure after the window starts a new one.
  failures.Failed("10.0.0.1:4", kStart + AuthFailures::kWindow);
  EXPECT_FALSE(failures.Blocked("10.0.0.1:1", kStart + AuthFailures::kWindow));
}

TEST(AuthFailuresTest, TheAddressIsReadWithoutItsPortForV4AndV6) {
  AuthFailures failures;
  for (int i = 0; i < AuthFailures::kMaxFailures; ++i)
    failures.Failed("[::1]:" + std::to_string(i), kStart);
  EXPECT_TRUE(failures.Blocked("[::1]:9", kStart));
  EXPECT_TRUE(failures.Blocked("::1", kStart)) << "a bare v6 address is the same address";
  EXPECT_FALSE(failures.Blocked("[::2]:9", kStart));
  EXPECT_EQ(failures.tracked(), 1u);
}

TEST(AuthFailuresTest, TheTableIsBoundedAndAFullTableLocksNobodyOut) {
  AuthFailures failures;
  for (size_t i = 0; i < AuthFailures::kMaxAddresses; ++i) {
    failures.Failed("a" + std::to_string(i) + ":1", kStart);
  }
  EXPECT_EQ(failures.tracked(), AuthFailures::kMaxAddresses);
  for (int i = 0; i < 2 * AuthFailures::kMaxFailures; ++i) failures.Failed("new:1", kStart);
  EXPECT_EQ(failures.tracked(), AuthFailures::kMaxAddresses);
  EXPECT_FALSE(failures.Blocked("new:1", kStart)) << "untracked, not refused";
  // Once the tracked windows have ended, they make room.
  failures.Failed("new:1", kStart + AuthFailures::kWindow);
  EXPECT_EQ(failures.tracked(), 1u);
}

}  // namespace
}  // namespace turnpike::doors::admin
