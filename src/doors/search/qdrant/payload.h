// Reading Qdrant's answers back into the door's types: a point's payload (layout.h) to typed
// values, sort values and hits; the gateway-side order of hits. Pure functions.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "doors/search/backend.h"

namespace turnpike::search::qdrant {

// The typed values of a mapped field in a payload ({"f": {...}}); empty when missing.
std::vector<Value> FieldValuesOf(const boost::json::object& payload, std::string_view path,
                                 FieldType type);

// A string payload entry ("_id", "_src"), or "" when missing.
std::string_view PayloadString(const boost::json::object& payload, std::string_view key);

// ES's sort value of a field for one document: the smallest value ascending, the largest
// descending; monostate when the field has no value.
Value SortValue(const boost::json::object& payload, const SortKey& key);

// -1, 0, 1: ES's order of two present values of one key (numbers across int64 and double,
// false < true, strings by bytes).
int CompareValues(const Value& a, const Value& b);

// The payload keys a hit needs for `sort` (plus "_id").
std::vector<std::string> SortPayloadKeys(const std::vector<SortKey>& sort);

}  // namespace turnpike::search::qdrant
