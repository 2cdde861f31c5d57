// An embedded index's aggregations (terms, range, histogram) over match scores.
#include <algorithm>
#include <cmath>
#include <map>

#include "doors/search/embedded/index.h"

namespace turnpike::search::embedded {
namespace {

double AsDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return 0;
}

}  // namespace

std::vector<AggResult> Index::Aggregate(const std::vector<Aggregation>& aggs,
                                        const std::vector<float>& scores) const {
  std::vector<AggResult> out;
  for (const Aggregation& agg : aggs) {
    AggResult result;
    result.name = agg.name;
    result.kind = agg.kind;
    result.type = agg.type;
    const int f = mapping_.IndexOf(agg.field);
    const Column* column = f < 0 ? nullptr : &columns_[static_cast<size_t>(f)];
    if (agg.kind == Aggregation::Kind::kRange) {
      for (const RangeSpec& range : agg.ranges) {
        Bucket b;
        b.range_key = range.key;
        b.from = range.from;
        b.to = range.to;
        for (size_t s = 0; column && s < scores.size(); ++s) {
          if (scores[s] < 0) continue;
          const bool in =
              std::any_of((*column)[s].begin(), (*column)[s].end(), [&](const Value& v) {
                const double x = AsDouble(v);
                return (!range.from || x >= *range.from) && (!range.to || x < *range.to);
              });
          b.doc_count += in ? 1 : 0;
        }
        result.buckets.push_back(std::move(b));
      }
      out.push_back(std::move(result));
      continue;
    }
    std::map<Value, int64_t> counts;
    for (size_t s = 0; column && s < scores.size(); ++s) {
      if (scores[s] < 0) continue;
      std::vector<Value> keys;
      for (const Value& v : (*column)[s]) {
        if (agg.kind == Aggregation::Kind::kHistogram) {
          keys.emplace_back(std::floor(AsDouble(v) / agg.interval) * agg.interval);
        } else {
          keys.push_back(v);
        }
      }
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      for (Value& k : keys) ++counts[std::move(k)];
    }
    if (agg.kind == Aggregation::Kind::kHistogram) {
      if (agg.min_doc_count == 0 && !counts.empty()) {
        const double first = std::get<double>(counts.begin()->first);
        const double last = std::get<double>(counts.rbegin()->first);
        constexpr int64_t kMaxBuckets = 65'536;  // search.max_buckets
        // Keys as the scan made them, floor(v / interval) * interval, so a filled gap never
        // lands next to an existing key that differs in its last bits.
        const auto low = static_cast<int64_t>(std::llround(first / agg.interval));
        const auto high = static_cast<int64_t>(std::llround(last / agg.interval));
        for (int64_t k = low; k <= high && k - low < kMaxBuckets; ++k) {
          counts.try_emplace(Value{static_cast<double>(k) * agg.interval}, 0);
        }
      }
      for (const auto& [key, count] : counts) {
        if (count >= agg.min_doc_count) result.buckets.push_back(Bucket{key, {}, {}, {}, count});
      }
      out.push_back(std::move(result));
      continue;
    }
    for (const auto& [key, count] : counts) {
      if (count >= agg.min_doc_count) result.buckets.push_back(Bucket{key, {}, {}, {}, count});
    }
    std::stable_sort(result.buckets.begin(), result.buckets.end(),
                     [](const Bucket& a, const Bucket& b) { return a.doc_count > b.doc_count; });
    if (result.buckets.size() > static_cast<size_t>(agg.size)) {
      for (size_t i = static_cast<size_t>(agg.size); i < result.buckets.size(); ++i) {
        result.sum_other_doc_count += result.buckets[i].doc_count;
      }
      result.buckets.resize(static_cast<size_t>(agg.size));
    }
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace turnpike::search::embedded
