// The layout's names and ids: tenants never share a collection name, point ids are stable
// RFC 4122-shaped UUIDs that differ by tenant and index, and kNN scores follow ES.
#include "doors/search/qdrant/layout.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "doors/search/qdrant/filter.h"

namespace turnpike::search::qdrant {
namespace {

TEST(QdrantLayout, CollectionNamesKeepTenantsApart) {
  EXPECT_EQ(CollectionName("acme", "books"), "tacme__books");
  EXPECT_EQ(CollectionName("a/b c", "books"), "ta~2fb~20c__books");
  EXPECT_NE(CollectionName("a~2f", "x"), CollectionName("a/", "x"));
  EXPECT_NE(CollectionName("a", "b__c"), CollectionName("a__b", "c"));
  EXPECT_EQ(CollectionName("team_1", "x"), "tteam~5f1__x");
}

TEST(QdrantLayout, CollectionNamesReadBackToTheirTenantAndIndex) {
  for (const auto& [tenant, index] : std::vector<std::pair<std::string, std::string>>{
           {"acme", "books"}, {"a/b c", "x"}, {"team_1", "b__c"}, {"a~2f", "y"}, {"\xff", "z"}}) {
    const auto parsed = ParseCollectionName(CollectionName(tenant, index));
    ASSERT_TRUE(parsed.has_value()) << tenant;
    EXPECT_EQ(parsed->first, tenant);
    EXPECT_EQ(parsed->second, index);
  }
  // Names CollectionName never makes: no 't', no separator, an empty part, a bad or uppercase
  // escape, a byte it would have escaped.
  for (const char* name : {"someone_else", "tacme", "t__x", "tacme__", "ta~2__x", "ta~zz__x",
                           "ta~2F__x", "ta_b__x", "x__y"}) {
    EXPECT_FALSE(ParseCollectionName(name).has_value()) << name;
  }
}

TEST(QdrantLayout, PointIdsAreStableUuidsPerTenantAndIndex) {
  const std::string id = PointId("acme", "books", "1");
  EXPECT_TRUE(std::regex_match(
      id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << id;
  EXPECT_EQ(id, PointId("acme", "books", "1"));
  EXPECT_NE(id, PointId("acme2", "books", "1"));
  EXPECT_NE(id, PointId("acme", "books2", "1"));
  EXPECT_NE(PointId("a", std::string_view("b\0c", 3), "d"),
            PointId("a", "b", std::string_view("c\0d", 3)));
}

TEST(QdrantLayout, EsScoresOfQdrantScores) {
  EXPECT_DOUBLE_EQ(EsScore(Similarity::kCosine, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(EsScore(Similarity::kCosine, -1.0), 0.0);
  EXPECT_DOUBLE_EQ(EsScore(Similarity::kDotProduct, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(EsScore(Similarity::kL2Norm, 2.0), 0.2);
}

TEST(QdrantLayout, WordsAsTheTextFilterUsesThem) {
  EXPECT_EQ(Words("The Left-Hand, of DARKNESS 42"),
            (std::vector<std::string>{"the", "left", "hand", "of", "darkness", "42"}));
  EXPECT_EQ(Words("  ...  "), std::vector<std::string>{});
  EXPECT_EQ(Words("café au lait"), (std::vector<std::string>{"café", "au", "lait"}));
}

}  // namespace
}  // namespace turnpike::search::qdrant
