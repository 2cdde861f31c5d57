// The Qdrant backend end to end against the Qdrant fake (a node process validating every
// request and answer against Qdrant's OpenAPI document): index lifecycle, writes, the three
// page paths (native order_by with ties and missing values, candidates, kNN), counts,
// aggregations, coverage and tenant isolation. Skips when node or the document is missing.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "doors/search/dsl.h"
#include "doors/search/es_error.h"
#include "doors/search/qdrant/qdrant_backend.h"
#include "fake_process.h"

namespace turnpike::search::qdrant {
namespace {

template <typename T>
boost::asio::awaitable<void> Drive(boost::asio::awaitable<T> task, std::optional<T>* out) {
  out->emplace(co_await std::move(task));
}

template <typename T>
T RunOn(boost::asio::io_context& context, boost::asio::awaitable<T> task) {
  std::optional<T> out;
  boost::asio::co_spawn(context, Drive<T>(std::move(task), &out), boost::asio::detached);
  context.restart();
  // Until the task is done, not until the loop runs dry: pooled connections keep timers.
  while (!out) context.run_one();
  return std::move(*out);
}

constexpr std::string_view kMapping = R"({"properties":{
  "tag":{"type":"keyword"},"n":{"type":"long"},"price":{"type":"double"},
  "on":{"type":"boolean"},"at":{"type":"date"},"title":{"type":"text"},
  "v":{"type":"dense_vector","dims":3,"similarity":"cosine"}}})";

struct Doc {
  const char* id;
  const char* source;
};
constexpr Doc kDocs[] = {
    {"a",
     R"({"tag":"x","n":5,"price":1.0,"on":true,"at":"2024-01-01","title":"red fox","v":[1,0,0]})"},
    {"b",
     R"({"tag":"y","n":3,"price":2.5,"on":false,"at":"2024-01-05","title":"blue fox","v":[0,1,0]})"},
    {"c", R"({"tag":"x","n":5,"price":3.0,"on":true,"title":"red dog","v":[0.9,0.1,0]})"},
    {"d",
     R"({"tag":["x","y"],"price":0.5,"on":false,"at":"2024-02-01","title":"green cat","v":[0,0,1]})"},
    {"e", R"({"tag":"z","n":1,"on":true,"at":"2024-03-01","title":"red cat","v":[0.7,0.7,0]})"},
    {"f", R"({"tag":"y","n":5,"price":9.0,"at":"2023-12-31","title":"fox","v":[-1,0,0]})"},
};

class QdrantBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fake_.skip_reason.empty()) GTEST_SKIP() << fake_.skip_reason;
    auto settings = std::make_shared<Settings>();
    auto origin = upstream::ParseOrigin(fake_.url(), true);
    ASSERT_TRUE(origin.ok());
    settings->origin = *origin;
    settings->max_candidates = 100;
    settings_ = settings;
    backend_ = std::make_unique<QdrantBackend>(pool_, settings_);
    mapping_ = *ParseMapping(kMapping);
  }
  void TearDown() override {
    pool_.Shutdown();
    if (!backend_) return;
    const std::string v = fake_.Violations();
    EXPECT_NE(v.find(R"("violations":[])"), std::string::npos) << v;
  }

  Deadline Soon() const { return Clock::now() + std::chrono::seconds(10); }

  void CreateAndFill(Scope scope) {
    Status created = RunOn(context_, backend_->CreateIndex(scope, mapping_, Soon()));
    ASSERT_TRUE(created.ok()) << created.error().message;
    std::vector<WriteOp> ops;
    for (const Doc& d : kDocs) {
      auto doc = ExtractDocument(mapping_, d.id, d.source);
      ASSERT_TRUE(doc.ok()) << doc.error().message;
      ops.push_back({WriteOp::Kind::kIndex, std::move(*doc)});
    }
    auto written = RunOn(context_, backend_->Write(scope, std::move(ops), Soon()));
    ASSERT_TRUE(written.ok()) << written.error().message;
    for (const WriteResult& r : *written) EXPECT_EQ(r.outcome, WriteResult::Outcome::kCreated);
  }

  // The ids of a search's page, or "error: <message>".
  std::string Ids(Scope scope, std::string_view body) {
    auto request = ParseSearch(body, mapping_);
    if (!request.ok()) return "parse error: " + request.error().message;
    auto page = RunOn(context_, backend_->Search(scope, *request, Soon()));
    if (!page.ok()) return "error: " + page.error().message;
    std::string ids;
    for (const Hit& h : page->hits) ids += h.id;
    return ids;
  }

  testing::FakeQdrant fake_;
  boost::asio::io_context context_;
  std::shared_ptr<const Settings> settings_;
  // The worker's pool, as WorkerCore owns it.
  upstream::TlsContexts tls_{"", false};
  upstream::Pool pool_{context_, tls_, upstream::PoolOptions{}};
  std::unique_ptr<QdrantBackend> backend_;
  Mapping mapping_;
};

TEST_F(QdrantBackendTest, IndexLifecycleAndWrites) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  Status again = RunOn(context_, backend_->CreateIndex(scope, mapping_, Soon()));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().param, kResourceExists);
  auto info = RunOn(context_, backend_->GetIndex(scope, Soon()));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->doc_count, 6);
  EXPECT_EQ(info->mapping.fields.size(), mapping_.fields.size());

  std::vector<WriteOp> ops;
  ops.push_back({WriteOp::Kind::kIndex, *ExtractDocument(mapping_, "a", R"({"tag":"q","n":2})")});
  ops.push_back({WriteOp::Kind::kCreate, *ExtractDocument(mapping_, "b", R"({"tag":"q"})")});
  ops.push_back({WriteOp::Kind::kDelete, Document{"c", "", {}, {}}});
  ops.push_back({WriteOp::Kind::kDelete, Document{"zz", "", {}, {}}});
  ops.push_back({WriteOp::Kind::kUpdate, Document{"e", R"({"n":4})", {}, {}}});
  ops.push_back({WriteOp::Kind::kUpdate, Document{"nope", R"({"n":4})", {}, {}}});
  auto written = RunOn(context_, backend_->Write(scope, std::move(ops), Soon()));
  ASSERT_TRUE(written.ok()) << written.error().message;
  using O = WriteResult::Outcome;
  EXPECT_EQ((*written)[0].outcome, O::kUpdated);
  EXPECT_EQ((*written)[0].version, 2);
  EXPECT_EQ((*written)[1].outcome, O::kFailed);
  EXPECT_EQ((*written)[1].error.param, kVersionConflict);
  EXPECT_EQ((*written)[2].outcome, O::kDeleted);
  EXPECT_EQ((*written)[3].outcome, O::kNotFound);
  EXPECT_EQ((*written)[4].outcome, O::kUpdated);
  EXPECT_EQ((*written)[5].outcome, O::kFailed);

  auto a = RunOn(context_, backend_->Get(scope, "a", Soon()));
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->source, R"({"tag":"q","n":2})");
  EXPECT_EQ((*a)->version, 2);
  auto c = RunOn(context_, backend_->Get(scope, "c", Soon()));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
  // The update merged into e's source and re-typed it: n is now 4.
  EXPECT_EQ(Ids(scope, R"({"query":{"term":{"n":4}}})"), "e");
  Status deleted = RunOn(context_, backend_->DeleteIndex(scope, Soon()));
  EXPECT_TRUE(deleted.ok());
  auto gone = RunOn(context_, backend_->GetIndex(scope, Soon()));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().param, kIndexNotFound);
}

// Two workers' backends over one process-wide MappingCache: a search's read of the index
// (Scope::request != 0) is answered from it; an index write on either worker drops the entry.
TEST_F(QdrantBackendTest, SearchesReadTheMappingFromTheSharedCache) {
  auto mappings = std::make_shared<MappingCache>(std::chrono::minutes(1), 16);
  backend_ = std::make_unique<QdrantBackend>(pool_, settings_, mappings);
  QdrantBackend other(pool_, settings_, mappings);
  EXPECT_TRUE(backend_->capabilities().cached_mappings);
  const Scope search{"t1", "books", 1};
  CreateAndFill(Scope{"t1", "books"});  // the write read the collection: the entry is stored
  const uint64_t calls = backend_->client().calls();
  for (int i = 0; i < 3; ++i) {
    auto info = RunOn(context_, backend_->GetIndex(search, Soon()));
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->mapping.fields.size(), mapping_.fields.size());
  }
  EXPECT_EQ(backend_->client().calls(), calls) << "warm: no collection read";
  // The index API's read (request 0) always reads.
  ASSERT_TRUE(RunOn(context_, backend_->GetIndex(Scope{"t1", "books"}, Soon())).ok());
  EXPECT_EQ(backend_->client().calls(), calls + 1);
  // PUT _mapping on the other worker: this worker's next search reads the grown mapping.
  auto grown = MergeMapping(mapping_, *ParseMapping(R"({"properties":{"extra":{"type":"long"}}})"));
  ASSERT_TRUE(grown.ok());
  ASSERT_TRUE(RunOn(context_, other.PutMapping(Scope{"t1", "books"}, *grown, Soon())).ok());
  auto after_put = RunOn(context_, backend_->GetIndex(search, Soon()));
  ASSERT_TRUE(after_put.ok());
  EXPECT_NE(after_put->mapping.Find("extra"), nullptr);
  EXPECT_EQ(backend_->client().calls(), calls + 2);
  // DELETE on the other worker: this worker's next search is a 404.
  ASSERT_TRUE(RunOn(context_, other.DeleteIndex(Scope{"t1", "books"}, Soon())).ok());
  auto gone = RunOn(context_, backend_->GetIndex(search, Soon()));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().param, kIndexNotFound);
  EXPECT_EQ(mappings->size(), 0u);
}

TEST_F(QdrantBackendTest, NativeOrderKeepsEsTiesAndMissingLast) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  EXPECT_EQ(Ids(scope, R"({"sort":[{"n":"asc"}],"size":3})"), "eba");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"n":"asc"}],"from":3,"size":3})"), "cfd");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"n":"desc"}],"size":10})"), "acfbed");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"price":"desc"}],"size":2})"), "fc");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"at":"asc"}],"size":10})"), "fabdec");
}

TEST_F(QdrantBackendTest, CandidateSortsAndSearchAfter) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  EXPECT_EQ(Ids(scope, R"({"sort":[{"tag":"asc"}],"size":10})"), "acdbfe");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"tag":"desc"}],"size":10})"), "ebdfac");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"n":"asc"}],"search_after":[3,"b"],"size":10})"), "acfd");
  EXPECT_EQ(Ids(scope, R"({"sort":[{"on":"asc"},{"n":"desc"}],"size":10})"), "bdacef");
  EXPECT_EQ(Ids(scope, R"({"size":10})"), "abcdef");
}

TEST_F(QdrantBackendTest, FiltersCountsAndAggregations) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  EXPECT_EQ(Ids(scope, R"({"query":{"term":{"tag":"x"}}})"), "acd");
  EXPECT_EQ(Ids(scope, R"({"query":{"match":{"title":"red"}}})"), "ace");
  EXPECT_EQ(Ids(scope, R"({"query":{"match":{"title":{"query":"red fox","operator":"and"}}}})"),
            "a");
  EXPECT_EQ(Ids(scope, R"({"query":{"match":{"title":"red fox"}}})"), "abcef");
  EXPECT_EQ(Ids(scope, R"({"query":{"range":{"price":{"gte":2.5}}}})"), "bcf");
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"must_not":[{"exists":{"field":"price"}}]}}})"), "e");
  EXPECT_EQ(Ids(scope, R"({"query":{"ids":{"values":["f","a","zz"]}}})"), "af");
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"filter":[{"match_phrase":{"title":"Red Fox"}}]}}})"),
            "a");
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"filter":[{"match_phrase":{"title":"fox red"}}]}}})"),
            "");
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"filter":[{"prefix":{"tag":"x"}}]}}})"), "acd");

  auto x = ParseCount(R"({"query":{"term":{"tag":"x"}}})", mapping_);
  ASSERT_TRUE(x.ok());
  auto total = RunOn(context_, backend_->Count(scope, *x, nullptr, kExactTotal, Soon()));
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(total->value, 3);
  EXPECT_TRUE(total->exact);
  auto capped = RunOn(context_, backend_->Count(scope, *x, nullptr, 2, Soon()));
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->value, 2);
  EXPECT_FALSE(capped->exact);

  auto request = ParseSearch(R"({"aggs":{
      "tags":{"terms":{"field":"tag","size":2}},
      "ns":{"histogram":{"field":"n","interval":2}},
      "prices":{"range":{"field":"price","ranges":[{"to":2},{"from":2}]}}}})",
                             mapping_);
  ASSERT_TRUE(request.ok()) << request.error().message;
  auto aggs = RunOn(context_, backend_->Aggregate(scope, request->query, request->aggs, Soon()));
  ASSERT_TRUE(aggs.ok()) << aggs.error().message;
  std::map<std::string, std::string> rendered;
  for (const AggResult& a : *aggs) {
    std::string s;
    for (const Bucket& b : a.buckets) {
      if (const auto* k = std::get_if<std::string>(&b.key)) s += *k;
      if (const auto* d = std::get_if<double>(&b.key)) s += std::to_string(static_cast<int>(*d));
      if (a.kind == Aggregation::Kind::kRange) {
        s += (b.from ? std::to_string(static_cast<int>(*b.from)) : "*") + "-" +
             (b.to ? std::to_string(static_cast<int>(*b.to)) : "*");
      }
      s += ":" + std::to_string(b.doc_count) + " ";
    }
    s += "other:" + std::to_string(a.sum_other_doc_count);
    rendered[a.name] = s;
  }
  EXPECT_EQ(rendered["tags"], "x:3 y:3 other:1");
  EXPECT_EQ(rendered["ns"], "0:1 2:1 4:3 other:0");
  EXPECT_EQ(rendered["prices"], "*-2:2 2-*:3 other:0");

  auto cover = RunOn(context_, backend_->Cover(scope, Soon()));
  ASSERT_TRUE(cover.ok());
  EXPECT_EQ(cover->doc_count, 6);
  EXPECT_EQ(cover->shards_successful, 1);
}

TEST_F(QdrantBackendTest, KnnWithFilterAndScores) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  EXPECT_EQ(Ids(scope, R"({"knn":{"field":"v","query_vector":[1,0,0],"k":3,"num_candidates":10}})"),
            "ace");
  EXPECT_EQ(Ids(scope, R"({"knn":{"field":"v","query_vector":[1,0,0],"k":3,"num_candidates":10,
                           "filter":{"term":{"tag":"y"}}}})"),
            "bdf");
  auto request = ParseSearch(
      R"({"knn":{"field":"v","query_vector":[1,0,0],"k":1,"num_candidates":1}})", mapping_);
  ASSERT_TRUE(request.ok());
  auto page = RunOn(context_, backend_->Search(scope, *request, Soon()));
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->hits.size(), 1u);
  EXPECT_NEAR(page->hits[0].score, 1.0, 1e-6);  // cosine 1 -> ES (1 + 1) / 2
}

TEST_F(QdrantBackendTest, AnotherTenantSeesNothing) {
  CreateAndFill({"t1", "books"});
  const Scope other{"t2", "books"};
  auto info = RunOn(context_, backend_->GetIndex(other, Soon()));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().param, kIndexNotFound);
  EXPECT_EQ(Ids(other, R"({"size":10})").rfind("error: ", 0), 0u);
  auto doc = RunOn(context_, backend_->Get(other, "a", Soon()));
  EXPECT_FALSE(doc.ok());
  CreateAndFill(other);
  EXPECT_EQ(Ids(other, R"({"query":{"term":{"tag":"x"}}})"), "acd");
}

TEST_F(QdrantBackendTest, RefusesWhatQdrantCannotDo) {
  const Scope scope{"t1", "books"};
  CreateAndFill(scope);
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"filter":[{"prefix":{"title":"re"}}]}}})"),
            "error: prefix on a text field is not supported by the qdrant backend");
  EXPECT_EQ(Ids(scope, R"({"query":{"bool":{"filter":[{"range":{"tag":{"gte":"x"}}}]}}})"),
            "error: a range query on a keyword or text field is not supported by the qdrant "
            "backend");
}

TEST_F(QdrantBackendTest, MissedDeadlineIsATimeout) {
  const Scope scope{"t1", "books"};
  auto late = RunOn(context_, backend_->GetIndex(scope, Clock::now() - std::chrono::seconds(1)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kUpstreamTimeout);
}

}  // namespace
}  // namespace turnpike::search::qdrant
