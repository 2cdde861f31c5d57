// Small helpers the Qdrant backend's files share (qdrant_backend.cc, qdrant_search.cc,
// qdrant_aggs.cc): paths, errors, extra conditions and reading Qdrant's answers. Internal to
// this folder.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "doors/search/backend.h"

namespace turnpike::search::qdrant {

// "/collections/<collection of scope>" + rest.
std::string CollectionPath(Scope scope, std::string_view rest = {});

// A 404 of a call on a collection is ES's index_not_found_exception naming the index.
Error OnIndex(Scope scope, const Error& error);
Error NotFound(Scope scope);
// The 400 for a gateway-side sort, page or aggregation over more than `bound` documents.
Error TooManyCandidates(int64_t bound);
Error NoPoints();

// Conditions: a range on a payload key (monostate bounds left out), is_empty on a key.
std::string RangeOn(std::string_view key, const Value& gte, const Value& lte, const Value& lt = {});
std::string IsEmpty(std::string_view key);

// The points of a retrieve (array), scroll or query answer ({"points": [...]}); null if none.
const boost::json::array* PointsOf(const boost::json::value& result);
const boost::json::object* PayloadOf(const boost::json::value& point);
// A JSON integer (no exception on a non-integer: nullopt).
std::optional<int64_t> IntOf(const boost::json::value& v);
// {"count": n} -> n.
std::optional<int64_t> CountOf(const boost::json::value& result);

}  // namespace turnpike::search::qdrant
