// A document on its way into an index: its `_source` as received and the typed values of its
// mapped fields, extracted and validated by the door (ExtractDocument) so every backend stores
// the same values and a type error is the same 400 whatever the backend.
//
// Unmapped fields stay in `_source` only (dynamic mapping is not implemented: a field must be
// mapped to be searched, sorted or aggregated). Arrays give several values to one field.
//
// Value types; no references into the request body.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doors/search/mapping.h"
#include "doors/search/query.h"

namespace turnpike::search {

struct FieldValues {
  int field = -1;  // Mapping::fields index
  std::vector<Value> values;
};

struct VectorValue {
  int field = -1;             // a dense_vector field
  std::vector<float> vector;  // exactly dims floats
};

struct Document {
  std::string id;
  std::string source;               // the JSON object as received (compact or not)
  std::vector<FieldValues> fields;  // sorted by field, one entry per present field
  std::vector<VectorValue> vectors;
};

// Types `source` (a JSON object) against `mapping`. Errors: 400 mapper_parsing_exception
// ("failed to parse field [price] of type [long]"), including a vector of the wrong dimension.
Result<Document> ExtractDocument(const Mapping& mapping, std::string id, std::string source);

// `_update` with `doc`: `partial`'s top-level keys replace `current`'s (objects merged
// recursively, as ES does). Both are JSON objects; the result is compact JSON.
Result<std::string> MergeSource(std::string_view current, std::string_view partial);

// `_source` filtering of one hit's source (includes/excludes with '*' wildcards over dotted
// paths). Compact JSON out.
std::string FilterSource(std::string_view source, const SourceFilter& filter);

struct WriteOp {
  enum class Kind { kIndex, kCreate, kDelete, kUpdate };
  Kind kind = Kind::kIndex;
  Document doc;  // kIndex/kCreate: extracted; kDelete: id only; kUpdate: id + partial source
};

struct WriteResult {
  std::string id;
  enum class Outcome { kCreated, kUpdated, kDeleted, kNotFound, kNoop, kFailed } outcome;
  int64_t version = 1;
  int64_t seq_no = 0;
  Error error{ErrorCode::kInternal, {}, {}};  // kFailed: why (rendered in the bulk item)
};

}  // namespace turnpike::search
