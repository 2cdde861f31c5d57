// The layout's names and ids: tenants never share a collection name, point ids are stable
// RFC 4122-shaped UUIDs that differ by tenant and index, and kNN scores follow ES.
#include "doors/search/qdrant/layout.h"

#include <gtest/gtest.h>

#include <regex>

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
