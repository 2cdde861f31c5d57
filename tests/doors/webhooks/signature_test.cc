// Standard Webhooks signatures and the retry schedule (doors/webhooks/signature.h).
#include "doors/webhooks/signature.h"

#include <gtest/gtest.h>

#include <set>

namespace turnpike::webhooks {
namespace {

// The Standard Webhooks specification's example, recomputed with
//   KEY=$(echo -n MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p -c 256)
//   printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
//     openssl dgst -sha256 -mac HMAC -macopt hexkey:$KEY -binary | base64
TEST(Signature, MatchesTheSpecificationsExample) {
  EXPECT_EQ(Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                 1614265330, R"({"test": 2432232314})"),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

// A secret without the prefix is its own key:
//   printf '%s' 'whd_1.1700000000.{"type":"x"}' | openssl dgst -sha256 -hmac plain-secret -binary |
//     base64
TEST(Signature, APlainSecretIsUsedAsItsBytes) {
  EXPECT_EQ(Sign("plain-secret", "whd_1", 1700000000, R"({"type":"x"})"),
            "v1,iFMJJTezo/7Y/bk0cF5y6ghTYNrJS3FRyF5xexrGMpk=");
}

TEST(Signature, ChangesWithEachSignedPart) {
  const std::string base = Sign("whsec_c2VjcmV0", "id", 1, "{}");
  EXPECT_NE(Sign("whsec_c2VjcmV1", "id", 1, "{}"), base);
  EXPECT_NE(Sign("whsec_c2VjcmV0", "id2", 1, "{}"), base);
  EXPECT_NE(Sign("whsec_c2VjcmV0", "id", 2, "{}"), base);
  EXPECT_NE(Sign("whsec_c2VjcmV0", "id", 1, "{ }"), base);
}

TEST(Secrets, AreMintedWithThePrefixAnd32Bytes) {
  const std::string a = MintSecret();
  EXPECT_EQ(a.substr(0, 6), "whsec_");
  EXPECT_EQ(SecretKey(a).size(), 32u);
  EXPECT_NE(MintSecret(), a);
}

TEST(Backoff, DoublesFromTheBaseUpToTheCapWithoutJitterAtZero) {
  using std::chrono::milliseconds;
  const milliseconds base(1000), cap(60'000);
  EXPECT_EQ(Backoff(1, base, cap, 0), milliseconds(1000));
  EXPECT_EQ(Backoff(2, base, cap, 0), milliseconds(2000));
  EXPECT_EQ(Backoff(3, base, cap, 0), milliseconds(4000));
  EXPECT_EQ(Backoff(6, base, cap, 0), milliseconds(32'000));
  EXPECT_EQ(Backoff(7, base, cap, 0), milliseconds(60'000));
  EXPECT_EQ(Backoff(1000, base, cap, 0), milliseconds(60'000));
}

TEST(Backoff, JitterAddsAtMostAQuarter) {
  using std::chrono::milliseconds;
  std::set<int64_t> seen;
  for (uint32_t r = 0; r < 2000; r += 7) {
    const milliseconds d = Backoff(3, milliseconds(1000), milliseconds(60'000), r * 2654435761u);
    EXPECT_GE(d.count(), 4000);
    EXPECT_LE(d.count(), 5000);
    seen.insert(d.count());
  }
  EXPECT_GT(seen.size(), 100u);  // spread, not one value
}

}  // namespace
}  // namespace turnpike::webhooks
