#include "doors/search/dsl.h"

#include <gtest/gtest.h>

#include "doors/search/bulk.h"
#include "doors/search/document.h"
#include "doors/search/es_error.h"
#include "doors/search/mapping.h"

namespace turnpike::search {
namespace {

Mapping Books() {
  Result<Mapping> m = ParseMapping(R"({"properties":{
    "title":{"type":"text"}, "genre":{"type":"keyword"}, "pages":{"type":"integer"},
    "price":{"type":"double"}, "published":{"type":"date"}, "in_stock":{"type":"boolean"},
    "author":{"properties":{"name":{"type":"keyword"}}},
    "embedding":{"type":"dense_vector","dims":3,"similarity":"cosine"}}})");
  EXPECT_TRUE(m.ok()) << m.error().message;
  return *m;
}

TEST(MappingTest, FlattensObjectsAndRendersThemBack) {
  const Mapping m = Books();
  ASSERT_NE(m.Find("author.name"), nullptr);
  EXPECT_EQ(m.Find("pages")->type, FieldType::kLong);
  EXPECT_EQ(m.Find("pages")->type_name, "integer");
  EXPECT_EQ(m.Find("embedding")->dims, 3);
  Result<Mapping> again = ParseMapping(RenderMapping(m));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(RenderMapping(*again), RenderMapping(m));
  EXPECT_NE(RenderMapping(m).find(R"("author":{"properties":{"name":{"type":"keyword"}}})"),
            std::string::npos);
}

TEST(MappingTest, UnknownTypeIsMapperParsingException) {
  Result<Mapping> m = ParseMapping(R"({"properties":{"x":{"type":"geo_point"}}})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(EsErrorType(m.error()), kMapperParsing);
  EXPECT_EQ(HttpStatus(m.error().code), 400);
  EXPECT_FALSE(ParseMapping(R"({"properties":{"v":{"type":"dense_vector"}}})").ok());
}

TEST(MappingTest, MergeAddsButNeverRetypes) {
  Result<Mapping> added = ParseMapping(R"({"properties":{"isbn":{"type":"keyword"}}})");
  ASSERT_TRUE(added.ok());
  Result<Mapping> merged = MergeMapping(Books(), *added);
  ASSERT_TRUE(merged.ok());
  EXPECT_NE(merged->Find("isbn"), nullptr);
  Result<Mapping> retype = ParseMapping(R"({"properties":{"pages":{"type":"keyword"}}})");
  EXPECT_FALSE(MergeMapping(Books(), *retype).ok());
}

TEST(DslTest, DefaultsMatchAllScoreThenIdTieBreaker) {
  Result<SearchRequest> r = ParseSearch("", Books());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->query.kind, QueryKind::kMatchAll);
  ASSERT_EQ(r->sort.size(), 2u);
  EXPECT_EQ(r->sort[0].kind, SortKey::Kind::kScore);
  EXPECT_TRUE(r->sort[0].descending);
  EXPECT_EQ(r->sort[1].kind, SortKey::Kind::kId);
  EXPECT_EQ(r->size, 10);
  EXPECT_EQ(r->track_total_up_to, kDefaultTrackTotal);
}

TEST(DslTest, TypesValuesAgainstTheMapping) {
  Result<SearchRequest> r = ParseSearch(R"({"query":{"bool":{
      "filter":[{"range":{"published":{"gte":"2020-01-01","lt":1700000000000}}},
                {"term":{"in_stock":"true"}}, {"terms":{"pages":["100", 200]}}],
      "should":[{"match":{"title":"quick fox"}}],
      "must_not":{"exists":{"field":"author"}}}},
    "sort":[{"price":{"order":"desc","missing":"_first"}},"_score"],
    "track_total_hits":true, "_source":{"excludes":["embedding"]}, "from":5, "size":20})",
                                        Books());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Query& b = r->query;
  ASSERT_EQ(b.filter.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(b.filter[0].gte), 1577836800000);
  EXPECT_EQ(std::get<int64_t>(b.filter[0].lt), 1700000000000);
  EXPECT_EQ(std::get<bool>(b.filter[1].values[0]), true);
  EXPECT_EQ(std::get<int64_t>(b.filter[2].values[0]), 100);
  EXPECT_EQ(b.minimum_should_match, 0);  // should is optional next to filter
  EXPECT_TRUE(b.Scores());
  ASSERT_EQ(r->sort.size(), 3u);
  EXPECT_TRUE(r->sort[0].descending);
  EXPECT_TRUE(r->sort[0].missing_first);
  EXPECT_EQ(r->track_total_up_to, kExactTotal);
  EXPECT_TRUE(r->scored);
}

TEST(DslTest, MatchOnKeywordIsATerm) {
  Result<SearchRequest> r = ParseSearch(R"({"query":{"match":{"genre":"sf"}}})", Books());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->query.kind, QueryKind::kTerm);
}

TEST(DslTest, BadInputIsA400NamingTheProblem) {
  const Mapping m = Books();
  struct Case {
    const char* body;
    std::string_view type;
  } cases[] = {
      {"{", kParsingException},
      {R"({"query":{"fuzzy":{"title":"x"}}})", kParsingException},
      {R"({"query":{"term":{"pages":"many"}}})", kIllegalArgument},
      {R"({"query":{"term":{"nope":"x"}}})", kIllegalArgument},
      {R"({"size":10001})", kIllegalArgument},
      {R"({"from":9995,"size":10})", kIllegalArgument},
      {R"({"sort":["title"]})", kIllegalArgument},
      {R"({"knn":{"field":"embedding","query_vector":[1,2],"k":3}})", kIllegalArgument},
      {R"({"highlight":{}})", kParsingException},
      {R"({"aggs":{"a":{"avg":{"field":"price"}}}})", kParsingException},
      {R"({"search_after":[1]})", kIllegalArgument},
      {R"({"query":{"range":{"published":{"gte":"now-1q"}}}})", "parse_exception"},
      {R"({"query":{"range":{"published":{"gte":"2024-02-30"}}}})", "parse_exception"},
  };
  for (const Case& c : cases) {
    Result<SearchRequest> r = ParseSearch(c.body, m);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(EsErrorType(r.error()), c.type) << c.body << ": " << r.error().message;
    EXPECT_EQ(HttpStatus(r.error().code), 400) << c.body;
  }
}

TEST(DslTest, KnnDefaultsAndSearchAfter) {
  Result<SearchRequest> r = ParseSearch(
      R"({"knn":{"field":"embedding","query_vector":[1,0,0],"k":5,"filter":{"term":{"genre":"sf"}}}})",
      Books());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->knn->k, 5);
  EXPECT_GE(r->knn->num_candidates, 5);
  ASSERT_TRUE(r->knn->filter.has_value());
  Result<SearchRequest> page =
      ParseSearch(R"({"sort":[{"pages":"asc"}],"search_after":[120,"doc-7"]})", Books());
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(std::get<int64_t>(page->search_after[0]), 120);
  EXPECT_EQ(std::get<std::string>(page->search_after[1]), "doc-7");
}

TEST(DslTest, Dates) {
  EXPECT_EQ(ParseDateMillis("1970-01-01"), 0);
  EXPECT_EQ(ParseDateMillis("2020-01-01T00:00:00Z"), 1577836800000);
  EXPECT_EQ(ParseDateMillis("2020-01-01T01:00:00.5+01:00"), 1577836800500);
  EXPECT_EQ(ParseDateMillis("1577836800000"), 1577836800000);
  EXPECT_FALSE(ParseDateMillis("2020-13-01").has_value());
  EXPECT_FALSE(ParseDateMillis("yesterday").has_value());
}

TEST(DocumentTest, ExtractsTypedValuesAndRefusesWrongTypes) {
  const Mapping m = Books();
  Result<Document> d = ExtractDocument(
      m, "1", R"({"title":"A","pages":[1,2],"author":{"name":"X"},"embedding":[1,2,3],"extra":1})");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->fields.size(), 3u);
  ASSERT_EQ(d->vectors.size(), 1u);
  EXPECT_EQ(d->vectors[0].vector[2], 3.0F);
  Result<Document> bad = ExtractDocument(m, "2", R"({"pages":"lots"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(EsErrorType(bad.error()), kMapperParsing);
  EXPECT_FALSE(ExtractDocument(m, "3", R"({"embedding":[1,2]})").ok());
}

TEST(DocumentTest, SourceFilteringAndMerge) {
  SourceFilter f;
  f.excludes = {"embedding"};
  EXPECT_EQ(FilterSource(R"({"a":1,"embedding":[1,2],"o":{"b":2}})", f), R"({"a":1,"o":{"b":2}})");
  SourceFilter inc;
  inc.includes = {"o.b"};
  EXPECT_EQ(FilterSource(R"({"a":1,"o":{"b":2,"c":3}})", inc), R"({"o":{"b":2}})");
  Result<std::string> merged = MergeSource(R"({"a":1,"o":{"b":2}})", R"({"o":{"c":3},"d":4})");
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(*merged, R"({"a":1,"o":{"b":2,"c":3},"d":4})");
}

TEST(BulkTest, ReadsActionsAndRefusesMalformedLines) {
  Result<std::vector<BulkAction>> a = ReadBulk(
      "{\"index\":{\"_index\":\"b\",\"_id\":\"1\"}}\n{\"x\":1}\n"
      "{\"delete\":{\"_id\":\"2\"}}\n\n{\"update\":{\"_id\":3}}\n{\"doc\":{\"y\":2}}",
      "dflt");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[1].index, "dflt");
  EXPECT_EQ((*a)[2].id, "3");
  EXPECT_EQ((*a)[2].source, R"({"y":2})");
  EXPECT_FALSE(ReadBulk("{\"index\":{}}\n", "").ok());
  EXPECT_FALSE(ReadBulk("{\"upsert\":{\"_id\":\"1\"}}\n{}\n", "i").ok());
  EXPECT_FALSE(ReadBulk("{\"index\":{\"_id\":\"1\"}}\n", "i").ok());
  EXPECT_FALSE(ReadBulk("{\"update\":{\"_id\":\"1\"}}\n{\"script\":{}}\n", "i").ok());
}

}  // namespace
}  // namespace turnpike::search

namespace turnpike::search {
namespace {

TEST(EsErrorTest, RendersElasticsearchsShape) {
  EXPECT_EQ(RenderEsError(EsError(kParsingException, "bad \"x\"")),
            R"({"error":{"root_cause":[{"type":"parsing_exception","reason":"bad \"x\""}],)"
            R"("type":"parsing_exception","reason":"bad \"x\""},"status":400})");
}

}  // namespace
}  // namespace turnpike::search
