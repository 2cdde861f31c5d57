// The aggregations leg of the Qdrant backend: terms by facet (doubles over candidates), range
// by one points/count per range, histogram over candidates; buckets in ES's order.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "doors/search/qdrant/filter.h"
#include "doors/search/qdrant/json_write.h"
#include "doors/search/qdrant/layout.h"
#include "doors/search/qdrant/legs.h"
#include "doors/search/qdrant/payload.h"
#include "doors/search/qdrant/qdrant_backend.h"
#include "doors/search/qdrant/requests.h"

namespace turnpike::search::qdrant {
namespace {

Value NumberValue(const boost::json::value& v, FieldType type) {
  if (type == FieldType::kBoolean && v.is_bool()) return v.get_bool();
  if (v.is_string()) return std::string(v.get_string());
  if (type == FieldType::kDouble && v.is_number()) return v.to_number<double>();
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) return static_cast<int64_t>(v.get_uint64());
  if (v.is_double()) return v.get_double();
  return std::monostate{};
}

}  // namespace

Awaitable<Result<AggResult>> QdrantBackend::Aggregate1(Scope scope, const std::string& filter,
                                                       const Aggregation& agg, Deadline deadline) {
  AggResult out;
  out.name = agg.name;
  out.kind = agg.kind;
  out.type = agg.type;
  const std::string key = FieldKey(agg.field);
  const int64_t bound = settings_->max_candidates;
  if (agg.kind == Aggregation::Kind::kRange) {
    for (const RangeSpec& r : agg.ranges) {
      const Value from = r.from ? Value{*r.from} : Value{};
      const Value to = r.to ? Value{*r.to} : Value{};
      std::string cond = RangeOn(key, from, Value{}, to);
      std::string body = R"({"must":[)" + filter + "," + cond + "]}";
      const std::string answer_path = CollectionPath(scope, "/points/count");
      const std::string answer_body = CountBody(body);
      auto answer = co_await client_.Call("POST", answer_path, answer_body, deadline);
      if (!answer.ok()) co_return OnIndex(scope, answer.error());
      const auto* count = answer->is_object() ? answer->get_object().if_contains("count") : nullptr;
      Bucket b;
      b.range_key = r.key;
      b.from = r.from;
      b.to = r.to;
      b.doc_count = count != nullptr ? IntOf(*count).value_or(0) : 0;
      out.buckets.push_back(std::move(b));
    }
    co_return out;
  }
  std::map<std::string, std::pair<Value, int64_t>> counts;  // by rendered key
  auto add = [&counts](Value v, int64_t n) {
    std::string k;
    AppendValue(k, v);
    auto& slot = counts[k];
    slot.first = std::move(v);
    slot.second += n;
  };
  const bool facet = agg.kind == Aggregation::Kind::kTerms && agg.type != FieldType::kDouble;
  if (facet) {
    const std::string answer_path = CollectionPath(scope, "/facet");
    const std::string answer_body = FacetBody(filter, key, bound);
    auto answer = co_await client_.Call("POST", answer_path, answer_body, deadline);
    if (!answer.ok()) co_return OnIndex(scope, answer.error());
    const auto* hits = answer->is_object() ? answer->get_object().if_contains("hits") : nullptr;
    if (hits == nullptr || !hits->is_array()) {
      co_return Error{ErrorCode::kUpstreamBadResponse, "qdrant: a facet without hits", ""};
    }
    for (const auto& h : hits->get_array()) {
      if (!h.is_object()) continue;
      const auto* value = h.get_object().if_contains("value");
      const auto* count = h.get_object().if_contains("count");
      if (value == nullptr || count == nullptr || !count->is_number()) continue;
      add(NumberValue(*value, agg.type), IntOf(*count).value_or(0));
    }
  } else {
    const std::vector<std::string> keys{std::string(kIdKey), key};
    std::string body = ScrollBody(filter, bound + 1, keys);
    const std::string answer_path = CollectionPath(scope, "/points/scroll");
    auto answer = co_await client_.Call("POST", answer_path, body, deadline);
    if (!answer.ok()) co_return OnIndex(scope, answer.error());
    const auto* points = PointsOf(*answer);
    if (points == nullptr) co_return NoPoints();
    if (static_cast<int64_t>(points->size()) > bound) co_return TooManyCandidates(bound);
    for (const auto& point : *points) {
      const auto* payload = PayloadOf(point);
      if (payload == nullptr) continue;
      std::set<std::string> seen;  // a document counts once per bucket
      for (Value& v : FieldValuesOf(*payload, agg.field, agg.type)) {
        if (agg.kind == Aggregation::Kind::kHistogram) {
          double x = 0;
          if (const auto* i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
          if (const auto* d = std::get_if<double>(&v)) x = *d;
          v = Value{std::floor(x / agg.interval) * agg.interval};
        }
        std::string k;
        AppendValue(k, v);
        if (seen.insert(k).second) add(std::move(v), 1);
      }
    }
  }
  std::vector<std::pair<Value, int64_t>> list;
  for (auto& [k, entry] : counts) list.push_back(std::move(entry));
  if (agg.kind == Aggregation::Kind::kHistogram) {
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return CompareValues(a.first, b.first) < 0; });
    std::vector<std::pair<Value, int64_t>> filled;
    for (auto& entry : list) {
      if (agg.min_doc_count == 0 && !filled.empty()) {
        // ES fills the empty buckets between the first and the last.
        double next = std::get<double>(filled.back().first) + agg.interval;
        while (next < std::get<double>(entry.first)) {
          filled.emplace_back(Value{next}, 0);
          next += agg.interval;
        }
      }
      filled.push_back(std::move(entry));
    }
    for (auto& [v, n] : filled) {
      if (n < agg.min_doc_count) continue;
      Bucket b;
      b.key = std::move(v);
      b.doc_count = n;
      out.buckets.push_back(std::move(b));
    }
    co_return out;
  }
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return CompareValues(a.first, b.first) < 0;
  });
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].second < agg.min_doc_count) continue;
    if (static_cast<int64_t>(out.buckets.size()) >= agg.size) {
      out.sum_other_doc_count += list[i].second;
      continue;
    }
    Bucket b;
    b.key = std::move(list[i].first);
    b.doc_count = list[i].second;
    out.buckets.push_back(std::move(b));
  }
  co_return out;
}

Awaitable<Result<std::vector<AggResult>>> QdrantBackend::Aggregate(
    Scope scope, const Query& query, const std::vector<Aggregation>& aggs, Deadline deadline) {
  auto filter = ScopedFilter(scope, &query);
  if (!filter.ok()) co_return filter.error();
  std::vector<AggResult> out;
  for (const Aggregation& agg : aggs) {
    auto one = co_await Aggregate1(scope, *filter, agg, deadline);
    if (!one.ok()) co_return one.error();
    out.push_back(std::move(*one));
  }
  co_return out;
}

}  // namespace turnpike::search::qdrant
