// Full validation of a JSON value with simdjson On-Demand, which checks only what is visited.
//
// Stateless; the value and its document belong to the caller. Recursion is one level per
// nesting level, bounded by kMaxNesting (deeper input is DEPTH_ERROR), so the stack stays small.
#pragma once

#include <simdjson.h>

#include <cstddef>

namespace turnpike::providers::openai {

inline constexpr size_t kMaxNesting = 128;

// Visits every value under `value` (every key unescaped, every string unescaped, every number
// and literal parsed). `depth` is the nesting level of `value` (the root object is 0).
simdjson::error_code ValidateValue(simdjson::ondemand::value value, size_t depth);

}  // namespace turnpike::providers::openai
