// Shared by the DSL parser's files (dsl.cc: the request; dsl_query.cc: the query clauses;
// dsl_values.cc: typing values against the mapping). Not part of the door's contract.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "common/result.h"
#include "doors/search/es_error.h"
#include "doors/search/mapping.h"
#include "doors/search/query.h"

namespace turnpike::search::dsl {

namespace json = boost::json;

inline constexpr int kMaxQueryDepth = 20;  // nested bool / knn filter levels

inline Error ParseError(std::string reason) {
  return EsError(kParsingException, std::move(reason));
}
inline Error ArgError(std::string reason) { return EsError(kIllegalArgument, std::move(reason)); }

inline Query MakeQuery(QueryKind kind, std::string field = {}) {
  Query q;
  q.kind = kind;
  q.field = std::move(field);
  return q;
}

// A mapped field or a 400 naming it.
Result<const FieldMapping*> RequireField(const Mapping& mapping, std::string_view path,
                                         std::string_view what);
// `v` typed for `field` (null -> monostate when allow_null).
Result<Value> TypedValue(const json::value& v, const FieldMapping& field, bool allow_null = false);
// A JSON number or numeric string as double.
std::optional<double> NumberOf(const json::value& v);
// A non-negative integer option or a 400 naming `name`.
Result<int64_t> NonNegative(const json::value& v, std::string_view name);
// One `aggs` entry (dsl_aggs_knn.cc).
Result<Aggregation> ParseAgg(std::string_view name, const json::value& v, const Mapping& m);
// The top-level `knn` into out.knn; `size` is k's default (dsl_aggs_knn.cc).
Status ParseKnn(const json::value& v, const Mapping& m, int64_t size, int64_t now_ms,
                SearchRequest& out);
// A `bool` query's body (dsl_bool.cc).
Result<Query> ParseBool(const json::value& body, const Mapping& m, int depth, int64_t now_ms);
// The query clause `v` (an object with one key naming the query type). `now_ms`: the
// request's one instant for date math (date_math.h), threaded down from ParseSearch.
Result<Query> ParseQuery(const json::value& v, const Mapping& mapping, int depth, int64_t now_ms);

}  // namespace turnpike::search::dsl
