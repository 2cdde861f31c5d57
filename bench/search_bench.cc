// Micro-benchmarks of the search door's CPU per operation, without the HTTP and thread hops
// that bench/search-bench.sh measures: the DSL parse of the benchmark's sorted query, the
// extraction of one benchmark document (384-d vector), and the embedded index's evaluation +
// page (+ count) of that query over 10,000 documents shaped like bench/search_docs.mjs's.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>

#include "doors/search/document.h"
#include "doors/search/dsl.h"
#include "doors/search/embedded/index.h"

namespace turnpike::search {
namespace {

constexpr int kDocs = 10'000;
constexpr int kDims = 384;
constexpr const char* kMapping = R"({"properties":{"title":{"type":"text"},
  "genre":{"type":"keyword"},"pages":{"type":"integer"},"price":{"type":"double"},
  "published":{"type":"date"},"vec":{"type":"dense_vector","dims":384,"similarity":"cosine"}}})";
constexpr const char* kSorted = R"({"query":{"bool":{"filter":[{"term":{"genre":"g3"}},
  {"range":{"price":{"gte":10}}}]}},"sort":[{"published":"desc"}],"size":20,
  "track_total_hits":true,"_source":{"excludes":["vec"]}})";

std::string Doc(std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  char head[256];
  std::snprintf(head, sizeof(head),
                R"({"title":"quick brown fox river stone night","genre":"g%d","pages":%d,)"
                R"("price":%.2f,"published":"20%02d-%02d-01T00:00:00.000Z","vec":[)",
                static_cast<int>(unit(rng) * 20), static_cast<int>(unit(rng) * 1000),
                unit(rng) * 100, static_cast<int>(unit(rng) * 20),
                1 + static_cast<int>(unit(rng) * 12));
  std::string doc = head;
  for (int i = 0; i < kDims; ++i) {
    char x[16];
    std::snprintf(x, sizeof(x), "%s%.4f", i ? "," : "", unit(rng) * 2 - 1);
    doc += x;
  }
  return doc + "]}";
}

const Mapping& BenchMapping() {
  static const Mapping m = *ParseMapping(kMapping);
  return m;
}

void BM_ParseSortedQuery(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ParseSearch(kSorted, BenchMapping()));
}
BENCHMARK(BM_ParseSortedQuery);

void BM_ExtractDocument384(benchmark::State& state) {
  std::mt19937 rng(7);
  const std::string doc = Doc(rng);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExtractDocument(BenchMapping(), "d1", doc));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * doc.size()));
}
BENCHMARK(BM_ExtractDocument384);

void BM_SortedFilterPageAndCount(benchmark::State& state) {
  embedded::Index index(1, "t", "bench", BenchMapping(), 0);
  std::mt19937 rng(7);
  for (int i = 0; i < kDocs; ++i) {
    index.Put(*ExtractDocument(BenchMapping(), "d" + std::to_string(i), Doc(rng)), i + 1, 1);
  }
  const SearchRequest request = *ParseSearch(kSorted, BenchMapping());
  for (auto _ : state) {
    std::vector<float> scores = *index.Evaluate(request.query, {});
    benchmark::DoNotOptimize(index.CountOf(scores, kExactTotal));
    benchmark::DoNotOptimize(index.PageOf(request, std::move(scores)));
  }
}
BENCHMARK(BM_SortedFilterPageAndCount)->Unit(benchmark::kMicrosecond);

void BM_FilteredKnn10(benchmark::State& state) {
  embedded::Index index(1, "t", "bench", BenchMapping(), 0);
  std::mt19937 rng(7);
  for (int i = 0; i < kDocs; ++i) {
    index.Put(*ExtractDocument(BenchMapping(), "d" + std::to_string(i), Doc(rng)), i + 1, 1);
  }
  std::string vector = "[";
  for (int i = 0; i < kDims; ++i) vector += (i ? ",0." : "0.") + std::to_string(i % 10);
  const SearchRequest request = *ParseSearch(
      R"({"knn":{"field":"vec","k":10,"num_candidates":100,"filter":{"term":{"genre":"g3"}},)"
      R"("query_vector":)" +
          vector + R"(]},"size":10,"_source":{"excludes":["vec"]}})",
      BenchMapping());
  for (auto _ : state) {
    std::vector<float> scores = *index.Evaluate(request.query, {});
    std::vector<float> filter = *index.Evaluate(*request.knn->filter, {});
    for (size_t s = 0; s < scores.size(); ++s) {
      if (filter[s] < 0) scores[s] = -1;
    }
    index.Knn(*request.knn, scores);
    benchmark::DoNotOptimize(index.PageOf(request, std::move(scores)));
  }
}
BENCHMARK(BM_FilteredKnn10)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace turnpike::search
