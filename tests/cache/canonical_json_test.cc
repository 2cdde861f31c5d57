#include "cache/canonical_json.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/json.hpp>

#include "cache/key.h"

namespace turnpike::cache {
namespace {

std::string Canon(std::string_view json, const CanonicalOptions& options = {}) {
  Result<std::string> text = CanonicalJson(json, options);
  EXPECT_TRUE(text.ok()) << json;
  return text.ok() ? *text : std::string();
}

TEST(CanonicalJson, SortsKeysAtEveryDepth) {
  EXPECT_EQ(Canon(R"({"b":1,"a":{"z":true,"y":[{"d":null,"c":"x"}]}})"),
            R"({"a":{"y":[{"c":"x","d":null}],"z":true},"b":1})");
  EXPECT_EQ(Canon(R"( { "query" : { "match_all" : { } } , "size" : 3 } )"),
            Canon(R"({"size":3,"query":{"match_all":{}}})"));
}

TEST(CanonicalJson, KeepsArrayOrder) {
  EXPECT_NE(Canon(R"({"sort":["a","b"]})"), Canon(R"({"sort":["b","a"]})"));
}

TEST(CanonicalJson, NormalisesNumbers) {
  EXPECT_EQ(Canon(R"([10, 10.0, 1e1, 1.0E1, -0, -0.0, 1.5, 0.1, -7, 18446744073709551615])"),
            "[10,10,10,10,0,0,1.5,0.1,-7,18446744073709551615]");
  EXPECT_EQ(Canon(R"({"size":10})"), Canon(R"({"size":1e1})"));
  EXPECT_NE(Canon(R"({"size":10})"), Canon(R"({"size":"10"})"));
  EXPECT_EQ(Canon("1e300"), "1e+300");
}

TEST(CanonicalJson, EscapesStringsOneWay) {
  EXPECT_EQ(Canon(R"(["\u0041\/", "a\"b"])"), R"(["A/","a\"b"])");
}

TEST(CanonicalJson, AppliesDefaultsAndDropsIgnoredKeys) {
  boost::json::object defaults{{"size", 10}, {"from", 0}};
  const std::array<std::string_view, 1> ignored = {"request_cache"};
  CanonicalOptions options{&defaults, ignored};
  EXPECT_EQ(
      Canon(R"({"query":{"match_all":{}}})", options),
      Canon(R"({"from":0,"query":{"match_all":{}},"size":10.0,"request_cache":true})", options));
  EXPECT_NE(Canon(R"({"size":5})", options), Canon("{}", options));
  // Defaults apply at the top level only.
  EXPECT_EQ(Canon(R"({"query":{"size":1}})", options),
            R"({"from":0,"query":{"size":1},"size":10})");
}

TEST(CanonicalJson, RejectsMalformedJson) {
  EXPECT_FALSE(CanonicalJson("{\"a\":").ok());
  EXPECT_FALSE(CanonicalJson("").ok());
  EXPECT_EQ(CanonicalJson("{\"a\":").error().code, ErrorCode::kInvalidRequest);
}

TEST(CanonicalJson, SameRequestSameDigestDistinctRequestsDiffer) {
  Result<Digester> digester = Digester::Create();
  ASSERT_TRUE(digester.ok());
  const Digest128 a = digester->Of(Canon(R"({"query":{"term":{"tag":"x"}},"size":10})"));
  const Digest128 b = digester->Of(Canon(R"({"size":10.0,"query":{"term":{"tag":"x"}}})"));
  const Digest128 c = digester->Of(Canon(R"({"query":{"term":{"tag":"y"}},"size":10})"));
  const Digest128 d = digester->Of(Canon(R"({"query":{"term":{"tag":"x"}},"size":11})"));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_NE(c, d);
}

bool UsesNow(std::string_view json) { return UsesNowDateMath(boost::json::parse(json)); }

TEST(UsesNowDateMath, FindsNowInRangeBoundsAnywhere) {
  EXPECT_TRUE(UsesNow(R"({"query":{"range":{"ts":{"gte":"now-1d/d"}}}})"));
  EXPECT_TRUE(UsesNow(R"({"query":{"bool":{"filter":[{"range":{"ts":{"lt":"now"}}}]}}})"));
  EXPECT_TRUE(UsesNow(
      R"({"aggs":{"r":{"date_range":{"field":"ts","ranges":[{"from":"now-1M","to":"now"}]}}}})"));
  EXPECT_TRUE(UsesNow(R"([{"index":"a"},{"query":{"range":{"t":{"lte":"now+1h"}}}}])"));
}

TEST(UsesNowDateMath, IgnoresAbsoluteDatesAndOtherStrings) {
  EXPECT_FALSE(UsesNow(R"({"query":{"range":{"ts":{"gte":"2024-01-01||+1M","lt":1700000000}}}})"));
  EXPECT_FALSE(UsesNow(R"({"query":{"match":{"title":"now"}}})"));
  EXPECT_FALSE(UsesNow(R"({"query":{"term":{"gt":"x"}},"from":0})"));
  EXPECT_FALSE(UsesNow("\"now\""));
}

}  // namespace
}  // namespace turnpike::cache
