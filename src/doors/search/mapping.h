// An index's mapping: the typed fields Elasticsearch's `mappings.properties` declares, flattened
// to dotted paths ("author.name"). The door parses and validates mappings (ParseMapping), hands
// backends a validated Mapping, and uses it to type every value of a query (query.h) and of a
// document (document.h) before a backend sees them.
//
// Supported types: keyword, text, long, integer, short, byte (integers), double, float
// (floating), date (ISO-8601 and epoch_millis; stored as epoch milliseconds), boolean,
// dense_vector (dims 1..4096, similarity cosine | dot_product | l2_norm), object (only as a
// container of properties). Anything else: 400 mapper_parsing_exception.
//
// Value type, immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::search {

enum class FieldType {
  kKeyword,
  kText,
  kLong,    // long, integer, short, byte: int64 values (type_name keeps the declared name)
  kDouble,  // double, float, half_float: double values
  kDate,    // int64 epoch milliseconds
  kBoolean,
  kDenseVector,
};

enum class Similarity { kCosine, kDotProduct, kL2Norm };

inline constexpr int kMaxVectorDims = 4096;

struct FieldMapping {
  std::string path;  // dotted: "author.name"
  FieldType type = FieldType::kKeyword;
  std::string type_name;  // as declared ("integer", "short"): rendered back by GET _mapping
  int dims = 0;           // dense_vector only
  Similarity similarity = Similarity::kCosine;
  std::string format;  // date only: as declared, empty = "strict_date_optional_time||epoch_millis"
};

struct Mapping {
  std::vector<FieldMapping> fields;  // sorted by path, unique

  // The field at `path`, or nullptr if unmapped.
  const FieldMapping* Find(std::string_view path) const;
  // Its position in `fields` (backends key columns by it), or -1.
  int IndexOf(std::string_view path) const;
};

bool IsInteger(FieldType type);  // long or date: int64 values
bool IsFloating(FieldType type);
bool IsNumeric(FieldType type);  // integer or floating (not date)
// Sortable and aggregatable (keyword, numbers, dates, booleans; not text or vectors).
bool IsDocValue(FieldType type);
std::string_view SimilarityName(Similarity similarity);

// Parses an ES `mappings` object ({"properties": {...}}, "dynamic" accepted and ignored).
// Errors: 400 mapper_parsing_exception naming the field and the type.
Result<Mapping> ParseMapping(std::string_view json);
// `{"properties":{...}}` with objects nested again, as GET _mapping answers.
std::string RenderMapping(const Mapping& mapping);
// PUT _mapping: `added` may add fields; redeclaring one with another type is 400
// illegal_argument_exception.
Result<Mapping> MergeMapping(const Mapping& current, const Mapping& added);

}  // namespace turnpike::search
