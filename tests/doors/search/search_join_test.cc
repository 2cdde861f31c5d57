// The join of a search's legs (search_join.h): partial answers when a leg missed its deadline,
// `_shards` failures when the cover leg failed, the allow_partial_search_results=false errors,
// and what the rendered answer says (render.h).
#include "doors/search/search_join.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "doors/search/dsl.h"
#include "doors/search/es_error.h"
#include "doors/search/render.h"

namespace turnpike::search {
namespace {

namespace json = boost::json;

const Error kTimedOut{ErrorCode::kUpstreamTimeout, "the call missed its deadline",
                      std::string(kTimeout)};

SearchRequest Request(std::string_view body) {
  Result<Mapping> m =
      ParseMapping(R"({"properties":{"n":{"type":"long"},"tag":{"type":"keyword"}}})");
  Result<SearchRequest> r = ParseSearch(body, *m);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return *r;
}

Page ThreeHits() {
  Page p;
  for (const char* id : {"a", "b", "c"}) p.hits.push_back(Hit{id, 0, {}, R"({"n":1})"});
  return p;
}

json::object Rendered(const SearchRequest& r, const Joined& j) {
  SearchAnswer a;
  a.request = &r;
  a.index = "books";
  a.coverage = j.coverage;
  a.page = j.page ? &*j.page : nullptr;
  a.total = j.total ? &*j.total : nullptr;
  a.aggs = j.aggs ? &*j.aggs : nullptr;
  a.shard_failure = j.shard_failure ? &*j.shard_failure : nullptr;
  a.timed_out = j.timed_out;
  return json::parse(RenderSearch(a)).as_object();
}

TEST(SearchJoinTest, EveryLegAnsweredIsCompleteAndCacheable) {
  const SearchRequest r = Request(R"({"track_total_hits":true})");
  LegResults legs;
  legs.page = ThreeHits();
  legs.total = Total{42, true, false};
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(j->complete());
  EXPECT_FALSE(j->timed_out);
  json::object out = Rendered(r, *j);
  EXPECT_EQ(out["timed_out"], json::value(false));
  EXPECT_EQ(out["hits"].at("total"), json::parse(R"({"value":42,"relation":"eq"})"));
  EXPECT_EQ(out["_shards"], json::parse(R"({"total":1,"successful":1,"skipped":0,"failed":0})"));
}

TEST(SearchJoinTest, CountTimedOutGivesHitsAndALowerBoundTotal) {
  const SearchRequest r = Request(R"({"from":5,"size":3,"track_total_hits":true})");
  LegResults legs;
  legs.page = ThreeHits();
  legs.total = Result<Total>(kTimedOut);
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_TRUE(j.ok());
  EXPECT_FALSE(j->complete());
  EXPECT_EQ(j->timed_out_legs, std::vector<std::string>{"count"});
  json::object out = Rendered(r, *j);
  EXPECT_EQ(out["timed_out"], json::value(true));
  // from (5) documents come before the page's 3 hits: at least 8 match.
  EXPECT_EQ(out["hits"].at("total"), json::parse(R"({"value":8,"relation":"gte"})"));
  EXPECT_EQ(out["hits"].at("hits").as_array().size(), 3u);
  // An empty page proves nothing; track_total_hits caps the bound.
  LegResults empty;
  empty.page = Page{};
  empty.total = Result<Total>(kTimedOut);
  EXPECT_EQ(JoinLegs(r, std::move(empty))->total->value, 0);
  const SearchRequest capped = Request(R"({"from":5,"size":3,"track_total_hits":2})");
  LegResults few;
  few.page = ThreeHits();
  few.total = Result<Total>(kTimedOut);
  EXPECT_EQ(JoinLegs(capped, std::move(few))->total->value, 2);
}

TEST(SearchJoinTest, PageTimedOutAnswersNoHitsWithTheTotal) {
  const SearchRequest r = Request(R"({"track_total_hits":true})");
  LegResults legs;
  legs.page = Result<Page>(kTimedOut);
  legs.total = Total{42, true, false};
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_TRUE(j.ok());
  json::object out = Rendered(r, *j);
  EXPECT_EQ(out["timed_out"], json::value(true));
  EXPECT_TRUE(out["hits"].at("hits").as_array().empty());
  EXPECT_EQ(out["hits"].at("total"), json::parse(R"({"value":42,"relation":"eq"})"));
}

TEST(SearchJoinTest, AggsTimedOutRenderEveryAggregationEmpty) {
  const SearchRequest r = Request(R"({"size":0,"aggs":{"tags":{"terms":{"field":"tag"}}}})");
  LegResults legs;
  legs.total = Total{4, true, false};
  legs.aggs = Result<std::vector<AggResult>>(kTimedOut);
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_TRUE(j.ok());
  json::object out = Rendered(r, *j);
  EXPECT_EQ(out["timed_out"], json::value(true));
  EXPECT_EQ(out["aggregations"],
            json::parse(R"({"tags":{"doc_count_error_upper_bound":0,"sum_other_doc_count":0,
                            "buckets":[]}})"));
}

TEST(SearchJoinTest, CoverFailedIsAFailedShardWithEsFailures) {
  const SearchRequest r = Request("");
  LegResults legs;
  legs.page = ThreeHits();
  legs.total = Total{3, true, false};
  legs.coverage = Error{ErrorCode::kUnavailable, "qdrant unreachable: refused", ""};
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_TRUE(j.ok());
  EXPECT_FALSE(j->complete());
  EXPECT_FALSE(j->timed_out);
  json::object out = Rendered(r, *j);
  EXPECT_EQ(out["_shards"], json::parse(R"({"total":1,"successful":0,"skipped":0,"failed":1,
      "failures":[{"shard":0,"index":"books","reason":{"type":"exception",
                   "reason":"qdrant unreachable: refused"}}]})"));
  LegResults timed;
  timed.coverage = Result<Coverage>(kTimedOut);
  Result<Joined> t = JoinLegs(r, std::move(timed));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Rendered(r, *t)["_shards"].at("failures").at(0).at("reason").at("type"),
            json::value("timeout_exception"));
}

TEST(SearchJoinTest, OtherErrorsStillFailTheSearch) {
  const SearchRequest r = Request("");
  LegResults legs;
  legs.page = Result<Page>(EsError(kIllegalArgument, "too many candidates"));
  legs.total = Result<Total>(kTimedOut);
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().message, "too many candidates");
  LegResults gone;
  gone.coverage = EsError(kIndexNotFound, "no such index [books]", ErrorCode::kNotFound);
  EXPECT_EQ(HttpStatus(JoinLegs(r, std::move(gone)).error().code), 404);
  // A cover leg that says the index changed under the search (Qdrant's mapping cache) fails
  // it, though its code alone (503) would be a failed shard.
  LegResults recreated;
  recreated.page = Page{};
  recreated.coverage =
      EsError(kSearchPhase, "index [books] was re-created; retry", ErrorCode::kUnavailable);
  Result<Joined> changed = JoinLegs(r, std::move(recreated));
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(HttpStatus(changed.error().code), 503);
  EXPECT_EQ(changed.error().param, kSearchPhase);
}

TEST(SearchJoinTest, NoPartialResultsAllowedTurnsThemIntoErrors) {
  const SearchRequest r = Request(R"({"allow_partial_search_results":false})");
  LegResults legs;
  legs.page = ThreeHits();
  legs.total = Result<Total>(kTimedOut);
  Result<Joined> j = JoinLegs(r, std::move(legs));
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(HttpStatus(j.error().code), 504);
  EXPECT_EQ(EsErrorType(j.error()), kSearchPhase);
  EXPECT_NE(j.error().message.find("[count] leg"), std::string::npos);
  LegResults shard;
  shard.coverage = Error{ErrorCode::kUnavailable, "unreachable", ""};
  Result<Joined> s = JoinLegs(r, std::move(shard));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(HttpStatus(s.error().code), 503);
  EXPECT_EQ(EsErrorType(s.error()), kSearchPhase);
  LegResults fine;
  fine.page = ThreeHits();
  EXPECT_TRUE(JoinLegs(r, std::move(fine)).ok());
}

}  // namespace
}  // namespace turnpike::search
