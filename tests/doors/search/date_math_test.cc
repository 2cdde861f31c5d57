// Date math in range bounds (date_math.h) and the search options around it (timeouts), with
// `now` pinned: the parser never reads a clock. Expected instants are written as ISO strings
// and compared through render.h's IsoMillis (gmtime), not through the parser under test.
#include "doors/search/date_math.h"

#include <gtest/gtest.h>

#include "doors/search/dsl.h"
#include "doors/search/es_error.h"
#include "doors/search/render.h"

namespace turnpike::search {
namespace {

constexpr int64_t kNow = 1731940512345;  // 2024-11-18T14:35:12.345Z, a Monday

std::string Resolve(std::string_view text, bool round_up, int64_t now = kNow,
                    int64_t offset_ms = 0) {
  Result<int64_t> ms = ResolveDateBound(text, now, round_up, offset_ms);
  if (!ms.ok()) return "error: " + std::string(EsErrorType(ms.error())) + ": " + ms.error().message;
  return IsoMillis(*ms);
}

int64_t At(std::string_view iso) { return *ParseDateMillis(iso); }

TEST(DateMathTest, NowWithArithmeticAndRoundingPerBound) {
  EXPECT_EQ(Resolve("now", false), "2024-11-18T14:35:12.345Z");
  EXPECT_EQ(Resolve("now-1d", false), "2024-11-17T14:35:12.345Z");
  EXPECT_EQ(Resolve("now+2h-30m", false), "2024-11-18T16:05:12.345Z");
  EXPECT_EQ(Resolve("now+d", false), "2024-11-19T14:35:12.345Z");  // N defaults to 1
  // gte and lt round down to the unit's first millisecond, gt and lte up to its last.
  EXPECT_EQ(Resolve("now-1d/d", false), "2024-11-17T00:00:00.000Z");
  EXPECT_EQ(Resolve("now-1d/d", true), "2024-11-17T23:59:59.999Z");
  EXPECT_EQ(Resolve("now/H", false), "2024-11-18T14:00:00.000Z");
  EXPECT_EQ(Resolve("now/m", true), "2024-11-18T14:35:59.999Z");
  EXPECT_EQ(Resolve("now/s", true), "2024-11-18T14:35:12.999Z");
  EXPECT_EQ(Resolve("now/d+1h", false), "2024-11-18T01:00:00.000Z");  // steps left to right
}

TEST(DateMathTest, RangeQueryDocExamples) {
  // ES's range query docs, "Date math and rounding", 2014-11-18||/M.
  EXPECT_EQ(Resolve("2014-11-18||/M", true), "2014-11-30T23:59:59.999Z");   // gt, lte
  EXPECT_EQ(Resolve("2014-11-18||/M", false), "2014-11-01T00:00:00.000Z");  // gte, lt
  EXPECT_EQ(Resolve("2014-11-18T10:00:00Z||+1d", false), "2014-11-19T10:00:00.000Z");
  EXPECT_EQ(Resolve("1416268800000||/d", false), "2014-11-18T00:00:00.000Z");  // epoch anchor
  EXPECT_EQ(Resolve("2014-11-18||", false), "2014-11-18T00:00:00.000Z");       // no math
}

TEST(DateMathTest, CalendarUnits) {
  EXPECT_EQ(Resolve("now/w", false, At("2024-11-21T08:00:00Z")), "2024-11-18T00:00:00.000Z");
  EXPECT_EQ(Resolve("now/w", true, At("2024-11-21T08:00:00Z")), "2024-11-24T23:59:59.999Z");
  EXPECT_EQ(Resolve("now/w", false, At("1970-01-01T00:00:00Z")), "1969-12-29T00:00:00.000Z");
  EXPECT_EQ(Resolve("now+1M", false, At("2024-01-31T12:00:00Z")), "2024-02-29T12:00:00.000Z");
  EXPECT_EQ(Resolve("now-1y", false, At("2024-02-29T00:00:00Z")), "2023-02-28T00:00:00.000Z");
  EXPECT_EQ(Resolve("now-13M", false, At("2024-03-15T00:00:00Z")), "2023-02-15T00:00:00.000Z");
  EXPECT_EQ(Resolve("now/y", true), "2024-12-31T23:59:59.999Z");
  EXPECT_EQ(Resolve("now/M", true, At("2023-02-10T00:00:00Z")), "2023-02-28T23:59:59.999Z");
  EXPECT_EQ(Resolve("now-2w", false), "2024-11-04T14:35:12.345Z");
  EXPECT_EQ(Resolve("now/d", false, At("1969-12-31T12:00:00Z")), "1969-12-31T00:00:00.000Z");
}

TEST(DateMathTest, MissingComponentsRoundUpOnGtAndLte) {
  EXPECT_EQ(Resolve("2024-01-31", true), "2024-01-31T23:59:59.999Z");
  EXPECT_EQ(Resolve("2024-01-31", false), "2024-01-31T00:00:00.000Z");
  EXPECT_EQ(Resolve("2024-01-31T10:15", true), "2024-01-31T10:15:59.999Z");
  EXPECT_EQ(Resolve("2024-01-31T10:15:30", true), "2024-01-31T10:15:30.999Z");
  EXPECT_EQ(Resolve("2024-01-31T10:15:30.5", true), "2024-01-31T10:15:30.500Z");
  EXPECT_EQ(Resolve("1706659200000", true), "2024-01-31T00:00:00.000Z");  // epoch: exact
}

TEST(DateMathTest, FixedOffsetTimeZones) {
  const int64_t plus1 = *ParseTimeZone("+01:00");
  EXPECT_EQ(plus1, 3'600'000);
  EXPECT_EQ(*ParseTimeZone("-0530"), -(5 * 3'600'000 + 30 * 60'000));
  EXPECT_EQ(*ParseTimeZone("+05"), 5 * 3'600'000);
  EXPECT_EQ(*ParseTimeZone("UTC"), 0);
  EXPECT_EQ(*ParseTimeZone("Z"), 0);
  // `now` is an instant; rounding happens in the zone: local midnight of 2024-11-19 (+01:00).
  EXPECT_EQ(Resolve("now/d", false, At("2024-11-18T23:30:00Z"), plus1), "2024-11-18T23:00:00.000Z");
  EXPECT_EQ(Resolve("now", false, At("2024-11-18T23:30:00Z"), plus1), "2024-11-18T23:30:00.000Z");
  // A date without an offset is local; one with its own offset is not moved.
  EXPECT_EQ(Resolve("2024-01-01T00:00:00", false, kNow, plus1), "2023-12-31T23:00:00.000Z");
  EXPECT_EQ(Resolve("2024-01-01T00:00:00Z", false, kNow, plus1), "2024-01-01T00:00:00.000Z");
  EXPECT_EQ(Resolve("2024-01-01T00:30:00+02:00||/d", false, kNow, plus1),
            "2023-12-30T23:00:00.000Z");  // local 2023-12-31T23:30, /d: 00:00 local
  Result<int64_t> named = ParseTimeZone("Europe/Paris");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(EsErrorType(named.error()), kIllegalArgument);
  EXPECT_NE(named.error().message.find("named time zones are not implemented"), std::string::npos);
  EXPECT_FALSE(ParseTimeZone("+25:00").ok());
  EXPECT_FALSE(ParseTimeZone("+01:00x").ok());
  EXPECT_FALSE(ParseTimeZone("").ok());
}

TEST(DateMathTest, BadMathIsAParseException) {
  EXPECT_EQ(Resolve("now-1x", false),
            "error: parse_exception: unit [x] not supported for date math [-1x]");
  EXPECT_EQ(Resolve("now+", false), "error: parse_exception: truncated date math [+]");
  EXPECT_EQ(Resolve("now-1", false), "error: parse_exception: truncated date math [-1]");
  EXPECT_EQ(Resolve("2026-01-01||/q", false),
            "error: parse_exception: unit [q] not supported for date math [/q]");
  EXPECT_EQ(Resolve("now/2d", false),
            "error: parse_exception: rounding `/` can only be used on single unit types [/2d]");
  EXPECT_EQ(Resolve("nowfoo", false),
            "error: parse_exception: operator not supported for date math [foo]");
  EXPECT_EQ(Resolve("now+99999999999y", false),
            "error: parse_exception: number too large in date math [+99999999999y]");
  EXPECT_EQ(Resolve("now+2000000000y", false),
            "error: parse_exception: date math result out of range [+2000000000y]");
  EXPECT_EQ(Resolve("now+2000000000w+2000000000w", false),
            "error: parse_exception: date math result out of range [+2000000000w+2000000000w]");
  EXPECT_NE(Resolve("2024-13-01||+1d", false).find("failed to parse date field [2024-13-01]"),
            std::string::npos);
  EXPECT_NE(Resolve("9223372036854775807||+1d", false).find("out of range"), std::string::npos);
}

Mapping Events() {
  Result<Mapping> m = ParseMapping(
      R"({"properties":{"at":{"type":"date"},"n":{"type":"long"},"tag":{"type":"keyword"}}})");
  EXPECT_TRUE(m.ok());
  return *m;
}

TEST(DateMathTest, RangeQueriesResolveToEpochMillisWithThePinnedNow) {
  Result<SearchRequest> r = ParseSearch(
      R"({"query":{"bool":{"filter":[{"range":{"at":{"gte":"now-1d/d","lt":"now/d","lte":"now/d","gt":"now-7d/d"}}}]}}})",
      Events(), {}, kNow);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Query& q = r->query.filter.at(0);
  EXPECT_EQ(IsoMillis(std::get<int64_t>(q.gte)), "2024-11-17T00:00:00.000Z");
  EXPECT_EQ(IsoMillis(std::get<int64_t>(q.lt)), "2024-11-18T00:00:00.000Z");
  EXPECT_EQ(IsoMillis(std::get<int64_t>(q.lte)), "2024-11-18T23:59:59.999Z");
  EXPECT_EQ(IsoMillis(std::get<int64_t>(q.gt)), "2024-11-11T23:59:59.999Z");
  // time_zone may follow the bounds; _count and knn filters get the same now.
  Result<Query> c = ParseCount(R"({"query":{"range":{"at":{"gte":"now/d","time_zone":"-05:00"}}}})",
                               Events(), kNow);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(IsoMillis(std::get<int64_t>(c->gte)), "2024-11-18T05:00:00.000Z");
}

TEST(DateMathTest, RangeQueryErrors) {
  auto error = [](std::string_view body) {
    Result<SearchRequest> r = ParseSearch(body, Events(), {}, kNow);
    return r.ok() ? std::string("ok")
                  : std::string(EsErrorType(r.error())) + ": " + r.error().message;
  };
  EXPECT_EQ(error(R"({"query":{"range":{"at":{"gte":"now-1x"}}}})"),
            "parse_exception: unit [x] not supported for date math [-1x]");
  EXPECT_EQ(error(R"({"query":{"range":{"at":{"lt":"now+"}}}})"),
            "parse_exception: truncated date math [+]");
  EXPECT_EQ(error(R"({"query":{"range":{"n":{"gte":"now"}}}})").substr(0, 26),
            "illegal_argument_exception");
  EXPECT_EQ(error(R"({"query":{"range":{"n":{"gte":1,"time_zone":"+01:00"}}}})"),
            "parsing_exception: [range] time_zone can not be applied to non date field [n]");
  EXPECT_NE(error(R"({"query":{"range":{"at":{"gte":"now","time_zone":"America/New_York"}}}})")
                .find("illegal_argument_exception: time_zone [America/New_York] is not supported"),
            std::string::npos);
  EXPECT_EQ(error(R"({"query":{"range":{"at":{"gte":"now","time_zone":1}}}})"),
            "parsing_exception: [range] time_zone must be a string");
}

TEST(TimeValueTest, EsUnitsAndErrors) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(**ParseTimeValue("50ms", "timeout"), nanoseconds(50'000'000));
  EXPECT_EQ(**ParseTimeValue("1s", "timeout"), nanoseconds(1'000'000'000));
  EXPECT_EQ(**ParseTimeValue("1nanos", "timeout"), nanoseconds(1));
  EXPECT_EQ(**ParseTimeValue("3micros", "timeout"), nanoseconds(3'000));
  EXPECT_EQ(**ParseTimeValue("2m", "timeout"), nanoseconds(120'000'000'000));
  EXPECT_EQ(**ParseTimeValue("1d", "timeout"), nanoseconds(86'400'000'000'000));
  EXPECT_EQ(**ParseTimeValue("0", "timeout"), nanoseconds(0));
  EXPECT_FALSE(ParseTimeValue("-1", "timeout")->has_value());
  for (std::string_view bad : {"10", "10x", "ms", "-5s", "1.5s", "", "99999999999d"}) {
    Result<std::optional<nanoseconds>> t = ParseTimeValue(bad, "timeout");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(EsErrorType(t.error()), "parse_exception");
    EXPECT_NE(t.error().message.find("failed to parse setting [timeout] with value ["),
              std::string::npos);
  }
}

TEST(TimeValueTest, SearchTimeoutFromBodyAndUrl) {
  Result<SearchRequest> body =
      ParseSearch(R"({"timeout":"50ms","allow_partial_search_results":false})", Events());
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ(body->timeout, std::chrono::nanoseconds(50'000'000));
  EXPECT_FALSE(body->allow_partial_results);
  UrlOptions url;
  url.timeout = "1s";
  url.allow_partial_search_results = true;
  Result<SearchRequest> both = ParseSearch(R"({"timeout":"50ms"})", Events(), url);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->timeout, std::chrono::nanoseconds(1'000'000'000));  // the URL wins, as in ES
  EXPECT_TRUE(both->allow_partial_results);
  EXPECT_FALSE(ParseSearch("", Events())->timeout.has_value());
  EXPECT_FALSE(ParseSearch(R"({"timeout":"5 parsecs"})", Events()).ok());
  EXPECT_FALSE(ParseSearch(R"({"timeout":50})", Events()).ok());
  url.timeout = "fast";
  Result<SearchRequest> bad = ParseSearch("", Events(), url);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(EsErrorType(bad.error()), "parse_exception");
}

}  // namespace
}  // namespace turnpike::search
