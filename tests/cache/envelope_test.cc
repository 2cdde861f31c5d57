#include "cache/envelope.h"

#include <gtest/gtest.h>

namespace turnpike::cache {
namespace {

Envelope WithBody(std::string body) {
  Envelope e;
  e.body = std::move(body);
  const TookSpan took = FindTook(e.body);
  e.took_offset = took.offset;
  e.took_length = took.length;
  return e;
}

TEST(Took, FoundAsTheFirstOrALaterTopLevelMember) {
  EXPECT_EQ(RestampedBody(WithBody(R"({"took":5,"timed_out":false})"), 123),
            R"({"took":123,"timed_out":false})");
  EXPECT_EQ(RestampedBody(WithBody(R"({ "hits" : {"took":9,"x":"\"took\":1"} , "took" : 42 })"), 7),
            R"({ "hits" : {"took":9,"x":"\"took\":1"} , "took" : 7 })");
}

TEST(Took, NestedOrInStringsIsNotTheTopLevelTook) {
  EXPECT_EQ(FindTook(R"({"hits":{"took":3}})").offset, kNoTook);
  EXPECT_EQ(FindTook(R"({"s":"\"took\":3"})").offset, kNoTook);
  EXPECT_EQ(FindTook(R"({"took":"3"})").offset, kNoTook);
  EXPECT_EQ(FindTook(R"([{"took":3}])").offset, kNoTook);
  EXPECT_EQ(FindTook("").offset, kNoTook);
  EXPECT_EQ(FindTook(R"({"took":)").offset, kNoTook);
}

TEST(Took, WithoutASpanTheBodyIsUnchanged) {
  Envelope e = WithBody(R"({"count":3})");
  TookParts parts = RestampTook(e, 99);
  EXPECT_EQ(parts.prefix, e.body);
  EXPECT_TRUE(parts.number().empty());
  EXPECT_TRUE(parts.suffix.empty());
}

TEST(Envelope, EncodeDecodeRoundTrip) {
  Envelope e = WithBody(R"({"took":1,"hits":[]})");
  e.generation = 7;
  e.expires_at_ms = 1700000000123;
  e.status = 200;
  e.content_type = "application/json";
  std::optional<Envelope> back = Decode(Encode(e));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->generation, 7u);
  EXPECT_EQ(back->expires_at_ms, 1700000000123);
  EXPECT_EQ(back->status, 200);
  EXPECT_EQ(back->content_type, "application/json");
  EXPECT_EQ(back->body, e.body);
  EXPECT_EQ(RestampedBody(*back, 2), R"({"took":2,"hits":[]})");
}

TEST(Envelope, DecodeRefusesMalformedInput) {
  Envelope e = WithBody(R"({"took":1})");
  const std::string bytes = Encode(e);
  EXPECT_FALSE(Decode(""));
  EXPECT_FALSE(Decode(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(Decode(bytes + "x"));
  std::string wrong_version = bytes;
  wrong_version[0] = 9;
  EXPECT_FALSE(Decode(wrong_version));
  e.took_offset = 100;  // beyond the body
  EXPECT_FALSE(Decode(Encode(e)));
}

TEST(Envelope, Expiry) {
  Envelope e;
  e.expires_at_ms = 1000;
  EXPECT_FALSE(e.Expired(999));
  EXPECT_TRUE(e.Expired(1000));
}

}  // namespace
}  // namespace turnpike::cache
