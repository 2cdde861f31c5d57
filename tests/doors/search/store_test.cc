#include "doors/search/embedded/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "doors/search/dsl.h"
#include "doors/search/embedded/index.h"
#include "doors/search/es_error.h"

namespace turnpike::search::embedded {
namespace {

constexpr const char* kMapping = R"({"properties":{
  "title":{"type":"text"}, "genre":{"type":"keyword"}, "pages":{"type":"long"},
  "v":{"type":"dense_vector","dims":2,"similarity":"l2_norm"}}})";

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("search_store_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    Reopen();
    ASSERT_TRUE(store_->CreateIndex("t1", "books", *ParseMapping(kMapping)).ok());
  }
  void TearDown() override {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<Store>> s = Store::Open(path_.string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
  }
  void Put(std::string_view tenant, std::string id, std::string source) {
    Result<IndexInfo> info = store_->GetIndex(tenant, "books");
    ASSERT_TRUE(info.ok());
    Result<Document> doc = ExtractDocument(info->mapping, std::move(id), std::move(source));
    ASSERT_TRUE(doc.ok()) << doc.error().message;
    std::vector<WriteOp> ops(1);
    ops[0].doc = std::move(*doc);
    ASSERT_TRUE(store_->Write(tenant, "books", std::move(ops)).ok());
  }
  void Seed() {
    Put("t1", "a", R"({"title":"the quick brown fox","genre":"sf","pages":300,"v":[0,0]})");
    Put("t1", "b", R"({"title":"a lazy dog","genre":"crime","pages":120,"v":[1,1]})");
    Put("t1", "c", R"({"title":"quick quick quick","genre":"sf","pages":120,"v":[5,5]})");
    Put("t1", "d", R"({"title":"brown bear","genre":"nature","v":[0.1,0]})");
  }
  std::vector<std::string> Ids(std::string_view body, std::string tenant = "t1") {
    Result<SearchRequest> r = ParseSearch(body, store_->GetIndex(tenant, "books")->mapping);
    EXPECT_TRUE(r.ok()) << r.error().message;
    Result<Page> page = store_->Search(tenant, "books", *r);
    EXPECT_TRUE(page.ok()) << page.error().message;
    std::vector<std::string> ids;
    for (const Hit& h : page->hits) ids.push_back(h.id);
    return ids;
  }

  std::filesystem::path path_;
  std::unique_ptr<Store> store_;
};

using V = std::vector<std::string>;

TEST_F(StoreTest, FiltersSortsAndBreaksTiesById) {
  Seed();
  EXPECT_EQ(Ids(R"({"query":{"term":{"genre":"sf"}},"sort":[{"pages":"desc"}]})"), (V{"a", "c"}));
  EXPECT_EQ(Ids(R"({"sort":[{"pages":"asc"}]})"), (V{"b", "c", "a", "d"}));  // missing last
  EXPECT_EQ(Ids(R"({"sort":[{"pages":{"order":"asc","missing":"_first"}}]})"),
            (V{"d", "b", "c", "a"}));
  EXPECT_EQ(Ids(R"({"query":{"range":{"pages":{"gt":120}}}})"), (V{"a"}));
  EXPECT_EQ(Ids(R"({"query":{"bool":{"must_not":{"exists":{"field":"pages"}}}}})"), (V{"d"}));
  EXPECT_EQ(Ids(R"({"query":{"ids":{"values":["d","b"]}},"sort":["_id"]})"), (V{"b", "d"}));
  EXPECT_EQ(Ids(R"({"query":{"prefix":{"genre":"cr"}}})"), (V{"b"}));
}

TEST_F(StoreTest, TextRanksByBm25AndPhrasesNeedOrder) {
  Seed();
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"quick"}}})"), (V{"c", "a"}));
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":{"query":"quick brown","operator":"and"}}}})"),
            (V{"a"}));
  EXPECT_EQ(Ids(R"({"query":{"match_phrase":{"title":"brown fox"}}})"), (V{"a"}));
  EXPECT_TRUE(Ids(R"({"query":{"match_phrase":{"title":"fox brown"}}})").empty());
  EXPECT_EQ(Ids(R"({"query":{"multi_match":{"query":"nature","fields":["title","genre"]}}})"),
            (V{"d"}));
}

TEST_F(StoreTest, SearchAfterPagesThroughEverythingOnce) {
  Seed();
  std::string after;
  V seen;
  for (int i = 0; i < 10; ++i) {
    std::string body = R"({"size":1,"sort":[{"pages":"asc"}])" + after + "}";
    Result<SearchRequest> r = ParseSearch(body, store_->GetIndex("t1", "books")->mapping);
    ASSERT_TRUE(r.ok()) << r.error().message;
    Result<Page> page = store_->Search("t1", "books", *r);
    ASSERT_TRUE(page.ok());
    if (page->hits.empty()) break;
    const Hit& h = page->hits[0];
    seen.push_back(h.id);
    const std::string pages = std::holds_alternative<int64_t>(h.sort[0])
                                  ? std::to_string(std::get<int64_t>(h.sort[0]))
                                  : "null";
    after = R"(,"search_after":[)" + pages + ",\"" + h.id + "\"]";
  }
  EXPECT_EQ(seen, (V{"b", "c", "a", "d"}));
}

TEST_F(StoreTest, FilteredKnnIsExact) {
  Seed();
  EXPECT_EQ(Ids(R"({"knn":{"field":"v","query_vector":[0,0],"k":2}})"), (V{"a", "d"}));
  EXPECT_EQ(Ids(R"({"knn":{"field":"v","query_vector":[0,0],"k":2,
                   "filter":{"term":{"genre":"sf"}}}})"),
            (V{"a", "c"}));
}

TEST_F(StoreTest, CountsAndAggregations) {
  Seed();
  const Mapping m = store_->GetIndex("t1", "books")->mapping;
  Result<Total> all = store_->Count("t1", "books", Query{}, nullptr, kExactTotal);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->value, 4);
  Result<Total> capped = store_->Count("t1", "books", Query{}, nullptr, 2);
  EXPECT_EQ(capped->value, 2);
  EXPECT_FALSE(capped->exact);
  Result<SearchRequest> r = ParseSearch(
      R"({"aggs":{"g":{"terms":{"field":"genre"}},"p":{"histogram":{"field":"pages","interval":100}},
          "r":{"range":{"field":"pages","ranges":[{"to":200},{"from":200}]}}}})",
      m);
  ASSERT_TRUE(r.ok()) << r.error().message;
  Result<std::vector<AggResult>> aggs = store_->Aggregate("t1", "books", r->query, r->aggs);
  ASSERT_TRUE(aggs.ok());
  ASSERT_EQ((*aggs)[0].buckets.size(), 3u);
  EXPECT_EQ(std::get<std::string>((*aggs)[0].buckets[0].key), "sf");
  EXPECT_EQ((*aggs)[0].buckets[0].doc_count, 2);
  ASSERT_EQ((*aggs)[1].buckets.size(), 3u);  // 100, 200 (empty), 300
  EXPECT_EQ((*aggs)[1].buckets[1].doc_count, 0);
  EXPECT_EQ((*aggs)[2].buckets[0].doc_count, 2);
  EXPECT_EQ((*aggs)[2].buckets[1].doc_count, 1);
}

TEST_F(StoreTest, LegsOfOneSearchShareAnEvaluationUntilAWrite) {
  Seed();
  Result<SearchRequest> r =
      ParseSearch(R"({"query":{"term":{"genre":"sf"}}})", store_->GetIndex("t1", "books")->mapping);
  ASSERT_TRUE(r.ok());
  constexpr uint64_t kToken = 7;
  EXPECT_EQ(store_->Search("t1", "books", *r, kToken)->hits.size(), 2u);
  EXPECT_EQ(store_->Count("t1", "books", r->query, nullptr, kExactTotal, kToken)->value, 2);
  Put("t1", "e", R"({"genre":"sf"})");  // a write between legs: no stale reuse
  EXPECT_EQ(store_->Count("t1", "books", r->query, nullptr, kExactTotal, kToken)->value, 3);
  Result<SearchRequest> other = ParseSearch(R"({"query":{"term":{"genre":"crime"}}})",
                                            store_->GetIndex("t1", "books")->mapping);
  EXPECT_EQ(store_->Count("t1", "books", other->query, nullptr, kExactTotal, kToken)->value, 1);
}

TEST_F(StoreTest, TenantsNeverSeeEachOther) {
  Seed();
  EXPECT_EQ(store_->GetIndex("t2", "books").error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(store_->CreateIndex("t2", "books", *ParseMapping(kMapping)).ok());
  Put("t2", "z", R"({"title":"quick","genre":"sf"})");
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"quick"}}})", "t2"), (V{"z"}));
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"quick"}}})"), (V{"c", "a"}));
  EXPECT_FALSE(store_->Get("t2", "books", "a")->has_value());
  EXPECT_FALSE(store_->GetIndex("", "books").ok());
}

TEST_F(StoreTest, WritesSurviveReopenAndUpdatesMerge) {
  Seed();
  std::vector<WriteOp> ops(3);
  ops[0].kind = WriteOp::Kind::kUpdate;
  ops[0].doc.id = "a";
  ops[0].doc.source = R"({"pages":1})";
  ops[1].kind = WriteOp::Kind::kDelete;
  ops[1].doc.id = "b";
  ops[2].kind = WriteOp::Kind::kCreate;
  ops[2].doc = *ExtractDocument(store_->GetIndex("t1", "books")->mapping, "c", "{}");
  Result<std::vector<WriteResult>> w = store_->Write("t1", "books", std::move(ops));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].outcome, WriteResult::Outcome::kUpdated);
  EXPECT_EQ((*w)[0].version, 2);
  EXPECT_EQ((*w)[1].outcome, WriteResult::Outcome::kDeleted);
  EXPECT_EQ((*w)[2].outcome, WriteResult::Outcome::kFailed);  // c exists
  Reopen();
  EXPECT_EQ(Ids(R"({"sort":[{"pages":"asc"}]})"), (V{"a", "c", "d"}));
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"fox"}}})"), (V{"a"}));
  EXPECT_EQ((*store_->Get("t1", "books", "a"))->version, 2);
}

TEST_F(StoreTest, RewritingInPlaceCompactsAndEveryQueryStillFindsTheLatestVersions) {
  // Each document rewritten 400 times (the 4 * 399 replaced slots pass kCompactMinDead):
  // the searches answer as before, and b's last rewrite is the one found.
  for (int round = 0; round < 400; ++round) Seed();
  Put("t1", "b", R"({"title":"a lazy wolf","genre":"crime","pages":121,"v":[1,1]})");
  EXPECT_EQ(Ids(R"({"query":{"term":{"genre":"sf"}},"sort":[{"pages":"desc"}]})"), (V{"a", "c"}));
  EXPECT_EQ(Ids(R"({"sort":[{"pages":"asc"}]})"), (V{"c", "b", "a", "d"}));
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"quick"}}})"), (V{"c", "a"}));
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"wolf"}}})"), (V{"b"}));
  EXPECT_TRUE(Ids(R"({"query":{"match":{"title":"dog"}}})").empty());
  EXPECT_EQ(Ids(R"({"knn":{"field":"v","query_vector":[0,0],"k":2}})"), (V{"a", "d"}));
  EXPECT_EQ(Ids(R"({"query":{"ids":{"values":["d","b"]}},"sort":["_id"]})"), (V{"b", "d"}));
  EXPECT_EQ((*store_->Get("t1", "books", "b"))->version, 401);
  Reopen();
  EXPECT_EQ(Ids(R"({"query":{"match":{"title":"wolf"}}})"), (V{"b"}));
}

TEST(IndexTest, CompactKeepsTheSlotsBoundedByTheLiveDocuments) {
  Result<Mapping> mapping = ParseMapping(kMapping);
  ASSERT_TRUE(mapping.ok());
  Index index(1, "t1", "books", *mapping, 0);
  int64_t rowid = 0;
  size_t most = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::string id = std::to_string(i % 3);
    const std::string source = R"({"title":"v)" + std::to_string(i) + R"(","pages":)" +
                               std::to_string(i) + R"(,"v":[)" + std::to_string(i) + ",0]}";
    Result<Document> doc = ExtractDocument(index.mapping(), id, source);
    ASSERT_TRUE(doc.ok());
    index.Put(std::move(*doc), ++rowid, i);
    index.MaybeCompact();
    most = std::max(most, index.slots());
  }
  EXPECT_EQ(index.live(), 3);
  EXPECT_LE(most, 2 * 3 + Index::kCompactMinDead);
  EXPECT_LT(index.slots(), 5000u);
  // Every live id maps to its last version's slot, and rowids map back to it.
  for (int id = 0; id < 3; ++id) {
    const int64_t slot = index.SlotOf(std::to_string(id));
    ASSERT_GE(slot, 0);
    const auto s = static_cast<size_t>(slot);
    const int last = 4999 - (4999 - id) % 3;  // the last i with i % 3 == id
    EXPECT_EQ(index.VersionAt(s), last);
    EXPECT_EQ(index.SlotOfRowid(index.RowidOf(s)), slot);
    EXPECT_NE(index.SourceAt(s).find("\"pages\":" + std::to_string(last)), std::string::npos);
  }
  // The columns and vectors moved with their slots: a range and a kNN find the live ones.
  Result<SearchRequest> r =
      ParseSearch(R"({"query":{"range":{"pages":{"gte":4998}}}})", index.mapping());
  ASSERT_TRUE(r.ok());
  Result<std::vector<float>> scores = index.Evaluate(r->query, nullptr);
  ASSERT_TRUE(scores.ok());
  size_t matched = 0;
  for (size_t s = 0; s < scores->size(); ++s) matched += (*scores)[s] >= 0 ? 1 : 0;
  EXPECT_EQ(matched, 2u);
}

}  // namespace
}  // namespace turnpike::search::embedded
