// The search legs of the Qdrant backend: pages (native order_by, kNN, or candidates sorted in
// the gateway) and counts; aggregations are in qdrant_aggs.cc. See qdrant_backend.h for which path
// a request takes.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "doors/search/es_error.h"
#include "doors/search/qdrant/filter.h"
#include "doors/search/qdrant/json_write.h"
#include "doors/search/qdrant/layout.h"
#include "doors/search/qdrant/legs.h"
#include "doors/search/qdrant/payload.h"
#include "doors/search/qdrant/qdrant_backend.h"
#include "doors/search/qdrant/requests.h"

namespace turnpike::search::qdrant {

struct QdrantBackend::Candidate {
  std::string id;
  std::vector<Value> sort;
  double score = 0;
  std::string source;
  bool has_source = false;
};

namespace {

// The score every match of `q` gets when it is the same for all of them (as the embedded
// backend scores non-text queries: a leaf or match_all its boost, a bool the sum of its must
// and matching should clauses times its boost, filter and must_not nothing); nullopt when it
// differs between documents (should clauses that may or may not match). Qdrant computes no
// score for a filter, so only a constant one can be given.
std::optional<double> ConstantScore(const Query& q) {
  if (q.kind != QueryKind::kBool) return q.boost;
  double sum = 0;
  for (const Query& m : q.must) {
    const std::optional<double> s = ConstantScore(m);
    if (!s) return std::nullopt;
    sum += *s;
  }
  if (!q.should.empty()) {
    // Every should clause must match (minimum_should_match = all): their scores add up.
    if (static_cast<size_t>(q.minimum_should_match) < q.should.size()) return std::nullopt;
    for (const Query& m : q.should) {
      const std::optional<double> s = ConstantScore(m);
      if (!s) return std::nullopt;
      sum += *s;
    }
  }
  return sum * q.boost;
}

// ES order of two sort tuples: per key, missing last (or first), descending reversed.
int CompareTuples(const std::vector<SortKey>& keys, const std::vector<Value>& a,
                  const std::vector<Value>& b) {
  for (size_t i = 0; i < keys.size() && i < a.size() && i < b.size(); ++i) {
    const bool ma = std::holds_alternative<std::monostate>(a[i]);
    const bool mb = std::holds_alternative<std::monostate>(b[i]);
    if (ma || mb) {
      if (ma && mb) continue;
      const int missing_side = keys[i].missing_first ? -1 : 1;
      return ma ? missing_side : -missing_side;
    }
    int c = CompareValues(a[i], b[i]);
    if (keys[i].descending) c = -c;
    if (c != 0) return c;
  }
  return 0;
}

bool IsNativeOrder(const SearchRequest& r) {
  if (r.sort.size() != 2 || !r.search_after.empty()) return false;
  const SortKey& k = r.sort[0];
  return k.kind == SortKey::Kind::kField && !k.missing_first &&
         (k.type == FieldType::kLong || k.type == FieldType::kDate || k.type == FieldType::kDouble);
}

}  // namespace

Awaitable<Result<std::vector<QdrantBackend::Candidate>>> QdrantBackend::Candidates(
    Scope scope, const std::string& filter, const SearchRequest& request, Deadline deadline) {
  const int64_t bound = settings_->max_candidates;
  const double constant = ConstantScore(request.query).value_or(0.0);
  const std::string answer_path = CollectionPath(scope, "/points/scroll");
  const std::string answer_body = ScrollBody(filter, bound + 1, SortPayloadKeys(request.sort));
  auto answer = co_await client_.Call("POST", answer_path, answer_body, deadline);
  if (!answer.ok()) co_return OnIndex(scope, answer.error());
  const auto* points = PointsOf(*answer);
  if (points == nullptr) co_return NoPoints();
  if (static_cast<int64_t>(points->size()) > bound) co_return TooManyCandidates(bound);
  std::vector<Candidate> out;
  out.reserve(points->size());
  for (const auto& point : *points) {
    const auto* payload = PayloadOf(point);
    if (payload == nullptr) continue;
    Candidate c;
    c.id = std::string(PayloadString(*payload, kIdKey));
    c.score = constant;
    for (const SortKey& k : request.sort) {
      if (k.kind == SortKey::Kind::kScore) {
        c.sort.emplace_back(constant);
      } else if (k.kind == SortKey::Kind::kDoc) {
        c.sort.emplace_back(std::monostate{});
      } else {
        c.sort.push_back(SortValue(*payload, k));
      }
    }
    out.push_back(std::move(c));
  }
  co_return out;
}

Awaitable<Result<Page>> QdrantBackend::PageOf(Scope scope, std::vector<Candidate> sorted,
                                              const SearchRequest& request, Deadline deadline) {
  const std::vector<SortKey>& keys = request.sort;
  std::stable_sort(sorted.begin(), sorted.end(), [&keys](const Candidate& a, const Candidate& b) {
    return CompareTuples(keys, a.sort, b.sort) < 0;
  });
  Page page;
  for (const Candidate& c : sorted) page.max_score = std::max(page.max_score, c.score);
  size_t begin = 0;
  if (!request.search_after.empty()) {
    while (begin < sorted.size() &&
           CompareTuples(keys, sorted[begin].sort, request.search_after) <= 0) {
      ++begin;
    }
  }
  begin = std::min(sorted.size(), begin + static_cast<size_t>(request.from));
  const size_t end = std::min(sorted.size(), begin + static_cast<size_t>(request.size));
  std::map<std::string, std::string> sources;
  bool need = false;
  std::vector<std::string> ids;
  for (size_t i = begin; i < end; ++i) {
    ids.push_back(sorted[i].id);
    need = need || !sorted[i].has_source;
  }
  if (need && request.source.enabled && !ids.empty()) {
    const std::vector<std::string_view> keys{kIdKey, kSourceKey};
    std::string body = RetrieveBody(scope, ids, keys);
    const std::string found_path = CollectionPath(scope, "/points");
    auto found = co_await client_.Call("POST", found_path, body, deadline);
    if (!found.ok()) co_return OnIndex(scope, found.error());
    if (const auto* points = PointsOf(*found)) {
      for (const auto& point : *points) {
        const auto* payload = PayloadOf(point);
        if (payload == nullptr) continue;
        sources[std::string(PayloadString(*payload, kIdKey))] =
            std::string(PayloadString(*payload, kSourceKey));
      }
    }
  }
  for (size_t i = begin; i < end; ++i) {
    Candidate& c = sorted[i];
    Hit hit;
    hit.id = c.id;
    hit.score = c.score;
    hit.sort = std::move(c.sort);
    if (request.source.enabled) {
      const std::string& src = c.has_source ? c.source : sources[c.id];
      hit.source = FilterSource(src, request.source);
    }
    page.hits.push_back(std::move(hit));
  }
  co_return page;
}

Awaitable<Result<Page>> QdrantBackend::OrderedPage(Scope scope, const std::string& filter,
                                                   const SearchRequest& request,
                                                   Deadline deadline) {
  const SortKey& key = request.sort[0];
  const double constant = ConstantScore(request.query).value_or(0.0);
  const std::string field_key = FieldKey(key.field);
  const int64_t want = request.from + request.size;
  if (want == 0) co_return Page{};
  const int64_t bound = settings_->max_candidates;
  std::vector<std::string> payload_keys{std::string(kIdKey), field_key};
  std::map<std::string, Candidate> found;
  auto take = [&found, &key, constant](const boost::json::array& points) {
    for (const auto& point : points) {
      const auto* payload = PayloadOf(point);
      if (payload == nullptr) continue;
      Candidate c;
      c.id = std::string(PayloadString(*payload, kIdKey));
      c.score = constant;
      c.sort = {SortValue(*payload, key), Value{c.id}};
      found.emplace(c.id, std::move(c));
    }
  };
  const std::string ordered_path = CollectionPath(scope, "/points/scroll");
  const std::string ordered_body =
      ScrollBody(filter, want, payload_keys, OrderBy{field_key, key.descending});
  auto ordered = co_await client_.Call("POST", ordered_path, ordered_body, deadline);
  if (!ordered.ok()) co_return OnIndex(scope, ordered.error());
  const auto* points = PointsOf(*ordered);
  if (points == nullptr) co_return NoPoints();
  take(*points);
  std::string extra_filter;
  if (static_cast<int64_t>(points->size()) == want && !points->empty()) {
    // The page's last value may be shared by points Qdrant cut off: fetch all of them, so
    // the _id tie-break is exact.
    const auto* last = PayloadOf(points->back());
    const Value boundary = last != nullptr ? SortValue(*last, key) : Value{};
    if (!std::holds_alternative<std::monostate>(boundary)) {
      auto scoped = ScopedFilter(scope, &request.query, {RangeOn(field_key, boundary, boundary)});
      if (!scoped.ok()) co_return scoped.error();
      extra_filter = std::move(*scoped);
    }
  } else {
    // Every point with a value is here; ES puts the rest (no value) last, by _id.
    auto scoped = ScopedFilter(scope, &request.query, {IsEmpty(field_key)});
    if (!scoped.ok()) co_return scoped.error();
    extra_filter = std::move(*scoped);
  }
  if (!extra_filter.empty()) {
    const std::string more_path = CollectionPath(scope, "/points/scroll");
    const std::string more_body = ScrollBody(extra_filter, bound + 1, payload_keys);
    auto more = co_await client_.Call("POST", more_path, more_body, deadline);
    if (!more.ok()) co_return OnIndex(scope, more.error());
    const auto* extra = PointsOf(*more);
    if (extra == nullptr) co_return NoPoints();
    if (static_cast<int64_t>(extra->size()) > bound) co_return TooManyCandidates(bound);
    take(*extra);
  }
  std::vector<Candidate> all;
  all.reserve(found.size());
  for (auto& [id, c] : found) all.push_back(std::move(c));
  auto page = co_await PageOf(scope, std::move(all), request, deadline);
  co_return page;
}

Awaitable<Result<Page>> QdrantBackend::KnnPage(Scope scope, const SearchRequest& request,
                                               Deadline deadline) {
  const Knn& knn = *request.knn;
  std::vector<std::string> extra;
  if (knn.filter) {
    auto c = ToCondition(*knn.filter, scope.tenant, scope.index);
    if (!c.ok()) co_return c.error();
    if (!c->empty()) extra.push_back(std::move(*c));
  }
  auto filter = ScopedFilter(scope, &request.query, extra);
  if (!filter.ok()) co_return filter.error();
  std::vector<std::string> keys = SortPayloadKeys(request.sort);
  if (request.source.enabled) keys.emplace_back(kSourceKey);
  const std::string answer_path = CollectionPath(scope, "/points/query");
  const std::string answer_body = NearestBody(*filter, knn.field, knn.query_vector, knn.k, keys);
  auto answer = co_await client_.Call("POST", answer_path, answer_body, deadline);
  if (!answer.ok()) co_return OnIndex(scope, answer.error());
  const auto* points = PointsOf(*answer);
  if (points == nullptr) co_return NoPoints();
  std::vector<Candidate> all;
  for (const auto& point : *points) {
    const auto* payload = PayloadOf(point);
    const auto* score = point.is_object() ? point.get_object().if_contains("score") : nullptr;
    if (payload == nullptr || score == nullptr || !score->is_number()) continue;
    Candidate c;
    c.id = std::string(PayloadString(*payload, kIdKey));
    c.score = EsScore(knn.similarity, score->to_number<double>());
    c.source = std::string(PayloadString(*payload, kSourceKey));
    c.has_source = true;
    for (const SortKey& k : request.sort) {
      if (k.kind == SortKey::Kind::kScore) {
        c.sort.emplace_back(c.score);
      } else if (k.kind == SortKey::Kind::kDoc) {
        c.sort.emplace_back(std::monostate{});
      } else {
        c.sort.push_back(SortValue(*payload, k));
      }
    }
    all.push_back(std::move(c));
  }
  auto page = co_await PageOf(scope, std::move(all), request, deadline);
  co_return page;
}

Awaitable<Result<Page>> QdrantBackend::Search(Scope scope, const SearchRequest& request,
                                              Deadline deadline) {
  if (request.knn) {
    auto page = co_await KnnPage(scope, request, deadline);
    co_return page;
  }
  bool by_score = false;
  for (const SortKey& k : request.sort) by_score = by_score || k.kind == SortKey::Kind::kScore;
  if (by_score && !ConstantScore(request.query)) {
    co_return Unsupported(
        "ranking by bool should clauses (a score that differs between documents; put them in "
        "a filter or sort by a field)");
  }
  auto filter = ScopedFilter(scope, &request.query);
  if (!filter.ok()) co_return filter.error();
  if (IsNativeOrder(request)) {
    auto page = co_await OrderedPage(scope, *filter, request, deadline);
    co_return page;
  }
  auto candidates = co_await Candidates(scope, *filter, request, deadline);
  if (!candidates.ok()) co_return candidates.error();
  auto page = co_await PageOf(scope, std::move(*candidates), request, deadline);
  co_return page;
}

Awaitable<Result<Total>> QdrantBackend::Count(Scope scope, const Query& query, const Knn* knn,
                                              int64_t up_to, Deadline deadline) {
  std::vector<std::string> extra;
  if (knn != nullptr && knn->filter) {
    auto c = ToCondition(*knn->filter, scope.tenant, scope.index);
    if (!c.ok()) co_return c.error();
    if (!c->empty()) extra.push_back(std::move(*c));
  }
  auto filter = ScopedFilter(scope, &query, extra);
  if (!filter.ok()) co_return filter.error();
  const std::string answer_path = CollectionPath(scope, "/points/count");
  const std::string answer_body = CountBody(*filter);
  auto answer = co_await client_.Call("POST", answer_path, answer_body, deadline);
  if (!answer.ok()) {
    ForgetIfMissing(scope, answer.error());  // a _count runs no Cover leg to notice it
    co_return OnIndex(scope, answer.error());
  }
  const std::optional<int64_t> count = CountOf(*answer);
  if (!count) co_return Error{ErrorCode::kUpstreamBadResponse, "qdrant: a count without count", ""};
  int64_t n = *count;
  if (knn != nullptr) n = std::min(n, knn->k);
  Total total;
  total.value = std::min(n, up_to);
  total.exact = n <= up_to;
  co_return total;
}

}  // namespace turnpike::search::qdrant
