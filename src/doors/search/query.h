// The parsed search request: the query DSL's AST and the options around it, typed against the
// index's mapping (mapping.h) by the door's parser (dsl.h) before any backend sees it. So a
// backend never parses JSON, never meets an unmapped field where a typed one is needed, and
// gets dates as epoch milliseconds, integers as int64 and keyword/text values as strings.
//
// What the parser guarantees a backend (the invariants a backend may assert):
//   - every `field` of a term/terms/range/prefix/sort/agg is mapped, with `type` filled in;
//     match/match_phrase/multi_match name text or keyword fields; exists may name any path;
//   - values are of the field's kind: Value holds int64 for long/date, double for double,
//     bool for boolean, string for keyword/text (ids: strings);
//   - `sort` ends with {kId, asc} (Elasticsearch's `_id` tie-breaker, so paging is total);
//     `search_after`, when present, has exactly sort.size() values typed like the keys
//     (monostate = missing);
//   - knn.query_vector.size() == the field's dims; k >= 1; num_candidates >= k;
//   - from + size <= kMaxResultWindow.
// Value types, movable, no references into the request body.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "doors/search/mapping.h"

namespace turnpike::search {

inline constexpr int64_t kMaxResultWindow = 10'000;    // index.max_result_window
inline constexpr int64_t kDefaultTrackTotal = 10'000;  // track_total_hits default
inline constexpr int64_t kExactTotal = std::numeric_limits<int64_t>::max();  // true

// A typed scalar; monostate = null / missing.
using Value = std::variant<std::monostate, bool, int64_t, double, std::string>;

enum class QueryKind {
  kMatchAll,
  kMatchNone,
  kBool,
  kTerm,         // field, values[0]
  kTerms,        // field, values (any of)
  kRange,        // field, gt/gte/lt/lte
  kExists,       // field (a mapped field or an object prefix)
  kIds,          // values: strings
  kMatch,        // field, text analysed into terms, op
  kMatchPhrase,  // field, text (terms in order, adjacent)
  kMultiMatch,   // fields, text, op (best_fields: a document matches if one field matches)
  kPrefix,       // field (keyword), text = the prefix
};

enum class MatchOperator { kOr, kAnd };

struct Query {
  QueryKind kind = QueryKind::kMatchAll;
  float boost = 1.0F;

  // kBool. minimum_should_match is resolved by the parser: ES's default (1 if there are only
  // should clauses, else 0) or the request's value; a negative or percentage value resolved
  // against should.size().
  std::vector<Query> must, filter, should, must_not;
  int minimum_should_match = 0;

  // Leaves.
  std::string field;
  FieldType type = FieldType::kKeyword;  // the mapped type of `field`
  std::vector<std::string> fields;       // kMultiMatch (boosts "^2" stripped)
  std::vector<Value> values;             // kTerm (1), kTerms, kIds
  Value gt, gte, lt, lte;                // kRange; monostate = unbounded
  std::string text;                      // kMatch, kMatchPhrase, kMultiMatch, kPrefix
  MatchOperator op = MatchOperator::kOr;

  // True if the query scores (match, match_phrase, multi_match outside a filter context).
  bool Scores() const;
};

struct SortKey {
  enum class Kind { kField, kScore, kDoc, kId };
  Kind kind = Kind::kField;
  std::string field;
  FieldType type = FieldType::kKeyword;
  bool descending = false;     // _score defaults to desc, everything else asc
  bool missing_first = false;  // ES default: _last whatever the order
};

struct Knn {
  std::string field;
  Similarity similarity = Similarity::kCosine;
  std::vector<float> query_vector;
  int64_t k = 10;
  int64_t num_candidates = 10;
  std::optional<Query> filter;  // exact: the k best among the documents the filter matches
};

struct SourceFilter {
  bool enabled = true;                // _source: false
  std::vector<std::string> includes;  // patterns with '*'; empty = everything
  std::vector<std::string> excludes;
};

struct RangeSpec {
  std::string key;  // "key" or the rendered "from-to"
  std::optional<double> from, to;
};

struct Aggregation {
  enum class Kind { kTerms, kRange, kHistogram };
  std::string name;
  Kind kind = Kind::kTerms;
  std::string field;
  FieldType type = FieldType::kKeyword;
  int64_t size = 10;              // terms: buckets by doc_count desc, then key asc
  std::vector<RangeSpec> ranges;  // range: from inclusive, to exclusive
  double interval = 0;            // histogram: key = floor(value / interval) * interval
  int64_t min_doc_count = 1;      // terms and histogram (histogram ES default: 0)
};

struct SearchRequest {
  Query query;  // match_all when absent
  std::optional<Knn> knn;
  std::vector<SortKey> sort;  // resolved: default [_score desc] + _id
  int64_t from = 0;
  int64_t size = 10;
  std::vector<Value> search_after;                 // empty = first page
  int64_t track_total_up_to = kDefaultTrackTotal;  // 0 = false, kExactTotal = true
  SourceFilter source;
  std::vector<Aggregation> aggs;
  bool request_cache = true;
  bool rest_total_hits_as_int = false;
  bool scored = false;          // any sort key is _score, or knn: hits carry scores
  bool sort_requested = false;  // the body had `sort`: hits render their sort values
  // `timeout` (body or URL): bounds the search's legs; nullopt: none asked for (the door's
  // configured per-leg deadline applies). A leg that misses it gives a partial answer
  // (timed_out: true) unless allow_partial_results is false (then an error).
  std::optional<std::chrono::nanoseconds> timeout;
  bool allow_partial_results = true;  // allow_partial_search_results
};

}  // namespace turnpike::search
