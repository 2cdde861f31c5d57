#include "doors/search/target.h"

#include <gtest/gtest.h>

#include "doors/search/es_error.h"
#include "doors/search/render.h"

namespace turnpike::search {
namespace {

using Verb = boost::beast::http::verb;

TEST(TargetTest, PathsBecomeOperations) {
  struct Case {
    Verb method;
    const char* rest;
    Op op;
    const char* index;
    const char* id;
  } cases[] = {
      {Verb::get, "", Op::kInfo, "", ""},
      {Verb::head, "", Op::kInfo, "", ""},
      {Verb::put, "books", Op::kIndex, "books", ""},
      {Verb::get, "books/_mapping", Op::kMapping, "books", ""},
      {Verb::post, "books/_refresh", Op::kRefresh, "books", ""},
      {Verb::post, "books/_doc", Op::kDocNew, "books", ""},
      {Verb::delete_, "books/_doc/a%2Fb", Op::kDoc, "books", "a/b"},
      {Verb::put, "books/_create/1", Op::kCreate, "books", "1"},
      {Verb::post, "books/_update/1", Op::kUpdate, "books", "1"},
      {Verb::post, "_bulk", Op::kBulk, "", ""},
      {Verb::put, "books/_bulk", Op::kBulk, "books", ""},
      {Verb::get, "books/_search", Op::kSearch, "books", ""},
      {Verb::post, "books/_count", Op::kCount, "books", ""},
      {Verb::post, "_msearch", Op::kMsearch, "", ""},
  };
  for (const Case& c : cases) {
    Result<Target> t = ParseTarget(c.method, c.rest, "");
    ASSERT_TRUE(t.ok()) << c.rest << ": " << t.error().message;
    EXPECT_EQ(t->op, c.op) << c.rest;
    EXPECT_EQ(t->index, c.index) << c.rest;
    EXPECT_EQ(t->id, c.id) << c.rest;
  }
}

TEST(TargetTest, OutsideTheSubsetIsA400AndAWrongMethodA405) {
  for (const char* rest : {"_search", "books/_explain/1", "_cat/indices", "a/b/c/d"}) {
    Result<Target> t = ParseTarget(Verb::get, rest, "");
    ASSERT_FALSE(t.ok()) << rest;
    EXPECT_EQ(HttpStatus(t.error().code), 400) << rest;
  }
  Result<Target> method = ParseTarget(Verb::delete_, "books/_search", "");
  ASSERT_FALSE(method.ok());
  EXPECT_EQ(HttpStatus(method.error().code), 405);
  for (const char* name : {"Books", "-x", "a*b", "a,b", ".."}) {
    Result<Target> t = ParseTarget(Verb::put, name, "");
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_EQ(EsErrorType(t.error()), "invalid_index_name_exception") << name;
  }
}

TEST(TargetTest, QueryOptions) {
  Result<Target> t = ParseTarget(
      Verb::post, "books/_search",
      "size=5&from=10&track_total_hits=true&rest_total_hits_as_int=true&request_cache=false");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->url.size, 5);
  EXPECT_EQ(t->url.from, 10);
  EXPECT_EQ(t->url.track_total_hits, "true");
  EXPECT_EQ(t->url.rest_total_hits_as_int, true);
  EXPECT_EQ(t->url.request_cache, false);
  EXPECT_TRUE(ParseTarget(Verb::put, "books/_doc/1", "op_type=create&refresh=wait_for")->op_create);
  Result<Target> unknown = ParseTarget(Verb::get, "books/_search", "filter_path=hits");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("filter_path"), std::string::npos);
  EXPECT_FALSE(ParseTarget(Verb::get, "books/_search", "size=-1").ok());
  EXPECT_FALSE(ParseTarget(Verb::get, "books/_search", "size=%zz").ok());
  // A search's timeout options; timeout stays harmless on writes, the other is search-only.
  Result<Target> timed =
      ParseTarget(Verb::post, "books/_search", "timeout=50ms&allow_partial_search_results=false");
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  EXPECT_EQ(timed->url.timeout, "50ms");
  EXPECT_EQ(timed->url.allow_partial_search_results, false);
  EXPECT_TRUE(ParseTarget(Verb::put, "books/_doc/1", "timeout=1m").ok());
  EXPECT_FALSE(ParseTarget(Verb::put, "books/_doc/1", "allow_partial_search_results=true").ok());
  EXPECT_FALSE(ParseTarget(Verb::get, "books/_search", "allow_partial_search_results=maybe").ok());
}

TEST(RenderTest, SearchAnswerShape) {
  SearchRequest r;
  r.sort_requested = true;
  r.sort.resize(2);
  Page page;
  Hit hit;
  hit.id = "1";
  hit.sort = {Value{int64_t{5}}, Value{std::string("1")}};
  hit.source = R"({"a":1})";
  page.hits.push_back(hit);
  Total total{12, false};
  SearchAnswer a;
  a.request = &r;
  a.index = "books";
  a.page = &page;
  a.total = &total;
  EXPECT_EQ(
      RenderSearch(a),
      R"({"took":0,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},)"
      R"("hits":{"total":{"value":12,"relation":"gte"},"max_score":null,"hits":[)"
      R"({"_index":"books","_id":"1","_score":null,"_source":{"a":1},"sort":[5,"1"]}]}})");
  r.rest_total_hits_as_int = true;
  EXPECT_NE(RenderSearch(a).find(R"("hits":{"total":12,)"), std::string::npos);
  EXPECT_EQ(IsoMillis(1577836800500), "2020-01-01T00:00:00.500Z");
}

}  // namespace
}  // namespace turnpike::search
