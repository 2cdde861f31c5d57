// The ordered side of an embedded index: sort, pages, kNN, counts and aggregations over the
// match scores Index::Evaluate produced. kNN scores with the shared exact kernels
// (common/vectors.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "common/vectors.h"
#include "doors/search/embedded/index.h"

namespace turnpike::search::embedded {
namespace {

int Cmp(const Value& a, const Value& b) { return a < b ? -1 : (b < a ? 1 : 0); }

// Missing sorts last (or first with missing_first) whatever the order.
int CompareKey(const SortKey& key, const Value* a, const Value* b) {
  const bool ma = a == nullptr || std::holds_alternative<std::monostate>(*a);
  const bool mb = b == nullptr || std::holds_alternative<std::monostate>(*b);
  if (ma || mb) {
    if (ma && mb) return 0;
    return (ma ? 1 : -1) * (key.missing_first ? -1 : 1);
  }
  const int c = Cmp(*a, *b);
  return key.descending ? -c : c;
}

double AsDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return 0;
}

}  // namespace

std::vector<int> Index::KeyFields(const SearchRequest& r) const {
  std::vector<int> fields;
  fields.reserve(r.sort.size());
  for (const SortKey& key : r.sort) {
    fields.push_back(key.kind == SortKey::Kind::kField ? mapping_.IndexOf(key.field) : -1);
  }
  return fields;
}

const Value* Index::SortValue(const SortKey& key, int f, size_t slot) const {
  if (f < 0) return nullptr;
  const std::span<const Value> values = columns_[static_cast<size_t>(f)][slot];
  if (values.empty()) return nullptr;
  return key.descending ? &*std::max_element(values.begin(), values.end())
                        : &*std::min_element(values.begin(), values.end());
}

int Index::Compare(const SearchRequest& r, const std::vector<int>& fields,
                   const std::vector<float>& scores, size_t a, size_t b) const {
  for (size_t i = 0; i < r.sort.size(); ++i) {
    const SortKey& key = r.sort[i];
    int c = 0;
    switch (key.kind) {
      case SortKey::Kind::kField:
        c = CompareKey(key, SortValue(key, fields[i], a), SortValue(key, fields[i], b));
        break;
      case SortKey::Kind::kScore:
        c = scores[a] < scores[b] ? -1 : (scores[b] < scores[a] ? 1 : 0);
        break;
      case SortKey::Kind::kDoc:
        c = a < b ? -1 : (b < a ? 1 : 0);
        break;
      case SortKey::Kind::kId:
        c = ids_[a].compare(ids_[b]);
        c = c < 0 ? -1 : (c > 0 ? 1 : 0);
        break;
    }
    if (key.kind != SortKey::Kind::kField && key.descending) c = -c;
    if (c != 0) return c;
  }
  return 0;
}

Value Index::HitSortValue(const SortKey& key, int field, const std::vector<float>& scores,
                          size_t slot) const {
  switch (key.kind) {
    case SortKey::Kind::kField: {
      const Value* v = SortValue(key, field, slot);
      return v == nullptr ? Value{} : *v;
    }
    case SortKey::Kind::kScore:
      return Value{static_cast<double>(scores[slot])};
    case SortKey::Kind::kDoc:
      return Value{static_cast<int64_t>(slot)};
    case SortKey::Kind::kId:
      return Value{ids_[slot]};
  }
  return Value{};
}

int Index::CompareToAfter(const SearchRequest& r, const std::vector<int>& fields,
                          const std::vector<float>& scores, size_t slot) const {
  for (size_t i = 0; i < r.sort.size(); ++i) {
    const SortKey& key = r.sort[i];
    const Value mine = HitSortValue(key, fields[i], scores, slot);
    int c = 0;
    if (key.kind == SortKey::Kind::kField) {
      c = CompareKey(key, &mine, &r.search_after[i]);
    } else {
      c = Cmp(key.kind == SortKey::Kind::kScore ? Value{AsDouble(mine)} : mine,
              key.kind == SortKey::Kind::kScore ? Value{AsDouble(r.search_after[i])}
                                                : r.search_after[i]);
      if (key.descending) c = -c;
    }
    if (c != 0) return c;
  }
  return 0;
}

Page Index::PageOf(const SearchRequest& r, std::vector<float> scores) const {
  Page page;
  const std::vector<int> fields = KeyFields(r);
  std::vector<size_t> candidates;
  candidates.reserve(live_);
  for (size_t s = 0; s < scores.size(); ++s) {
    if (scores[s] < 0) continue;
    if (r.scored) page.max_score = std::max<double>(page.max_score, scores[s]);
    if (!r.search_after.empty() && CompareToAfter(r, fields, scores, s) <= 0) continue;
    candidates.push_back(s);
  }
  const size_t end = std::min(candidates.size(), static_cast<size_t>(r.from + r.size));
  const auto less = [&](size_t a, size_t b) { return Compare(r, fields, scores, a, b) < 0; };
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(end),
                    candidates.end(), less);
  for (size_t i = static_cast<size_t>(r.from); i < end; ++i) {
    const size_t s = candidates[i];
    Hit hit;
    hit.id = ids_[s];
    hit.score = scores[s];
    hit.sort.reserve(r.sort.size());
    for (size_t k = 0; k < r.sort.size(); ++k) {
      hit.sort.push_back(HitSortValue(r.sort[k], fields[k], scores, s));
    }
    hit.source = HitSource(r.source, s);
    page.hits.push_back(std::move(hit));
  }
  return page;
}

std::string Index::HitSource(const SourceFilter& filter, size_t slot) const {
  if (!filter.enabled) return {};
  const bool drops_vectors =
      !vector_paths_.empty() &&
      std::all_of(vector_paths_.begin(), vector_paths_.end(), [&](const std::string& path) {
        return std::find(filter.excludes.begin(), filter.excludes.end(), path) !=
               filter.excludes.end();
      });
  if (!drops_vectors) return FilterSource(sources_[slot], filter);
  if (!lean_ready_[slot]) {
    SourceFilter lean;
    lean.excludes = vector_paths_;
    lean_sources_[slot] = FilterSource(sources_[slot], lean);
    lean_ready_[slot] = 1;
  }
  const bool only_vectors =
      filter.includes.empty() && filter.excludes.size() == vector_paths_.size();
  return only_vectors ? lean_sources_[slot] : FilterSource(lean_sources_[slot], filter);
}

void Index::Knn(const search::Knn& knn, std::vector<float>& scores) const {
  const int f = mapping_.IndexOf(knn.field);
  if (f < 0) {
    std::fill(scores.begin(), scores.end(), -1.0F);
    return;
  }
  const auto dims = static_cast<size_t>(mapping_.fields[static_cast<size_t>(f)].dims);
  const std::vector<float>& data = vectors_[static_cast<size_t>(f)];
  const std::vector<uint8_t>& has = has_vector_[static_cast<size_t>(f)];
  const float* query = knn.query_vector.data();
  const float query_norm = std::sqrt(Dot(query, query, dims));
  std::vector<size_t> matched;
  for (size_t s = 0; s < scores.size(); ++s) {
    if (scores[s] < 0 || !has[s]) {
      scores[s] = -1.0F;
      continue;
    }
    const float* doc = data.data() + s * dims;
    float score = 0;
    switch (knn.similarity) {
      case Similarity::kCosine: {
        const float norm = std::sqrt(Dot(doc, doc, dims)) * query_norm;
        score = norm == 0 ? 0.5F : (1.0F + Dot(doc, query, dims) / norm) / 2.0F;
        break;
      }
      case Similarity::kDotProduct:
        score = (1.0F + Dot(doc, query, dims)) / 2.0F;
        break;
      case Similarity::kL2Norm:
        score = 1.0F / (1.0F + SquaredDistance(doc, query, dims));
        break;
    }
    scores[s] = std::max(score, 0.0F);
    matched.push_back(s);
  }
  if (matched.size() <= static_cast<size_t>(knn.k)) return;
  const auto better = [&](size_t a, size_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : ids_[a] < ids_[b];
  };
  std::nth_element(matched.begin(), matched.begin() + knn.k - 1, matched.end(), better);
  for (auto it = matched.begin() + knn.k; it != matched.end(); ++it) scores[*it] = -1.0F;
}

Total Index::CountOf(const std::vector<float>& scores, int64_t up_to) const {
  int64_t n = 0;
  for (float s : scores) n += s >= 0 ? 1 : 0;
  if (n > up_to) return Total{up_to, false};
  return Total{n, true};
}

}  // namespace turnpike::search::embedded
