// Appending JSON scalars to a string, for the request builders. Doubles are written in the
// shortest form that reads back to the same double; non-finite doubles (which JSON cannot
// hold) as null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "doors/search/query.h"

namespace turnpike::search::qdrant {

void AppendInt(std::string& out, int64_t value);
void AppendDouble(std::string& out, double value);
// A float in its own shortest form (0.1f is "0.1", not the double nearest to it).
void AppendFloat(std::string& out, float value);
// A typed value as JSON: string, integer, double, true/false, or null (monostate).
void AppendValue(std::string& out, const Value& value);
// `"key":` (quoted and escaped) followed by nothing.
void AppendKey(std::string& out, std::string_view key);

}  // namespace turnpike::search::qdrant
