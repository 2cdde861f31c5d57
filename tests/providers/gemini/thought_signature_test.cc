// Thought signatures carried in tool call ids: the id handed to a client, and the split when
// the client sends it back (thought_signature.h).
#include "providers/gemini/thought_signature.h"

#include <gtest/gtest.h>

#include <string>

namespace turnpike::providers::gemini {
namespace {

std::string ClientId(std::string plain, std::string_view signature) {
  MakeClientId(plain, signature);
  return plain;
}

TEST(ThoughtSignature, RecognisesBase64) {
  for (std::string_view good : {"AAAA", "AA==", "AAA=", "AA", "AAA", "a+/b", "a-_b", "ab\\/c",
                                "CiQB0e2Kb1fA2bWcU0fnE9d5Wm2A"}) {
    EXPECT_TRUE(IsSignature(good)) << good;
  }
  for (std::string_view bad : {"", "A", "AAAAA", "=", "A===", "AA=A", "AA==\"", "a b", "a.b",
                               "ab\\nc", "AAAA\\", "\\u0041AAA", "AA===", "AAA=="}) {
    EXPECT_FALSE(IsSignature(bad)) << bad;
  }
}

TEST(ThoughtSignature, TheClientIdIsThePlainIdAndTheSignatureInBase64Url) {
  EXPECT_EQ(ClientId("call_r_0", ""), "call_r_0");
  // '+' and '/' become '-' and '_', the padding goes; an escaped solidus is a solidus.
  EXPECT_EQ(ClientId("call_r_0", "ab+/cd=="), "call_r_0_ts_ab-_cd");
  EXPECT_EQ(ClientId("call_r_0", "ab\\/c+=="), "call_r_0_ts_ab_c-");
  EXPECT_EQ(ClientId("x", "a-_b"), "x_ts_a-_b");  // already URL-safe: kept
}

TEST(ThoughtSignature, APlainIdNeverContainsTheSeparator) {
  // With or without a signature: the first "_ts_" of an id is always the gateway's.
  EXPECT_EQ(ClientId("call_ts_x", ""), "call-ts_x");
  EXPECT_EQ(ClientId("a_ts__ts_b", "AAAA"), "a-ts_-ts_b_ts_AAAA");
  EXPECT_EQ(ClientId("a_ts_ts_b", ""), "a-ts-ts_b");  // overlapping occurrences
  const std::string id = ClientId("call_ts_ts_0", "YWJj+/8=");
  const std::optional<CallId> split = SplitCallId(id);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->plain, "call-ts-ts_0");
  EXPECT_EQ(split->signature, "YWJj+/8=");
}

TEST(ThoughtSignature, SplitRestoresTheSignatureWithPadding) {
  for (std::string_view signature : {"AAAA", "AAA=", "AA==", "CiQB0e2Kb1fA2bWcU0fnE9d5Wm2A", "+/+/",
                                     "ab+/cd==", "Zm9vYmFy+w=="}) {
    const std::string id = ClientId("call_Xq8-maN_0", signature);
    const std::optional<CallId> split = SplitCallId(id);
    ASSERT_TRUE(split.has_value()) << id;
    EXPECT_EQ(split->plain, "call_Xq8-maN_0") << id;
    EXPECT_EQ(split->signature, signature) << id;
  }
}

TEST(ThoughtSignature, IdsWithoutTheSeparatorArePlain) {
  for (std::string_view id :
       {"call_abc123", "toolu_01A09q90qw90lq917835lq9", "fc_7d1e0b", "", "a_t_s", "_ts"}) {
    const std::optional<CallId> split = SplitCallId(id);
    ASSERT_TRUE(split.has_value()) << id;
    EXPECT_EQ(split->plain, id);
    EXPECT_TRUE(split->signature.empty()) << id;
  }
}

TEST(ThoughtSignature, AMalformedSignatureSegmentIsRefused) {
  for (std::string_view id :
       {"call_0_ts_", "call_0_ts_A", "call_0_ts_AAAAA", "call_0_ts_AA==", "call_0_ts_AB+C",
        "call_0_ts_AB/C", "call_0_ts_AB.C", "call_0_ts_A B"}) {
    EXPECT_FALSE(SplitCallId(id).has_value()) << id;
  }
}

}  // namespace
}  // namespace turnpike::providers::gemini
