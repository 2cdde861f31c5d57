#include "doors/search/embedded/index.h"

#include <algorithm>
#include <optional>

namespace turnpike::search::embedded {
namespace {

constexpr float kNoMatch = -1.0F;

bool IsTextClause(const Query& q) {
  switch (q.kind) {
    case QueryKind::kMatch:
    case QueryKind::kMatchPhrase:
    case QueryKind::kMultiMatch:
      return true;
    case QueryKind::kTerm:
    case QueryKind::kTerms:
    case QueryKind::kPrefix:
      return q.type == FieldType::kText;
    default:
      return false;
  }
}

// Range bounds typed once per clause, so the per-document test compares plain values.
template <typename T>
struct Bounds {
  std::optional<T> lo, hi;
  bool lo_inclusive = true, hi_inclusive = true;

  explicit Bounds(const Query& q) {
    if (const T* v = std::get_if<T>(&q.gt)) lo = *v, lo_inclusive = false;
    if (const T* v = std::get_if<T>(&q.gte)) lo = *v, lo_inclusive = true;
    if (const T* v = std::get_if<T>(&q.lt)) hi = *v, hi_inclusive = false;
    if (const T* v = std::get_if<T>(&q.lte)) hi = *v, hi_inclusive = true;
  }
  bool Holds(const Value& value) const {
    const T* v = std::get_if<T>(&value);
    if (v == nullptr) return false;
    if (lo && (lo_inclusive ? *v < *lo : *v <= *lo)) return false;
    if (hi && (hi_inclusive ? *v > *hi : *v >= *hi)) return false;
    return true;
  }
};

template <typename T>
bool AnyInRange(const Bounds<T>& bounds, std::span<const Value> values) {
  for (const Value& v : values) {
    if (bounds.Holds(v)) return true;
  }
  return false;
}

// Sets out[s] = boost for the live documents with a value in the range.
template <typename T>
void RangeScan(const Query& q, const Column& column, const std::vector<uint8_t>& alive,
               std::vector<float>& out) {
  const Bounds<T> bounds(q);
  for (size_t s = 0; s < alive.size(); ++s) {
    if (alive[s] && AnyInRange(bounds, column[s])) out[s] = q.boost;
  }
}

}  // namespace

Index::Index(int64_t id, std::string tenant, std::string name, Mapping mapping, int64_t created_ms)
    : id_(id),
      tenant_(std::move(tenant)),
      name_(std::move(name)),
      mapping_(std::move(mapping)),
      created_ms_(created_ms),
      columns_(mapping_.fields.size()),
      vectors_(mapping_.fields.size()),
      has_vector_(mapping_.fields.size()) {
  for (const FieldMapping& f : mapping_.fields) {
    if (f.type == FieldType::kDenseVector) vector_paths_.push_back(f.path);
  }
}

int64_t Index::SlotOf(std::string_view id) const {
  auto it = slot_of_.find(std::string(id));
  return it == slot_of_.end() ? -1 : static_cast<int64_t>(it->second);
}

int64_t Index::SlotOfRowid(int64_t rowid) const {
  auto it = slot_of_rowid_.find(rowid);
  return it == slot_of_rowid_.end() ? -1 : static_cast<int64_t>(it->second);
}

size_t Index::Put(Document doc, int64_t rowid, int64_t version) {
  if (const int64_t old = SlotOf(doc.id); old >= 0) Remove(static_cast<size_t>(old));
  const size_t slot = ids_.size();
  slot_of_[doc.id] = slot;
  slot_of_rowid_[rowid] = slot;
  ids_.push_back(std::move(doc.id));
  sources_.push_back(std::move(doc.source));
  versions_.push_back(version);
  rowids_.push_back(rowid);
  alive_.push_back(1);
  lean_sources_.emplace_back();
  lean_ready_.push_back(0);
  ++live_;
  std::vector<Value> none;
  auto present = doc.fields.begin();  // sorted by field
  for (size_t f = 0; f < mapping_.fields.size(); ++f) {
    if (present != doc.fields.end() && static_cast<size_t>(present->field) == f) {
      columns_[f].Append(present->values);
      ++present;
    } else {
      columns_[f].Append(none);
    }
    if (mapping_.fields[f].type == FieldType::kDenseVector) {
      vectors_[f].resize(vectors_[f].size() + static_cast<size_t>(mapping_.fields[f].dims));
      has_vector_[f].push_back(0);
    }
  }
  for (const VectorValue& vv : doc.vectors) {
    const auto f = static_cast<size_t>(vv.field);
    std::copy(vv.vector.begin(), vv.vector.end(), vectors_[f].begin() + slot * vv.vector.size());
    has_vector_[f][slot] = 1;
  }
  return slot;
}

void Index::Remove(size_t slot) {
  if (!alive_[slot]) return;
  alive_[slot] = 0;
  --live_;
  slot_of_.erase(ids_[slot]);
  slot_of_rowid_.erase(rowids_[slot]);
  sources_[slot].clear();
  sources_[slot].shrink_to_fit();
  lean_sources_[slot].clear();
  lean_sources_[slot].shrink_to_fit();
  for (auto& has : has_vector_) {
    if (!has.empty()) has[slot] = 0;
  }
}

bool Index::MaybeCompact() {
  const size_t dead = ids_.size() - static_cast<size_t>(live_);
  if (dead < kCompactMinDead || dead < static_cast<size_t>(live_)) return false;
  const size_t fields = mapping_.fields.size();
  std::vector<Column> columns(fields);
  std::vector<std::vector<float>> vectors(fields);
  std::vector<std::vector<uint8_t>> has_vector(fields);
  size_t to = 0;
  for (size_t from = 0; from < ids_.size(); ++from) {
    if (!alive_[from]) continue;
    for (size_t f = 0; f < fields; ++f) {
      std::span<const Value> values = columns_[f][from];
      columns[f].values.insert(columns[f].values.end(), values.begin(), values.end());
      columns[f].begin.push_back(static_cast<uint32_t>(columns[f].values.size()));
      if (mapping_.fields[f].type == FieldType::kDenseVector) {
        const auto dims = static_cast<size_t>(mapping_.fields[f].dims);
        const auto first = vectors_[f].begin() + static_cast<std::ptrdiff_t>(from * dims);
        vectors[f].insert(vectors[f].end(), first, first + static_cast<std::ptrdiff_t>(dims));
        has_vector[f].push_back(has_vector_[f][from]);
      }
    }
    if (to != from) {
      ids_[to] = std::move(ids_[from]);
      sources_[to] = std::move(sources_[from]);
      lean_sources_[to] = std::move(lean_sources_[from]);
      lean_ready_[to] = lean_ready_[from];
      versions_[to] = versions_[from];
      rowids_[to] = rowids_[from];
      alive_[to] = 1;
    }
    slot_of_[ids_[to]] = to;
    slot_of_rowid_[rowids_[to]] = to;
    ++to;
  }
  auto trim = [to](auto& per_slot) {
    per_slot.resize(to);
    per_slot.shrink_to_fit();
  };
  trim(ids_);
  trim(sources_);
  trim(lean_sources_);
  trim(lean_ready_);
  trim(versions_);
  trim(rowids_);
  trim(alive_);
  columns_ = std::move(columns);
  vectors_ = std::move(vectors);
  has_vector_ = std::move(has_vector);
  return true;
}

void Index::Remap(Mapping mapping) {
  std::vector<Document> docs;
  for (size_t s = 0; s < ids_.size(); ++s) {
    if (!alive_[s]) continue;
    Result<Document> doc = ExtractDocument(mapping, ids_[s], sources_[s]);
    // A stored document fails a wider mapping only if an added field has values of another
    // type: it stays searchable by its old fields (ES would have refused the mapping).
    docs.push_back(doc.ok() ? std::move(*doc) : Document{ids_[s], sources_[s], {}, {}});
  }
  std::vector<int64_t> rowids, versions;
  for (size_t s = 0; s < ids_.size(); ++s) {
    if (alive_[s]) rowids.push_back(rowids_[s]), versions.push_back(versions_[s]);
  }
  *this = Index(id_, tenant_, name_, std::move(mapping), created_ms_);
  for (size_t i = 0; i < docs.size(); ++i) Put(std::move(docs[i]), rowids[i], versions[i]);
}

bool Index::Leaf(const Query& q, const Column* column, size_t slot) const {
  if (q.kind == QueryKind::kIds) {
    return std::any_of(q.values.begin(), q.values.end(),
                       [&](const Value& v) { return std::get<std::string>(v) == ids_[slot]; });
  }
  if (q.kind == QueryKind::kExists) {
    for (size_t f = 0; f < mapping_.fields.size(); ++f) {
      const std::string& path = mapping_.fields[f].path;
      const bool under = path == q.field || (path.size() > q.field.size() &&
                                             path.compare(0, q.field.size(), q.field) == 0 &&
                                             path[q.field.size()] == '.');
      if (!under) continue;
      if (!columns_[f][slot].empty()) return true;
      if (!has_vector_[f].empty() && has_vector_[f][slot]) return true;
    }
    return false;
  }
  if (column == nullptr) return false;
  const std::span<const Value> values = (*column)[slot];
  for (const Value& v : values) {
    switch (q.kind) {
      case QueryKind::kTerm:
        if (v == q.values[0]) return true;
        break;
      case QueryKind::kTerms:
        if (std::find(q.values.begin(), q.values.end(), v) != q.values.end()) return true;
        break;
      case QueryKind::kPrefix:
        if (std::get<std::string>(v).starts_with(q.text)) return true;
        break;
      default:
        return false;
    }
  }
  return false;
}

Result<std::vector<float>> Index::Evaluate(const Query& q, const TextMatcher& text) const {
  const size_t n = ids_.size();
  if (IsTextClause(q)) {
    Result<std::vector<float>> scores = text(q);
    if (!scores.ok()) return scores;
    for (float& s : *scores) {
      if (s >= 0) s *= q.boost;
    }
    return scores;
  }
  std::vector<float> out(n, kNoMatch);
  if (q.kind == QueryKind::kMatchNone) return out;
  if (q.kind != QueryKind::kBool) {
    const int f = q.field.empty() ? -1 : mapping_.IndexOf(q.field);
    const Column* column = f < 0 ? nullptr : &columns_[static_cast<size_t>(f)];
    if (q.kind == QueryKind::kRange) {
      if (column == nullptr) return out;
      if (q.type == FieldType::kLong || q.type == FieldType::kDate) {
        RangeScan<int64_t>(q, *column, alive_, out);
      } else if (q.type == FieldType::kDouble) {
        RangeScan<double>(q, *column, alive_, out);
      } else {
        RangeScan<std::string>(q, *column, alive_, out);
      }
      return out;
    }
    for (size_t s = 0; s < n; ++s) {
      if (alive_[s] && (q.kind == QueryKind::kMatchAll || Leaf(q, column, s))) out[s] = q.boost;
    }
    return out;
  }
  for (size_t s = 0; s < n; ++s) {
    if (alive_[s]) out[s] = 0;
  }
  auto apply = [&](const std::vector<Query>& clauses, auto&& combine) -> Status {
    for (const Query& clause : clauses) {
      Result<std::vector<float>> sub = Evaluate(clause, text);
      if (!sub.ok()) return sub.error();
      for (size_t s = 0; s < n; ++s) {
        if (out[s] >= 0) combine(out[s], (*sub)[s]);
      }
    }
    return Ok{};
  };
  Status st = apply(q.must, [](float& acc, float sub) { acc = sub < 0 ? kNoMatch : acc + sub; });
  if (!st.ok()) return st.error();
  st = apply(q.filter, [](float& acc, float sub) { acc = sub < 0 ? kNoMatch : acc; });
  if (!st.ok()) return st.error();
  st = apply(q.must_not, [](float& acc, float sub) { acc = sub >= 0 ? kNoMatch : acc; });
  if (!st.ok()) return st.error();
  if (!q.should.empty()) {
    std::vector<int> hits(n, 0);
    for (const Query& clause : q.should) {
      Result<std::vector<float>> sub = Evaluate(clause, text);
      if (!sub.ok()) return sub.error();
      for (size_t s = 0; s < n; ++s) {
        if (out[s] >= 0 && (*sub)[s] >= 0) {
          out[s] += (*sub)[s];
          ++hits[s];
        }
      }
    }
    for (size_t s = 0; s < n; ++s) {
      if (hits[s] < q.minimum_should_match) out[s] = kNoMatch;
    }
  }
  for (float& s : out) {
    if (s >= 0) s *= q.boost;
  }
  return out;
}

}  // namespace turnpike::search::embedded
