// One index of the embedded engine in memory: documents in slots (a deleted or replaced
// document leaves a dead slot until the next Compact), the typed values of every mapped scalar
// field per slot, the dense vectors of each vector field in one contiguous float32 array (slot *
// dims), and the evaluation of a typed query (doors/search/query.h) over them: match sets, sort,
// pages, kNN, counts and aggregations. Text clauses (match, match_phrase, multi_match) are not
// evaluated here: the engine answers them from the index's FTS5 table and hands in a TextMatcher.
//
// Threads: owned and used only by the engine thread (engine.h). No I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "doors/search/backend.h"
#include "doors/search/document.h"
#include "doors/search/mapping.h"
#include "doors/search/query.h"

namespace turnpike::search::embedded {

// One field's values for every slot in one array: slot s holds [begin[s], begin[s + 1]).
// Contiguous, so a scan does not chase a pointer per document. A removed document's values
// stay until Compact (or a rebuild: a restart, a mapping change).
struct Column {
  std::vector<Value> values;
  std::vector<uint32_t> begin{0};

  std::span<const Value> operator[](size_t slot) const {
    return {values.data() + begin[slot], begin[slot + 1] - begin[slot]};
  }
  void Append(std::vector<Value>& slot_values) {
    for (Value& v : slot_values) values.push_back(std::move(v));
    begin.push_back(static_cast<uint32_t>(values.size()));
  }
};

// Scores of the documents a text clause matches, by slot (< 0 = no match): FTS5 BM25.
using TextMatcher = std::function<Result<std::vector<float>>(const Query& text_clause)>;

class Index {
 public:
  Index(int64_t id, std::string tenant, std::string name, Mapping mapping, int64_t created_ms);

  int64_t id() const { return id_; }
  const std::string& tenant() const { return tenant_; }
  const std::string& name() const { return name_; }
  const Mapping& mapping() const { return mapping_; }
  int64_t created_ms() const { return created_ms_; }
  int64_t live() const { return live_; }
  size_t slots() const { return ids_.size(); }

  // The slot of a live document, or -1.
  int64_t SlotOf(std::string_view id) const;
  int64_t RowidOf(size_t slot) const { return rowids_[slot]; }
  int64_t SlotOfRowid(int64_t rowid) const;
  const std::string& IdAt(size_t slot) const { return ids_[slot]; }
  const std::string& SourceAt(size_t slot) const { return sources_[slot]; }
  int64_t VersionAt(size_t slot) const { return versions_[slot]; }

  // Puts `doc` (extracted against mapping()) under `rowid`, replacing a live document with the
  // same id (its slot dies). Returns the new slot.
  size_t Put(Document doc, int64_t rowid, int64_t version);
  void Remove(size_t slot);
  // Drops the dead slots once they are at least kCompactMinDead and at least as many as the
  // live ones, so an index rewritten in place keeps a size bounded by its live documents
  // (at most 2 * live + kCompactMinDead slots) at amortized O(1) per write. Renumbers the
  // slots: call it between writes, never while holding a slot. True if it compacted.
  bool MaybeCompact();
  static constexpr size_t kCompactMinDead = 1024;
  // A new mapping with more fields: existing documents are re-extracted from their sources.
  void Remap(Mapping mapping);

  // Match scores by slot: < 0 = no match; >= 0 = match (the score when `query` scores).
  Result<std::vector<float>> Evaluate(const Query& query, const TextMatcher& text) const;

  Page PageOf(const SearchRequest& request, std::vector<float> scores) const;
  // Keeps the k best by vector similarity among the matches of `scores` (others become < 0),
  // scores replaced by ES's knn scores.
  void Knn(const Knn& knn, std::vector<float>& scores) const;
  Total CountOf(const std::vector<float>& scores, int64_t up_to) const;
  std::vector<AggResult> Aggregate(const std::vector<Aggregation>& aggs,
                                   const std::vector<float>& scores) const;

 private:
  // `column`: the clause's field's values by slot (null: unmapped).
  bool Leaf(const Query& q, const Column* column, size_t slot) const;
  // The request's sort keys' field positions (-1: not a field), resolved once per search.
  std::vector<int> KeyFields(const SearchRequest& r) const;
  // The value a document sorts by under `key`: min (asc) or max (desc) of its values.
  const Value* SortValue(const SortKey& key, int field, size_t slot) const;
  int Compare(const SearchRequest& r, const std::vector<int>& fields,
              const std::vector<float>& scores, size_t a, size_t b) const;
  int CompareToAfter(const SearchRequest& r, const std::vector<int>& fields,
                     const std::vector<float>& scores, size_t slot) const;
  Value HitSortValue(const SortKey& key, int field, const std::vector<float>& scores,
                     size_t slot) const;
  // A hit's _source under `filter`. A filter that excludes every vector field (the common
  // "everything but the embedding") starts from the slot's lean source, which drops them.
  std::string HitSource(const SourceFilter& filter, size_t slot) const;

  int64_t id_;
  std::string tenant_;
  std::string name_;
  Mapping mapping_;
  int64_t created_ms_;
  int64_t live_ = 0;

  std::vector<std::string> ids_;
  std::vector<std::string> sources_;
  std::vector<int64_t> versions_;
  std::vector<int64_t> rowids_;
  std::vector<uint8_t> alive_;
  std::unordered_map<std::string, size_t> slot_of_;
  std::unordered_map<int64_t, size_t> slot_of_rowid_;
  // [field][slot]: the field's values in that document (empty = missing).
  std::vector<Column> columns_;
  // [field][slot * dims]: vectors; has_vector_[field][slot].
  std::vector<std::vector<float>> vectors_;
  std::vector<std::vector<uint8_t>> has_vector_;
  std::vector<std::string> vector_paths_;  // the mapping's dense_vector fields
  // Sources without their vectors, made on a slot's first hit (a cache: the engine thread's,
  // hence mutable in const searches). Parsing a 384-d vector's JSON per hit costs more than
  // the rest of a search.
  mutable std::vector<std::string> lean_sources_;
  mutable std::vector<uint8_t> lean_ready_;
};

}  // namespace turnpike::search::embedded
